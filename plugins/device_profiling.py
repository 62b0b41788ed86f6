"""The native tool's device profiling flags, honoured through a native pass.

``--device_profiling_mode``, ``--device_profiling_output``,
``--device_profiling_filter_*``, ``--device_profiling_counter``,
``--device_profiling_flush_interval_ms`` and ``--print_device_statistics``
are IREE runtime flags. Handed to ``iree.runtime.flags.parse_flags`` they do
nothing for the in-process Python runtime (its bindings cannot run a HAL
profiling session). So, when profiling is requested, this plugin runs the
native ``iree-benchmark-module`` once more after all measurements, with the
same modules, devices, function, inputs, batch and Google Benchmark flags and
these runtime flags unchanged: the native tool writes the bundle
(``--device_profiling_output``) and prints the statistics
(``--print_device_statistics``, forwarded to stderr) exactly as it would.
The bundle therefore covers the native tool's own run of the benchmarks
(calibration and warm-up included, as natively), not ireebench's measurement.

The flags are checked before anything runs: the combinations the native tool
rejects are rejected with one line, and a short native probe
(``--benchmark_list_tests``) starts the profiling session once so that an
unsupported mode fails before measuring.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ireebench import hookimpl
from ireebench.errors import UsageError
from ireebench.native import (
    BENCHMARK_TOOL,
    benchmark_flags,
    list_benchmarks,
    native_error_line,
    private_tempdir,
    run_tool,
    selection_args,
    session_args,
)
from ireebench.profiling import flag_value

MODE = "device_profiling_mode"
OUTPUT = "device_profiling_output"
PRINT = "print_device_statistics"


@hookimpl
def ireebench_configure(config):
    """Rejects the combinations the native tool rejects; sets up the native pass."""
    mode, output, printing = (flag_value(config, name) for name in (MODE, OUTPUT, PRINT))
    if printing and output:
        raise UsageError(f"--{PRINT} cannot be combined with --{OUTPUT}={output}")
    if output and not mode:
        raise UsageError(f"--{OUTPUT}={output}: requires --{MODE}")
    if mode and not output and not printing:
        raise UsageError(f"--{MODE}={mode}: requires --{OUTPUT}")
    if not (mode or printing):
        return
    if output and not Path(output).parent.is_dir():
        raise UsageError(f"--{OUTPUT}={output}: directory {Path(output).parent} does not exist")
    config.pm.register(DeviceProfiling(config), name="device_profiling.run")


def _without_output(args: list[str], replacement: Path | None) -> list[str]:
    """``args`` with --device_profiling_output replaced (a probe must not touch the user's file)."""
    kept = [a for a in args if not a.lstrip("-").startswith(f"{OUTPUT}=")]
    return kept + ([f"--{OUTPUT}={replacement}"] if replacement else [])


class DeviceProfiling:
    """The hooks of one run with device profiling flags (registered at configure time)."""

    def __init__(self, config):
        self.config = config
        self.mode = flag_value(config, MODE)
        self.output = flag_value(config, OUTPUT)

    def _describe(self) -> str:
        return f"--{MODE}={self.mode}" if self.mode else f"--{PRINT}"

    @hookimpl
    def ireebench_sessionstart(self, session):
        """Starts the native profiling session once, so unsupported flags fail before measuring."""
        with private_tempdir("ireebench-probe-") as scratch:
            probe_output = scratch / "probe.ireeprof" if self.output else None
            _, error = list_benchmarks(_without_output(session_args(self.config), probe_output))
        if error:
            raise UsageError(f"{self._describe()}: the native profiling session cannot "
                             f"start: {error.split('; ', 1)[-1]}")

    @hookimpl(tryfirst=True)
    def ireebench_process_outputs(self, config, session, workloads):
        """Runs the native tool with the profiling flags; forwards its statistics."""
        if not workloads:
            return
        # Exactly the benchmarks ireebench measured, with the user's Google
        # Benchmark flags (the native run's own calibration and warm-up).
        args = [*session_args(config), *selection_args(config, workloads),
                *benchmark_flags(config, user_filter=False), "--benchmark_format=json"]
        proc = run_tool(BENCHMARK_TOOL, args)
        if proc.returncode != 0:
            raise UsageError(f"{self._describe()}: the native profiling run failed: "
                             f"{native_error_line(proc.stderr, proc.returncode)}")
        if proc.stderr:
            sys.stderr.write(proc.stderr)  # --print_device_statistics and warnings
            sys.stderr.flush()
        return
