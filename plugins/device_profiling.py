"""The native tool's device profiling flags, honoured through a native pass.

``--device_profiling_*`` and ``--print_device_statistics`` are IREE runtime
flags that do nothing for the in-process Python runtime (its bindings cannot
run a HAL profiling session); so, when profiling is asked for, this plugin
runs the native ``iree-benchmark-module`` once more after all measurements
(``ireebench_measurements_finish``) with the same modules, devices, function,
inputs and flags: the bundle covers the native tool's own run, not
ireebench's measurement. The flags are checked, and a native probe starts a
profiling session once, before anything runs. It needs ``profiling_passes``;
with ``native_flags`` the native tool profiles as always and this plugin only
checks the flags. See docs/profiling.md.
"""

from __future__ import annotations

from pathlib import Path

from ireebench import StashKey, hookimpl, native
from ireebench.backend import NATIVE_FLAGS, PROFILING_PASSES, refusal
from ireebench.errors import UsageError, flag_error
from ireebench.native import BENCHMARK_TOOL
from ireebench.outfiles import register_output, written_by_tool

MODE = "device_profiling_mode"
OUTPUT = "device_profiling_output"
PRINT = "print_device_statistics"


class DeviceProfiling:
    """The device profiling flags of one in-process run (``config.stash[STATE]``)."""

    def __init__(self, mode, output):
        self.mode = mode
        self.output = output

    def describe(self) -> str:
        return f"--{MODE}={self.mode}" if self.mode else f"--{PRINT}"


STATE = StashKey[DeviceProfiling]()


@hookimpl
def ireebench_configure(config):
    """Rejects the combinations the native tool rejects; sets up the native pass."""
    mode, output, printing = (native.flag_value(config, name) for name in (MODE, OUTPUT, PRINT))
    if printing and output:
        raise UsageError(f"--{PRINT} cannot be combined with --{OUTPUT}={output}")
    if output and not mode:
        raise UsageError(f"--{OUTPUT}={output}: requires --{MODE}")
    if mode and not output and not printing:
        raise UsageError(f"--{MODE}={mode}: requires --{OUTPUT}")
    if not (mode or printing):
        return
    if output:
        register_output(config, OUTPUT, output)
    backend = config.backend
    if backend.has(PROFILING_PASSES):
        config.stash[STATE] = DeviceProfiling(mode, output)  # a native pass of its own
    elif not backend.has(NATIVE_FLAGS):  # nor does the backend's native tool see the flags
        raise flag_error(MODE if mode else PRINT, mode or "true",
                         refusal(config, PROFILING_PASSES))


def _with_output(args: list[str], replacement: Path | None) -> list[str]:
    """``args`` with --device_profiling_output replaced (or dropped)."""
    kept = [a for a in args if not a.lstrip("-").startswith(f"{OUTPUT}=")]
    return kept + ([f"--{OUTPUT}={replacement}"] if replacement else [])


@hookimpl
def ireebench_sessionstart(config, session):
    """Starts the native profiling session once, so unsupported flags fail before measuring."""
    state = config.stash.get(STATE, None)
    if state is None:
        return
    with native.private_tempdir("ireebench-probe-") as scratch:
        # A probe must not touch the user's file.
        probe_output = scratch / "probe.ireeprof" if state.output else None
        _, error = native.list_benchmarks(_with_output(native.session_args(config), probe_output))
    if error:
        raise UsageError(f"{state.describe()}: the native profiling session cannot "
                         f"start: {error.split('; ', 1)[-1]}")


@hookimpl
def ireebench_discovery_finish(config, workloads):
    """Refuses before measuring what the native profiling run cannot rerun."""
    state = config.stash.get(STATE, None)
    if state is not None and workloads:
        native.check_native(config, workloads, state.describe(), one_at_a_time=False)


@hookimpl
def ireebench_measurements_finish(config, workloads):
    """Runs the native tool with the profiling flags; forwards its statistics."""
    state = config.stash.get(STATE, None)
    if state is None or not workloads:
        return
    # Exactly the benchmarks ireebench measured, with the user's Google
    # Benchmark flags (the native run's own calibration and warm-up).
    args = [*native.session_args(config), *native.selection_args(config, workloads),
            *native.benchmark_flags(config, user_filter=False), "--benchmark_format=json"]
    if state.output:
        with written_by_tool(state.output, OUTPUT) as temporary:
            proc = _run_pass(state, _with_output(args, temporary))
    else:
        proc = _run_pass(state, args)
    if proc.stderr:
        config.stderr.write(proc.stderr)  # --print_device_statistics and warnings
        config.stderr.flush()
    return


def _run_pass(state, args):
    proc = native.run_tool(BENCHMARK_TOOL, args)
    if proc.returncode != 0:
        raise UsageError(f"{state.describe()}: the native profiling run failed: "
                         f"{native.native_error_line(proc.stderr, proc.returncode)}")
    return proc
