"""The command line: iree-benchmark-module's flags, Google Benchmark's, and ours.

Flags are spelled exactly as the native tool spells them (``--batch_size=4``,
``--benchmark_min_time=20x``). Boolean flags accept ``--flag``,
``--flag=true`` and ``--flag=false``. Flags ireebench does not own (the
runtime's ``--task_topology_*``, driver flags, ``--device_profiling_*``...)
are handed to ``iree.runtime.flags.parse_flags`` and to the native passes.

Every user error exits 1 with one ``ireebench: error: ...`` line on stderr.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import click

from .errors import Terminated, UsageError, one_line
from .pluginmanager import build_plugin_manager, call_hook

CORE_GROUP = "Module, function and inputs (iree-benchmark-module)"
BENCHMARK_GROUP = "Measurement and output (Google Benchmark)"
IREEBENCH_GROUP = "ireebench"


class BoolFlag(click.ParamType):
    name = "bool"

    def convert(self, value, param, ctx):
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("1", "true", "yes", "on", ""):
            return True
        if text in ("0", "false", "no", "off"):
            return False
        self.fail(f"{value!r} is not true or false", param, ctx)


BOOL = BoolFlag()


class GroupedOption(click.Option):
    """An option that knows the --help section it belongs to."""

    def __init__(self, *args, group: str = IREEBENCH_GROUP, **kwargs):
        super().__init__(*args, **kwargs)
        self.group = group


class GroupedCommand(click.Command):
    def format_options(self, ctx, formatter):
        sections: dict[str, list] = {}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            sections.setdefault(getattr(param, "group", IREEBENCH_GROUP), []).append(record)
        for title, records in sections.items():
            with formatter.section(title):
                formatter.write_dl(records)
        with formatter.section("Runtime flags"):
            formatter.write_text(
                "Flags not listed here (--task_topology_*, driver flags such as "
                "--cuda_use_streams, --expected_f32_threshold ...) are passed to the IREE "
                "runtime as the native tool would parse them, and to the native passes "
                "(--device_profiling_* and --print_device_statistics run one; see "
                "docs/profiling.md)."
            )


class OptionParser:
    """What ``ireebench_addoption`` receives: adds options to the command."""

    def __init__(self):
        self.options: list[click.Option] = []

    def addoption(self, *decls, group: str = IREEBENCH_GROUP, **attrs) -> None:
        """Adds ``--name``; keyword arguments are those of click.Option.

        ``type=bool`` (or ``is_flag=True``) gives a native-style boolean flag
        that accepts ``--name``, ``--name=true`` and ``--name=false``.
        """
        if attrs.pop("is_flag", False) or attrs.get("type") is bool:
            attrs["type"] = BOOL
            attrs.setdefault("default", False)
            attrs.setdefault("is_flag", False)
            attrs.setdefault("flag_value", "true")
        self.options.append(GroupedOption(decls, group=group, **attrs))


def _bool(parser, name, help, group=CORE_GROUP, envvar=None):
    parser.addoption(f"--{name}", name, type=bool, help=help, group=group, envvar=envvar,
                     show_envvar=bool(envvar))


def add_core_options(parser: OptionParser) -> None:
    add = parser.addoption
    g = CORE_GROUP
    add("--module", "module", multiple=True, group=g, metavar="FILE",
        help="Module (.vmfb) to load; repeatable, the last one is benchmarked; - reads stdin.")
    add("--device", "device", multiple=True, group=g, metavar="URI",
        help="HAL device (local-task, local-sync, cuda, cuda://0 ...); repeatable.")
    add("--function", "function", default="", group=g, metavar="NAME",
        help="Benchmark only this exported function, with the --input values.")
    add("--input", "input", multiple=True, group=g, metavar="VALUE",
        help="An input: 2x2xi32=1 2 3 4, 42, @file.npy, 4xf32=@file.bin ...; repeatable.")
    add("--parameters", "parameters", multiple=True, group=g, metavar="[SCOPE=]FILE",
        help="Parameter archive (.irpa, .gguf, .safetensors) to provide; repeatable.")
    add("--batch_size", "batch_size", type=int, default=1, group=g,
        help="Invocations per iteration (dispatch benchmarks: the compiled repeat count).")
    add("--batch_concurrency", "batch_concurrency", type=int, default=1, group=g,
        help="Invocations within a batch that run concurrently (async functions).")
    add("--time_unit", "time_unit", default=None, group=g, metavar="ns|us|ms",
        help="Time unit of the results (default ms; us for dispatch benchmarks).")
    _bool(parser, "print_statistics", "Print allocator statistics per device to stderr at exit.")
    _bool(parser, "enable_output_processing",
          "Keep the outputs of the last measured invocation and print or check them.")
    add("--output", "output", multiple=True, group=g, metavar="SPEC",
        help="Where an output goes: -, @file.npy, +file.npy, @file.bin, +file.bin.")
    add("--expected_output", "expected_output", multiple=True, group=g, metavar="VALUE",
        help="Expected output, in the --input format; (ignored) skips one.")
    add("--output_max_element_count", "output_max_element_count", type=int, default=1024,
        group=g, help="Print at most this many elements of an output tensor.")

    b = BENCHMARK_GROUP
    env = lambda name: name.upper()
    add("--benchmark_min_time", "benchmark_min_time", default="0.5s", group=b,
        envvar=env("benchmark_min_time"), metavar="<float>s|<int>x",
        help="Minimum time per benchmark (0.5s) or a fixed iteration count (20x).")
    add("--benchmark_min_warmup_time", "benchmark_min_warmup_time", default="0", group=b,
        envvar=env("benchmark_min_warmup_time"), metavar="SECONDS",
        help="Warm-up time before the first repetition (not reported).")
    add("--benchmark_repetitions", "benchmark_repetitions", type=int, default=1, group=b,
        envvar=env("benchmark_repetitions"), help="Repetitions; 2+ adds mean/median/stddev/cv.")
    add("--benchmark_filter", "benchmark_filter", default="", group=b,
        envvar=env("benchmark_filter"), metavar="REGEX",
        help="Run only benchmarks whose name matches (a leading - negates).")
    _bool(parser, "benchmark_list_tests", "List the benchmark names and exit.", b,
          env("benchmark_list_tests"))
    _bool(parser, "benchmark_report_aggregates_only",
          "Report only aggregates (display and file).", b,
          env("benchmark_report_aggregates_only"))
    _bool(parser, "benchmark_display_aggregates_only",
          "Display only aggregates (the file keeps every run).", b,
          env("benchmark_display_aggregates_only"))
    add("--benchmark_format", "benchmark_format", default="console", group=b,
        envvar=env("benchmark_format"), metavar="console|json|csv",
        help="Format of the display (stdout) report.")
    add("--benchmark_out", "benchmark_out", default="", group=b, envvar=env("benchmark_out"),
        metavar="FILE", help="Also write the report to FILE (atomically).")
    add("--benchmark_out_format", "benchmark_out_format", default="json", group=b,
        envvar=env("benchmark_out_format"), metavar="json|csv|console",
        help="Format of --benchmark_out.")
    _bool(parser, "benchmark_counters_tabular", "Print counters as columns on the console.",
          b, env("benchmark_counters_tabular"))
    add("--benchmark_context", "benchmark_context", multiple=True, group=b,
        envvar=env("benchmark_context"), metavar="KEY=VALUE,...",
        help="Extra key=value entries for the report context.")
    add("--benchmark_color", "benchmark_color", default="auto", group=b,
        envvar=env("benchmark_color"), help="Accepted for compatibility; output is not colored.")
    add("--benchmark_time_unit", "benchmark_time_unit", default="", group=b,
        envvar=env("benchmark_time_unit"),
        help="Accepted for compatibility; use --time_unit (the native tool sets units itself).")
    _bool(parser, "benchmark_dry_run", "Run each benchmark once (1 iteration, 1 repetition).",
          b, env("benchmark_dry_run"))
    _bool(parser, "benchmark_enable_random_interleaving",
          "Accepted for compatibility; the runtime backend runs benchmarks in order "
          "(--backend=native forwards it).", b,
          env("benchmark_enable_random_interleaving"))
    add("--v", "v", default="0", group=b, help="Accepted for compatibility (verbosity).")

    i = IREEBENCH_GROUP
    add("--reporter", "reporter", default=None, group=i, metavar="NAME",
        help="Display reporter (console, json, csv, or one a plugin adds); "
             "overrides --benchmark_format.")
    add("--plugin", "plugin", multiple=True, group=i, metavar="MODULE|FILE.py",
        help="Load a plugin module or file; repeatable.")
    add("-p", "block", multiple=True, group=i, metavar="no:NAME",
        help="-p no:NAME blocks the plugin NAME (built-in or installed).")
    add("--backend", "backend", default="runtime", group=i, metavar="NAME",
        help="Measurement backend: runtime (in-process, default) or one a plugin adds.")


def expand_flagfiles(argv: list[str]) -> list[str]:
    """Expands ``--flagfile=PATH`` (one flag per line, # comments) in place."""
    expanded: list[str] = []
    for arg in argv:
        if arg.startswith("--flagfile="):
            path = arg.split("=", 1)[1]
            try:
                lines = Path(path).read_text().splitlines()
            except OSError as exc:
                raise UsageError(f"--flagfile={path}: cannot read: {exc.strerror}") from None
            expanded.extend(
                line.strip() for line in lines if line.strip() and not line.strip().startswith("#")
            )
        else:
            expanded.append(arg)
    return expanded


def prescan_plugins(argv: list[str]) -> tuple[list[str], list[str]]:
    """Finds --plugin and -p no:NAME before the full parse (plugins add options)."""
    plugins, blocked = [], []
    i = 0
    while i < len(argv):
        arg = argv[i]
        value = None
        if arg in ("--plugin", "-p") and i + 1 < len(argv):
            value = argv[i + 1]
            i += 1
        elif arg.startswith("--plugin="):
            arg, value = "--plugin", arg.split("=", 1)[1]
        elif arg.startswith("-p") and len(arg) > 2:
            arg, value = "-p", arg[2:].lstrip("=")
        if value is not None:
            if arg == "--plugin":
                plugins.append(value)
            elif value.startswith("no:"):
                blocked.append(value[3:])
            else:
                plugins.append(value)
        i += 1
    return plugins, blocked


def build_command(pm) -> GroupedCommand:
    parser = OptionParser()
    add_core_options(parser)
    call_hook(pm, "ireebench_addoption", parser=parser)
    return GroupedCommand(
        "ireebench",
        params=parser.options,
        help=(
            "Benchmark the exported functions of an IREE module (.vmfb), flag-compatible "
            "with iree-benchmark-module.\n\n"
            "Subcommand: ireebench replay FILE.ireereplay (see ireebench replay --help)."
        ),
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True,
                          "help_option_names": ["--help", "-h"]},
        add_help_option=True,
    )


def make_context(command: click.Command, prog: str, argv: list[str]):
    """Parses ``argv`` with click: the context, or None after --help; click's
    errors become one-line usage errors."""
    try:
        return command.make_context(prog, list(argv))
    except click.exceptions.Exit:
        return None
    except click.ClickException as exc:
        raise UsageError(one_line(exc.format_message())) from None


def parse_args(argv: list[str]):
    """Returns a :class:`Config` or None when --help was printed."""
    from .config import Config

    argv = expand_flagfiles(argv)
    plugins, blocked = prescan_plugins(argv)
    pm = build_plugin_manager(plugins, blocked)
    command = build_command(pm)
    ctx = make_context(command, "ireebench", argv)
    if ctx is None:
        return None
    runtime_flags = []
    for extra in ctx.args:
        if not extra.startswith("-"):
            raise UsageError(f"unexpected argument {extra!r}; flags are spelled --name=value")
        runtime_flags.append(extra)
    config = Config(pm, dict(ctx.params), runtime_flags, list(argv))
    validate_core_options(config)
    call_hook(pm, "ireebench_configure", config=config)
    return config


def validate_core_options(config) -> None:
    """Rejects core flag values that can be judged before anything runs."""
    for flag in ("batch_size", "batch_concurrency"):
        if config.getoption(flag) <= 0:
            raise UsageError(f"--{flag}={config.getoption(flag)}: must be a positive integer")
    unit = config.getoption("time_unit")
    if unit is not None and unit not in ("ns", "us", "ms"):
        raise UsageError(f"--time_unit={unit}: unsupported time unit (use ms, us or ns)")
    repetitions = config.getoption("benchmark_repetitions")
    if repetitions <= 0:
        raise UsageError(f"--benchmark_repetitions={repetitions}: must be positive")
    if config.getoption("output_max_element_count") < 0:
        raise UsageError(
            f"--output_max_element_count={config.getoption('output_max_element_count')}: "
            "must be >= 0"
        )
    _validate_out_path(config.getoption("benchmark_out"))


def _validate_out_path(path: str) -> None:
    """--benchmark_out must be a file in an existing directory.

    Checked up front: the report is renamed into place only at the end, and
    a run of hours must not fail there.
    """
    if not path:
        return
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"--benchmark_out={path}: is a directory")
    parent = target.parent
    if not parent.is_dir():
        reason = "is not a directory" if parent.exists() else "does not exist"
        raise UsageError(f"--benchmark_out={path}: directory {parent} {reason}")


def _on_sigterm(signum, frame):
    raise Terminated()


def execute(argv: list[str], stdout=None, stderr=None):
    """Parses ``argv`` and runs; returns a :class:`RunResult` (empty after --help).

    ``replay FILE ...`` runs the replay subcommand (core/replay_cli.py).
    """
    from .results import RunResult
    from .runner import run_config

    if argv[:1] == ["replay"]:
        from .replay_cli import execute_replay

        return execute_replay(list(argv[1:]), stdout, stderr)
    config = parse_args(list(argv))
    if config is None:
        return RunResult(0, [])
    return run_config(config, stdout, stderr)


def run_cli(argv: list[str]) -> int:
    """Runs the CLI and returns the exit code; never raises for user errors."""
    previous = None
    try:
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread (embedded use)
        pass
    try:
        result = execute(argv)
        return result.exit_code
    except UsageError as exc:
        print(f"ireebench: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("ireebench: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print("ireebench: terminated", file=sys.stderr)
        return 143
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def main(argv: list[str] | None = None) -> None:
    sys.exit(run_cli(list(sys.argv[1:] if argv is None else argv)))
