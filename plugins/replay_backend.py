"""``ireebench replay FILE.ireereplay``: the subcommand and the ``replay`` backend.

The capture (written with ``--device_replay_output``) is timed by the native
``iree-benchmark-replay`` shipped in iree-base-runtime; its JSON report
(never its console table) becomes ireebench runs that go through the same
reporters and plugins as a module benchmark (see
:mod:`ireebench.native.backend`).

This plugin owns the subcommand (``ireebench_register_commands``): its
command line is the main command's with the replay flags added, parsed
into a :class:`Config` that selects this backend and sets the
``replay_file`` option. Flags: ``--device``, ``--replay_scope``,
``--replay_file_remap``, ``--replay_executable_substitution``, the Google
Benchmark flags that shape the measurement (``--benchmark_min_time``,
``--benchmark_repetitions``, ``--benchmark_filter``...), ``--time_unit``,
ireebench's ``--reporter``, ``--plugin`` and ``-p``, and runtime flags
(validated like the main command's). Module flags (``--module``,
``--function``, ``--input``...) and every plugin option marked
``module_run`` are rejected: the capture already holds that work.
"""

from __future__ import annotations

import functools
import os
import stat
from pathlib import Path

from click.core import ParameterSource
from ireebench import hookimpl, native
from ireebench.backend import (
    NATIVE_ENVIRONMENT,
    NATIVE_FLAGS,
    REPETITION_SAMPLES,
    Backend,
    file_sha256,
)
from ireebench.commands import (
    CORE,
    CORE_GROUP,
    IREEBENCH_GROUP,
    ArgvCommand,
    GroupedOption,
    build_command,
    configure,
    make_context,
    option_specs,
)
from ireebench.config import Config
from ireebench.devices import device_uris
from ireebench.errors import UsageError
from ireebench.native import REPLAY_TOOL
from ireebench.results import RunResult

REPLAY_BACKEND = "replay"
REPLAY_GROUP = "Replay (iree-benchmark-replay)"
# Core options that make sense for a replay; every other module option is an error.
ALLOWED_CORE_OPTIONS = {"device", "time_unit"}
HIDDEN_IREEBENCH_OPTIONS = {"backend"}

HELP = """Benchmark a HAL replay capture (.ireereplay) with iree-benchmark-replay and
report it through ireebench's reporters and plugins.

Capture one with `ireebench --module=... --device_replay_output=FILE.ireereplay`.
Every replay iteration executes the whole capture; --replay_scope=execute times
only the regions the capture marked as the benchmark's timed work.
"""


def _replay_options() -> list[GroupedOption]:
    return [
        GroupedOption(("--replay_scope", "replay_scope"), default="", group=REPLAY_GROUP,
                      metavar="NAME",
                      help="Time only the regions inside matching scope markers (execute)."),
        GroupedOption(("--replay_file_remap", "replay_file_remap"), multiple=True,
                      group=REPLAY_GROUP, metavar="CAPTURED_PREFIX=REPLAY_PREFIX",
                      help="Remap referenced external file paths; repeatable."),
        GroupedOption(("--replay_executable_substitution", "replay_executable_substitution"),
                      multiple=True, group=REPLAY_GROUP, metavar="ID[@FORMAT]=PATH",
                      help="Replace a captured executable (or all=PATH); repeatable."),
    ]


def _module_only(param) -> bool:
    """An option of the main command that a replay cannot use."""
    group = getattr(param, "group", None)
    owner = getattr(param, "plugin", CORE)
    if group == REPLAY_GROUP:
        return False
    if owner == CORE:
        return (group == CORE_GROUP and param.name not in ALLOWED_CORE_OPTIONS) or \
            (group == IREEBENCH_GROUP and param.name in HIDDEN_IREEBENCH_OPTIONS)
    # A plugin marks the options that configure a module run (outputs,
    # profiling, capture, in-process statistics); others (a sink's) stay.
    return getattr(param, "module_run", False)


def _reject_module_options(command, ctx) -> None:
    for param in command.params:
        if not _module_only(param):
            continue
        if ctx.get_parameter_source(param.name) in (ParameterSource.COMMANDLINE,
                                                    ParameterSource.ENVIRONMENT):
            raise UsageError(f"replay: --{param.name} cannot be used with ireebench replay "
                             "(the capture already holds the module's work)")


def check_replay_file(path: str) -> None:
    try:
        info = os.stat(path)
    except OSError:
        raise UsageError(f"replay: {path}: file not found") from None
    if not stat.S_ISREG(info.st_mode):
        raise UsageError(f"replay: {path}: not a file")
    if info.st_size == 0:
        raise UsageError(f"replay: {path}: file is empty")


def parse_replay_args(argv: list[str], invocation) -> Config | None:
    """The :class:`Config` of an ``ireebench replay`` run, or None when --help was printed."""
    pm = invocation.pm
    command = build_command(pm, name="ireebench replay", help=HELP)
    command.options_metavar = "FILE.ireereplay [OPTIONS]"
    for param in command.params:
        if _module_only(param):
            param.hidden = True
    command.params += _replay_options()
    ctx = make_context(command, "ireebench replay", argv, invocation)
    if ctx is None:
        return None
    _reject_module_options(command, ctx)
    files = [arg for arg in ctx.args if not arg.startswith("-")]
    runtime_flags = [arg for arg in ctx.args if arg.startswith("-")]
    if len(files) != 1:
        raise UsageError("replay: expected one replay file: ireebench replay FILE.ireereplay "
                         f"[flags] (got {len(files)}: {' '.join(files) or 'none'})")
    check_replay_file(files[0])
    options = dict(ctx.params)
    options["replay_file"] = files[0]
    options["backend"] = REPLAY_BACKEND
    config = Config(pm, options, runtime_flags, list(argv), invocation.stdout,
                    invocation.stderr, option_specs(command))
    return configure(config, invocation.selection)


def replay_tool_args(config, path: str) -> list[str]:
    """iree-benchmark-replay flags for this replay (the file last, no filter)."""
    args = [f"--device={d}" for d in device_uris(config)]
    if config.getoption("replay_scope"):
        args.append(f"--replay_scope={config.getoption('replay_scope')}")
    args += [f"--replay_file_remap={v}" for v in config.getoption("replay_file_remap") or []]
    args += [f"--replay_executable_substitution={v}"
             for v in config.getoption("replay_executable_substitution") or []]
    args += list(config.runtime_flags)
    return args + native.benchmark_flags(config, user_filter=False) + [path]


def run_replay(config, hub) -> int:
    """Runs iree-benchmark-replay on the ``replay_file``; reports its JSON through ``hub``."""
    path = config.getoption("replay_file")
    if not path:
        raise UsageError("--backend=replay: benchmark a capture with "
                         "`ireebench replay FILE.ireereplay`")
    tool_run = native.NativeRun(
        config, REPLAY_TOOL, replay_tool_args(config, path), what=f"replay: {path}",
        user_filter=config.getoption("benchmark_filter"),
        context_extra={"iree_replay_file": str(Path(path).resolve()),
                       # Hashed once the tool has accepted the capture (lazy).
                       "iree_replay_sha256": functools.partial(file_sha256, path),
                       "iree_replay_scope": config.getoption("replay_scope") or ""})
    return tool_run.run(hub)


@hookimpl
def ireebench_backends(config):
    """Provides the ``replay`` backend (selected by ``ireebench replay``)."""
    return [Backend(REPLAY_BACKEND, run_replay,
                    {REPETITION_SAMPLES, NATIVE_FLAGS, NATIVE_ENVIRONMENT},
                    "iree-benchmark-replay times a capture (ireebench replay FILE)")]


def replay_main(argv: list[str], invocation) -> Config | RunResult:
    """``ireebench replay FILE.ireereplay [flags]``: the replay's run, which the core
    runs (or nothing after ``--help``)."""
    config = parse_replay_args(argv, invocation)
    return RunResult(0, []) if config is None else config


@hookimpl
def ireebench_register_commands(cli):
    """Registers ``ireebench replay``."""
    cli.add_command(ArgvCommand("replay", replay_main, help=HELP,
                                short_help="Benchmark a HAL replay capture (.ireereplay)."))
