"""Replay capture: ``--device_replay_output=FILE.ireereplay``.

The Python bindings have no HAL replay recorder, so the capture is a native
pass: after measurement (``ireebench_measurements_finish``, through the
``ireebench_replay_capture`` hook, first result wins, this plugin's own last)
iree-benchmark-module runs once more with the run's modules, devices,
function, inputs and batch flags and ``--device_replay_output``; with an
iteration count the run's Google Benchmark flags unchanged, with a time one
iteration (a native run would record an unbounded number). The capture is
written next to the target and renamed into place when complete. See
docs/replay.md.
"""

from __future__ import annotations

import os
from pathlib import Path

from ireebench import hookimpl, hookspec, native
from ireebench.backend import MEASURED_WORKLOADS
from ireebench.commands import command_stdout
from ireebench.errors import UsageError
from ireebench.hookcall import call_hook
from ireebench.lib.gbench_json import split_benchmark_json
from ireebench.native import BENCHMARK_TOOL
from ireebench.outfiles import is_special_file, register_output, written_by_tool

GROUP = "Replay capture"
FILE_POLICIES = ("reference", "capture-ranges", "capture-all", "fail")
FILE_VALIDATIONS = ("identity", "digest")

AGENTS_MD = """\
# ireebench replay capture

ireebench can record the HAL work of its benchmarks into a `.ireereplay`
file and benchmark that file later, without the module, its inputs or the
Python runtime.

## Capture

    ireebench --module=model.vmfb --device=local-task --function=main \\
        --input=1x224x224x3xf32=0 --benchmark_min_time=20x \\
        --device_replay_output=/tmp/model.ireereplay

- The timed run is ireebench's own (in-process). The capture is a separate,
  untimed native pass: `iree-benchmark-module` from iree-base-runtime runs
  with the same `--module`, `--device`, `--parameters`, `--function`,
  `--input`, `--batch_size`, `--batch_concurrency` and `--time_unit`, plus
  the runtime flags you gave (profiling flags excluded).
- Iterations recorded: with `--benchmark_min_time=Nx` the pass uses your
  Google Benchmark flags unchanged (N iterations per repetition, warm-up
  included); with a time such as the default `0.5s` it records a single
  iteration (`1x`, one repetition, no warm-up).
- Synchronous and dispatch benchmarks get an `execute` replay scope around
  each iteration's invocations; asynchronous ones around the timed interval,
  with batch setup and cleanup outside it.
- The file is written next to the target and renamed into place when the
  pass ends: it is complete when ireebench exits, also when a benchmark
  failed; a failed capture pass is one `ireebench: error:` line, exit 1.
- `--device_replay_file_policy=reference|capture-ranges|capture-all|fail`
  (default `reference`) decides how fd-backed files such as parameter
  archives are recorded: by path, the ranges the run read, every byte, or
  refuse them. `--device_replay_file_validation=identity|digest` (default
  `identity`) validates referenced files cheaply (size, inode, mtime) or by
  content; use `digest` only if the files will be copied to another
  filesystem before replay. Both need `--device_replay_output`.
- With `--backend=native` the capture is the same separate pass.

## Replay

    ireebench replay /tmp/model.ireereplay --device=local-task \\
        --replay_scope=execute --benchmark_min_time=20x --benchmark_out=replay.json

- Runs `iree-benchmark-replay` and reports through ireebench's reporters and
  plugins (`--reporter`, `--benchmark_format`, `--benchmark_out`,
  `--benchmark_out_format`, streaming hook). Every replay iteration executes
  the whole captured stream; `--replay_scope=execute` times only the
  recorded `execute` regions (all of them: a capture of N iterations reports
  the time of N benchmark iterations per replay iteration).
- `--replay_file_remap=OLD=NEW` and `--replay_executable_substitution=...`
  are passed to the native tool; `--time_unit=ns|us|ms` sets the unit.
- Inspect a capture with `iree-dump-replay FILE` (look for
  `name="execute"` scopes) and run it once with `iree-run-replay FILE`.
  `iree-run-replay --agents_md` prints the native replay playbook.
"""


def _print_agents_md(ctx, param, value):
    """Eager --agents_md: print the guidance and stop before anything else runs."""
    if not value or ctx.resilient_parsing:
        return value
    command_stdout(ctx).write(AGENTS_MD)
    ctx.exit(0)


class ReplayCaptureHooks:
    """Declared through ``ireebench_addhooks``: only this plugin calls it."""

    @staticmethod
    @hookspec(firstresult=True)
    def ireebench_replay_capture(config, workloads):
        """Capture the HAL work of the workloads into a replay file.

        Called once by this plugin after measurement when
        ``--device_replay_output`` is set. The first non-``None`` result wins;
        the built-in implementation (a native ``iree-benchmark-module`` pass)
        runs last.

        :param config: the run's :class:`Config`.
        :param workloads: the list of :class:`Workload` that were benchmarked.
        :return: the path of the written capture, or ``None``.
        """


@hookimpl
def ireebench_addhooks(pluginmanager):
    """Declares ``ireebench_replay_capture``."""
    pluginmanager.add_hookspecs(ReplayCaptureHooks)


@hookimpl
def ireebench_addoption(parser):
    """Adds the capture flags of iree-benchmark-module and --agents_md."""
    parser.addoption(
        "--device_replay_output", "device_replay_output", default="", group=GROUP,
        metavar="FILE.ireereplay",
        help="Record the HAL work of the benchmarks into a replay file (a native pass).",
        module_run=True, requires=MEASURED_WORKLOADS)
    parser.addoption(
        "--device_replay_file_policy", "device_replay_file_policy", default=None,
        group=GROUP, metavar="|".join(FILE_POLICIES),
        help="How fd-backed files (parameter archives) are captured (default reference).",
        module_run=True, requires=MEASURED_WORKLOADS)
    parser.addoption(
        "--device_replay_file_validation", "device_replay_file_validation", default=None,
        group=GROUP, metavar="|".join(FILE_VALIDATIONS),
        help="Validation of referenced files at replay time (default identity).", module_run=True,
        requires=MEASURED_WORKLOADS)
    parser.addoption(
        "--agents_md", "agents_md", type=bool, group=GROUP, is_eager=True,
        expose_value=True, callback=_print_agents_md,
        help="Print AGENTS.md guidance for ireebench's replay capture and exit.", module_run=True)


def _check_choice(flag: str, value, choices) -> None:
    if value is not None and value not in choices:
        raise UsageError(f"--{flag}={value}: expected one of {', '.join(choices)}")


def _check_output_path(config, output: str) -> None:
    if output == "-":
        raise UsageError(f"--device_replay_output={output}: a replay capture must be "
                         "written to a file")
    # Never over the module, --benchmark_out or any file of the run (RunFiles).
    register_output(config, "device_replay_output", output)


@hookimpl
def ireebench_configure(config):
    """Rejects bad capture flags before anything runs."""
    policy = config.getoption("device_replay_file_policy")
    validation = config.getoption("device_replay_file_validation")
    _check_choice("device_replay_file_policy", policy, FILE_POLICIES)
    _check_choice("device_replay_file_validation", validation, FILE_VALIDATIONS)
    output = config.getoption("device_replay_output")
    if not output:
        for flag, value in (("device_replay_file_policy", policy),
                            ("device_replay_file_validation", validation)):
            if value is not None:
                raise UsageError(f"--{flag}={value}: needs --device_replay_output")
        return
    _check_output_path(config, output)


def capture_benchmark_flags(config) -> list[str]:
    """Google Benchmark flags of the capture pass (see the module docstring)."""
    if config.getoption("benchmark_dry_run"):
        return ["--benchmark_dry_run=true"]
    if config.min_time.iterations is None:
        return ["--benchmark_min_time=1x", "--benchmark_repetitions=1"]
    args = [f"--benchmark_min_time={config.min_time.iterations}x",
            f"--benchmark_repetitions={config.getoption('benchmark_repetitions')}"]
    if config.min_warmup_time:
        args.append(f"--benchmark_min_warmup_time={config.min_warmup_time!r}")
    return args


def capture_args(config, workloads, path: str) -> list[str]:
    """iree-benchmark-module flags that capture ``workloads`` into ``path``.

    One pass for all workloads; without ``--function`` the native tool
    discovers the functions itself and the filter keeps exactly those
    ireebench benchmarked. The user's profiling and capture flags are left
    to their own native run: this pass must not write their outputs again.
    """
    args = [*native.session_args(config, user_pass_flags=False),
            *native.selection_args(config, workloads), *capture_benchmark_flags(config),
            f"--device_replay_output={path}"]
    policy = config.getoption("device_replay_file_policy")
    if policy:
        args.append(f"--device_replay_file_policy={policy}")
    validation = config.getoption("device_replay_file_validation")
    if validation:
        args.append(f"--device_replay_file_validation={validation}")
    return args + ["--benchmark_format=json"]


@hookimpl
def ireebench_generate_points(config, points):
    """A capture is of one configuration: a sweep or suite is refused before it runs."""
    output = config.getoption("device_replay_output")
    if output and (len(points) != 1 or points[0].params or points[0].name_prefix):
        raise UsageError(f"--device_replay_output={output}: captures one configuration; "
                         f"this run has {len(points)} points (a sweep or suite)")


@hookimpl
def ireebench_discovery_finish(config, workloads):
    """Refuses before measuring what the native capture pass cannot rerun."""
    output = config.getoption("device_replay_output")
    if output and workloads:
        native.check_native(config, workloads, f"--device_replay_output={output}",
                            one_at_a_time=False)


@hookimpl
def ireebench_measurements_finish(config, workloads):
    """Writes the capture of ``--device_replay_output`` (``ireebench_replay_capture``)."""
    output = config.getoption("device_replay_output")
    if not output:
        return
    if not workloads:
        config.stderr.write(f"ireebench: --device_replay_output={output}: "
                            "no benchmark ran, nothing captured\n")
        return
    call_hook(config.pm, "ireebench_replay_capture", config=config, workloads=workloads)
    return


@hookimpl(trylast=True)
def ireebench_replay_capture(config, workloads):
    """Captures the benchmarked workloads with a native iree-benchmark-module pass."""
    output = config.getoption("device_replay_output")
    with written_by_tool(output, "device_replay_output") as temporary:
        proc = native.run_tool(BENCHMARK_TOOL, capture_args(config, workloads, str(temporary)))
        report, _ = split_benchmark_json(proc.stdout)
        # A benchmark that failed still leaves a complete capture (the native
        # tool closes the recorder); no report or no file means the pass failed.
        empty = not is_special_file(temporary) and os.path.getsize(temporary) == 0
        if report is None or empty:
            raise UsageError(f"--device_replay_output={output}: the capture pass failed: "
                             f"{native.native_error_line(proc.stderr, proc.returncode)}")
    captured = {entry.get("run_name") for entry in report["benchmarks"]}
    missing = [w.run_name for w in workloads if w.run_name not in captured]
    if missing:
        config.stderr.write(f"ireebench: warning: --device_replay_output={output}: the "
                            f"native capture pass did not run {', '.join(missing)}\n")
    return str(Path(output))
