"""``ireebench replay FILE.ireereplay``: benchmark a replay capture.

The capture (written with ``--device_replay_output``) is timed by the native
``iree-benchmark-replay`` shipped in iree-base-runtime; its JSON report
(never its console table) becomes ireebench runs that go through the same
reporters and plugins as a module benchmark: ``--reporter`` /
``--benchmark_format``, ``--benchmark_out`` / ``--benchmark_out_format``,
the streaming hook and the report-context hook.

Flags: ``--device``, ``--replay_scope``, ``--replay_file_remap``,
``--replay_executable_substitution``, the Google Benchmark flags that shape
the measurement (``--benchmark_min_time``, ``--benchmark_repetitions``,
``--benchmark_filter``...), ``--time_unit``, ireebench's ``--reporter``,
``--plugin`` and ``-p``, and runtime flags (validated like the main
command's). Module flags (``--module``, ``--function``, ``--input``...) are
rejected: the capture already holds that work.
"""

from __future__ import annotations

from pathlib import Path

from click.core import ParameterSource

from . import hookimpl
from .errors import UsageError
from .pluginmanager import build_plugin_manager, call_hook

TOOL = "iree-benchmark-replay"
# The backend of an `ireebench replay` run (registered by parse_replay_args).
REPLAY_BACKEND = "replay"
REPLAY_GROUP = "Replay (iree-benchmark-replay)"
# Core options that make sense for a replay; every other module option is an error.
ALLOWED_CORE_OPTIONS = {"device", "time_unit"}
# Options that configure a capture, not a replay.
CAPTURE_OPTIONS = {"backend", "device_replay_output", "device_replay_file_policy",
                   "device_replay_file_validation"}

HELP = """Benchmark a HAL replay capture (.ireereplay) with iree-benchmark-replay and
report it through ireebench's reporters and plugins.

Capture one with `ireebench --module=... --device_replay_output=FILE.ireereplay`.
Every replay iteration executes the whole capture; --replay_scope=execute times
only the regions the capture marked as the benchmark's timed work.
"""


def _add_replay_options(command) -> None:
    from .cli import GroupedOption

    command.params += [
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


def _reject_capture_and_module_options(command, ctx) -> None:
    from .cli import CORE_GROUP

    for param in command.params:
        name = param.name
        if ctx.get_parameter_source(name) not in (ParameterSource.COMMANDLINE,
                                                  ParameterSource.ENVIRONMENT):
            continue
        core_only = getattr(param, "group", None) == CORE_GROUP and name not in ALLOWED_CORE_OPTIONS
        if core_only or name in CAPTURE_OPTIONS:
            raise UsageError(f"replay: --{name} cannot be used with ireebench replay "
                             "(the capture already holds the module's work)")


def parse_replay_args(argv: list[str]):
    """Returns ``(config, replay_path)``, or ``None`` when --help was printed."""
    from .cli import (
        CORE_GROUP,
        build_command,
        expand_flagfiles,
        make_context,
        prescan_plugins,
        validate_core_options,
    )
    from .config import Config

    argv = expand_flagfiles(argv)
    plugins, blocked = prescan_plugins(argv)
    pm = build_plugin_manager(plugins, blocked)
    command = build_command(pm)
    command.name = "ireebench replay"
    command.help = HELP
    command.options_metavar = "FILE.ireereplay [OPTIONS]"
    for param in command.params:
        if getattr(param, "group", None) == CORE_GROUP and param.name not in ALLOWED_CORE_OPTIONS:
            param.hidden = True
        if param.name in CAPTURE_OPTIONS:
            param.hidden = True
    _add_replay_options(command)
    ctx = make_context(command, "ireebench replay", argv)
    if ctx is None:
        return None
    _reject_capture_and_module_options(command, ctx)
    files = [arg for arg in ctx.args if not arg.startswith("-")]
    runtime_flags = [arg for arg in ctx.args if arg.startswith("-")]
    if len(files) != 1:
        raise UsageError("replay: expected one replay file: ireebench replay FILE.ireereplay "
                         f"[flags] (got {len(files)}: {' '.join(files) or 'none'})")
    path = files[0]
    if not Path(path).exists():
        raise UsageError(f"replay: {path}: file not found")
    if not Path(path).is_file():
        raise UsageError(f"replay: {path}: not a file")
    if Path(path).stat().st_size == 0:
        raise UsageError(f"replay: {path}: file is empty")
    config = Config(pm, dict(ctx.params), runtime_flags, list(argv))
    config.replay_file = path
    # runner.run_config runs the replay like any backend (hub, reporters, errors).
    config.options["backend"] = REPLAY_BACKEND
    pm.register(ReplayBackend(), name="replay_backend")
    validate_core_options(config)
    call_hook(pm, "ireebench_configure", config=config)
    return config, path


def replay_tool_args(config, path: str) -> list[str]:
    """iree-benchmark-replay flags for this replay (the file last)."""
    from .native import benchmark_flags
    from .session import device_uris

    args = [f"--device={d}" for d in device_uris(config)]
    if config.getoption("replay_scope"):
        args.append(f"--replay_scope={config.getoption('replay_scope')}")
    args += [f"--replay_file_remap={v}" for v in config.getoption("replay_file_remap") or []]
    args += [f"--replay_executable_substitution={v}"
             for v in config.getoption("replay_executable_substitution") or []]
    args += list(config.runtime_flags)
    return args + benchmark_flags(config) + [path]


def replay_backend(config, hub) -> int:
    """Runs iree-benchmark-replay on ``config.replay_file``; reports its JSON through ``hub``."""
    from .native import run_benchmark_backend
    from .runner import parse_runtime_flags, with_sessionfinish
    from .session import file_sha256

    parse_runtime_flags(config)
    path = config.replay_file

    def body() -> int:
        exit_code, _ = run_benchmark_backend(
            config, hub, TOOL, replay_tool_args(config, path), what=f"replay: {path}",
            context_extra={"iree_replay_file": str(Path(path).resolve()),
                           "iree_replay_sha256": file_sha256(path),
                           "iree_replay_scope": config.getoption("replay_scope") or ""})
        return exit_code

    return with_sessionfinish(config, body)


class ReplayBackend:
    """Provides the replay backend to the plugin manager of an ``ireebench replay`` run."""

    @hookimpl
    def ireebench_backends(self):
        """The ``replay`` backend (only in ``ireebench replay``)."""
        return {REPLAY_BACKEND: replay_backend}


def execute_replay(argv: list[str], stdout=None, stderr=None):
    """Parses ``ireebench replay`` flags and runs; returns a :class:`RunResult`."""
    from .results import RunResult
    from .runner import run_config

    parsed = parse_replay_args(argv)
    if parsed is None:
        return RunResult(0, [])
    config, _ = parsed
    return run_config(config, stdout, stderr)
