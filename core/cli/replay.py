"""``ireebench replay FILE.ireereplay``: benchmark a replay capture.

The capture (written with ``--device_replay_output``) is timed by the
``replay`` backend (``ireebench.plugins.replay_backend``: the native
``iree-benchmark-replay``); this module only parses the subcommand's
command line into a :class:`Config` that selects that backend, so the run
goes through the same core, reporters and plugins as a module benchmark.

Flags: ``--device``, ``--replay_scope``, ``--replay_file_remap``,
``--replay_executable_substitution``, the Google Benchmark flags that shape
the measurement (``--benchmark_min_time``, ``--benchmark_repetitions``,
``--benchmark_filter``...), ``--time_unit``, ireebench's ``--reporter``,
``--plugin`` and ``-p``, and runtime flags (validated like the main
command's). Module flags (``--module``, ``--function``, ``--input``...) and
every plugin option of the main command are rejected: the capture already
holds that work.
"""

from __future__ import annotations

import os
import stat

from click.core import ParameterSource

from ..config import Config
from ..errors import UsageError
from .command import build_command, configure, load_plugins, make_context
from .options import (
    CORE,
    CORE_GROUP,
    IREEBENCH_GROUP,
    GroupedOption,
    Streams,
)

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


def parse_replay_args(argv: list[str], stdout, stderr, plugins=()) -> Config | None:
    """The :class:`Config` of an ``ireebench replay`` run, or None when --help was printed."""
    argv, selection, pm = load_plugins(argv, stderr, plugins)
    command = build_command(pm, name="ireebench replay", help=HELP)
    command.options_metavar = "FILE.ireereplay [OPTIONS]"
    for param in command.params:
        if _module_only(param):
            param.hidden = True
    command.params += _replay_options()
    ctx = make_context(command, "ireebench replay", argv, Streams(stdout, stderr, pm))
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
    config = Config(pm, options, runtime_flags, list(argv), stdout, stderr)
    return configure(config, selection)
