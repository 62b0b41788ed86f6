"""Command-line options: the core's table, the parser plugins add to, their types.

Flags are spelled exactly as the native tool spells them (``--batch_size=4``,
``--benchmark_min_time=20x``). Boolean flags accept ``--flag``,
``--flag=true`` and ``--flag=false``. Google Benchmark's flags also read
their ``BENCHMARK_*`` environment variables.

Every option has an owner: ``ireebench`` for the core's, else the plugin
that added it in ``ireebench_addoption``. A name or flag defined twice is
an error naming both owners, so no plugin can silently redefine a core
option or another plugin's.
"""

from __future__ import annotations

import click

from .._inifile import TYPES as INI_TYPES
from .._inifile import IniSpec
from .._processes import check_processes
from ..backend import EXECUTORS, PROCESS_REPETITIONS
from ..config import OptionSpec
from ..errors import INVALID_ARGUMENT, UsageError
from ..outfiles import register_input, register_output, value_file
from ..version import version_lines
from .invocation import Invocation

CORE = "ireebench"  # the owner of the core options
CORE_GROUP = "Module, function and inputs (iree-benchmark-module)"
BENCHMARK_GROUP = "Measurement and output (Google Benchmark)"
IREEBENCH_GROUP = "ireebench"
# --isolation's values (ireebench._worker).
ISOLATIONS = ("none", "worker")


def command_stdout(ctx: click.Context):
    """The stdout of the run being parsed (for eager options that print and exit)."""
    invocation = ctx.find_object(Invocation)
    return invocation.stdout if invocation is not None else click.get_text_stream("stdout")


def _print_version(ctx, param, value):
    """Eager --version: versions of ireebench, IREE, Python and third-party plugins."""
    if not value or ctx.resilient_parsing:
        return value
    invocation = ctx.find_object(Invocation)
    lines = version_lines(getattr(invocation, "pm", None))
    inifile = getattr(ctx.command, "inifile", None)
    if inifile is not None and inifile.path is not None:
        lines.append(f"configuration file: {inifile.path}")
    command_stdout(ctx).write("\n".join(lines) + "\n")
    ctx.exit(0)


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
    """An option that knows its --help section and the plugin that added it.

    ``module_run=True``: the option configures a run of a module (its
    outputs, its profiling, its measurement in process); ``ireebench
    replay`` hides and refuses it. ``native_flag=True``: the native
    iree-benchmark-module has the same flag, so backends that run the
    native tool hand it on as it is (:func:`ireebench.backend.forwarded_argv`);
    ``whole_run=True``: natively it concerns the whole run (allocator
    statistics at exit, output processing), so such a backend runs every
    benchmark in one native process when it is given. ``per_point=True``:
    the option may differ between the points of a sweep or suite (a module,
    an input, a compile flag; see :mod:`ireebench.points`); any other
    option applies to the whole run. ``axis_expression=True``: the value's
    ``{AXIS}`` placeholders are the option's plugin's to evaluate per
    benchmark (``--counter flops=2*{bs}*512``), so a sweep leaves them.
    ``run_output=True``: an output of the whole run (a report file, the
    store, the HTML report), or where the run measures its points
    (``--executor`` and its executor's options): a point that runs in a
    process of its own (``--point_index``, here or on a cluster's node) gets
    the default, so the run saves and reports once, and the point is
    measured where its process runs.
    ``module_source=True`` (with ``per_point``): the option only says how
    the module is made (``--compile_flag``); points whose modules have the
    same bytes are measured once, whatever it says.
    ``requires=CAPABILITY`` (or a tuple: any of them): only a backend with
    that capability honours the option, so given to another it is refused
    in one line naming the capability (:func:`ireebench.backend.check_capabilities`)
    instead of being silently ignored.
    """

    def __init__(self, *args, group: str = IREEBENCH_GROUP, plugin: str = CORE,
                 module_run: bool = False, native_flag: bool = False, whole_run: bool = False,
                 per_point: bool = False, axis_expression: bool = False,
                 run_output: bool = False, module_source: bool = False, requires=(),
                 **kwargs):
        super().__init__(*args, **kwargs)
        self.requires = (requires,) if isinstance(requires, str) else tuple(requires)
        self.group = group
        self.plugin = plugin
        self.module_run = module_run
        self.native_flag = native_flag
        self.whole_run = whole_run
        self.per_point = per_point
        self.axis_expression = axis_expression
        self.run_output = run_output
        self.module_source = module_source

    def spec(self) -> OptionSpec:
        """What the run keeps of this option (:class:`ireebench.config.OptionSpec`)."""
        native = self.native_flag or (self.plugin == CORE and self.group != IREEBENCH_GROUP)
        return OptionSpec(self.name, self.plugin, self.group,
                          tuple(self.opts) + tuple(self.secondary_opts),
                          not self.is_flag and self.nargs != 0, self.default, native,
                          self.whole_run, self.per_point, self.axis_expression,
                          self.run_output, self.module_source, self.requires,
                          # click's own rule: a flag whose value may be left out
                          bool(getattr(self, "_flag_needs_value", False)))


class OptionParser:
    """What ``ireebench_addoption`` receives: adds options to the command.

    ``plugin`` is the owner of the options added next (the core sets it
    before calling each plugin's implementation).
    """

    def __init__(self):
        self.options: list[GroupedOption] = []
        self.plugin = CORE
        self._owners: dict[str, str] = {}  # option name and each flag -> owner
        self.inis: dict[str, IniSpec] = {}

    def addini(self, name: str, help: str, type: str = "string", default=None) -> None:
        """Declares the setting ``name`` of the configuration file (``[tool.ireebench]``
        of pyproject.toml, or ireebench.toml: :mod:`ireebench._inifile`), read with
        ``config.getini(name)``; ``type`` is one of string, bool, int, float, list
        (of strings) or paths (relative to the file); ``default`` when it is not set."""
        if type not in INI_TYPES:
            raise UsageError(f"addini({name!r}) of {_describe(self.plugin)}: type {type!r} "
                             f"is not one of {', '.join(INI_TYPES)}")
        owner = self.inis[name].owner if name in self.inis else self._owners.get(name)
        if owner is not None:
            raise UsageError(f"setting {name} of {_describe(self.plugin)} is already "
                             f"defined by {_describe(owner)}")
        self.inis[name] = IniSpec(name, help, type, default, self.plugin)

    def addoption(self, *decls, group: str = IREEBENCH_GROUP, **attrs) -> None:
        """Adds ``--name``; keyword arguments are those of click.Option.

        ``type=bool`` (or ``is_flag=True``) gives a native-style boolean flag
        that accepts ``--name``, ``--name=true`` and ``--name=false``.
        ``module_run=True`` marks an option that only makes sense for a run
        of a module (``ireebench replay`` refuses it); ``native_flag=True``
        one the native tool has too, ``whole_run=True`` one that natively
        concerns the whole run, ``per_point=True`` one that may differ
        between the points of a sweep, ``axis_expression=True`` one whose
        ``{AXIS}`` placeholders its plugin evaluates, ``run_output=True`` an
        output of the whole run, ``module_source=True`` one that only says how
        the module is made, ``requires=CAPABILITY`` one that only a backend
        with that capability honours (see :class:`GroupedOption`).
        """
        if attrs.pop("is_flag", False) or attrs.get("type") is bool:
            attrs["type"] = BOOL
            attrs.setdefault("default", False)
            attrs.setdefault("is_flag", False)
            attrs.setdefault("flag_value", "true")
        option = GroupedOption(decls, group=group, plugin=self.plugin, **attrs)
        for key in [option.name, *option.opts, *option.secondary_opts]:
            owner = self._owners.get(key)
            if owner is not None:
                shown = key if key.startswith("-") else f"--{key}"
                raise UsageError(f"option {shown} of {_describe(self.plugin)} is already "
                                 f"defined by {_describe(owner)}")
        for key in [option.name, *option.opts, *option.secondary_opts]:
            self._owners[key] = self.plugin
        self.options.append(option)


def _describe(owner: str) -> str:
    return "ireebench's core options" if owner == CORE else f"plugin {owner!r}"


def _bool(parser, name, help, group=CORE_GROUP, envvar=None):
    parser.addoption(f"--{name}", name, type=bool, help=help, group=group, envvar=envvar,
                     show_envvar=bool(envvar))


def add_core_options(parser: OptionParser) -> None:
    """The options the core owns: the native tool's and Google Benchmark's, and ireebench's."""
    add = parser.addoption
    g = CORE_GROUP
    add("--module", "module", multiple=True, group=g, metavar="FILE", per_point=True,
        module_source=True,
        help="Module (.vmfb) to load; repeatable, the last one is benchmarked; - reads stdin.")
    add("--device", "device", multiple=True, group=g, metavar="URI", per_point=True,
        help="HAL device (local-task, local-sync, cuda, cuda://0 ...); repeatable.")
    add("--function", "function", default="", group=g, metavar="NAME", per_point=True,
        help="Benchmark only this exported function, with the --input values.")
    add("--input", "input", multiple=True, group=g, metavar="VALUE", per_point=True,
        help="An input: 2x2xi32=1 2 3 4, 42, @file.npy, 4xf32=@file.bin ...; repeatable.")
    add("--parameters", "parameters", multiple=True, group=g, metavar="[SCOPE=]FILE",
        per_point=True,
        help="Parameter archive (.irpa, .gguf, .safetensors) to provide; repeatable.")
    add("--batch_size", "batch_size", type=int, default=1, group=g, per_point=True,
        help="Invocations per iteration (dispatch benchmarks: the compiled repeat count).")
    add("--batch_concurrency", "batch_concurrency", type=int, default=1, group=g,
        per_point=True,
        help="Invocations within a batch that run concurrently (async functions).")
    add("--time_unit", "time_unit", default=None, group=g, metavar="ns|us|ms", per_point=True,
        help="Time unit of the results (default ms; us for dispatch benchmarks).")

    b = BENCHMARK_GROUP
    env = lambda name: name.upper()
    add("--benchmark_min_time", "benchmark_min_time", default="0.5s", group=b, per_point=True,
        envvar=env("benchmark_min_time"), metavar="<float>s|<int>x",
        help="Minimum time per benchmark (0.5s) or a fixed iteration count (20x).")
    add("--benchmark_min_warmup_time", "benchmark_min_warmup_time", default="0", group=b,
        per_point=True,
        envvar=env("benchmark_min_warmup_time"), metavar="SECONDS",
        help="Warm-up time before the first repetition (not reported).")
    add("--benchmark_repetitions", "benchmark_repetitions", type=int, default=1, group=b,
        per_point=True,
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
        metavar="FILE", run_output=True, help="Also write the report to FILE (atomically).")
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
    # Unset (None) is told from an explicit false: a run of several points
    # interleaves unless told not to (ireebench.points.interleaves).
    add("--benchmark_enable_random_interleaving", "benchmark_enable_random_interleaving",
        type=bool, default=None, group=b, envvar=env("benchmark_enable_random_interleaving"),
        show_envvar=True,
        help="Interleave the repetitions of the benchmarks in a random order, round by round, "
             "so that drift does not bias their comparison. Default: on for a sweep or suite "
             "of several points (unlike Google Benchmark), off otherwise; =false measures "
             "each benchmark's repetitions in a row.")
    add("--v", "v", default="0", group=b, help="Accepted for compatibility (verbosity).")

    i = IREEBENCH_GROUP
    add("--reporter", "reporter", default=None, group=i, metavar="NAME",
        help="Display reporter (console, json, csv, or one a plugin adds); "
             "overrides --benchmark_format.")
    add("--plugin", "plugin", multiple=True, group=i, metavar="MODULE|FILE.py",
        help="Load a plugin module or file; repeatable.")
    add("-p", "block", multiple=True, group=i, metavar="NAME|no:NAME",
        help="-p NAME loads the plugin module NAME (as --plugin); -p no:NAME blocks the "
             "plugin NAME (built-in or installed); repeatable.")
    add("--backend", "backend", default="runtime", group=i, metavar="NAME",
        help="Measurement backend: runtime (in-process, default) or one a plugin adds.")
    add("--executor", "executor", default="local", group=i, metavar="NAME",
        run_output=True, requires=EXECUTORS,
        help="Where the points of the run are measured: local (this machine, default), ray "
             "(each point a task of a Ray cluster, on a node that holds its device; see "
             "docs/fleet.md) or one a plugin adds.")
    add("--benchmark_processes", "benchmark_processes", type=int, default=1, group=i,
        metavar="N", requires=PROCESS_REPETITIONS,
        help="Spread each benchmark's --benchmark_repetitions over N fresh processes, one "
             "after the other (R split as evenly as possible), reported as one benchmark "
             "whose aggregates cover every repetition, so that its interval covers what "
             "varies between processes (docs/statistics.md). Default 1: this process.")
    _bool(parser, "strict_flags",
          "Refuse unknown flags and stray arguments (by default each is ignored with a "
          "warning line, as the native tool ignores them).", i, "IREEBENCH_STRICT_FLAGS")
    add("--point_index", "point_index", type=int, default=None, group=i, hidden=True,
        help="Measure only this point (0-based) of a sweep or suite: how a point that "
             "needs a process of its own runs.")
    add("--process_index", "process_index", type=int, default=None, group=i, hidden=True,
        help="Measure this process's share (0-based) of the repetitions of a run with "
             "--benchmark_processes: how each of its processes runs.")
    add("--isolation", "isolation", default=None, group=i, envvar="IREEBENCH_ISOLATION",
        show_envvar=True, metavar="worker|none",
        help="worker: measure in a forked worker process, so that a function that crashes "
             "or hangs keeps the finished results (the command line's default); none: in "
             "this process (the Python API's default). See docs/reliability.md.")
    add("--version", "-V", "version", is_flag=True, is_eager=True, expose_value=False,
        callback=_print_version, group=i,
        help="Print the versions of ireebench, IREE, Python and third-party plugins, and exit.")


def validate_core_options(config) -> None:
    """Rejects core flag values that can be judged before anything runs."""
    for flag in ("batch_size", "batch_concurrency"):
        if config.getoption(flag) <= 0:
            raise UsageError(f"--{flag}={config.getoption(flag)}: batch size and concurrency "
                             "must be positive", status=INVALID_ARGUMENT)
    unit = config.getoption("time_unit")
    if unit is not None and unit not in ("ns", "us", "ms"):
        raise UsageError(f"--time_unit={unit}: unsupported time unit (use ms, us or ns)")
    repetitions = config.getoption("benchmark_repetitions")
    if repetitions <= 0:
        raise UsageError(f"--benchmark_repetitions={repetitions}: must be positive")
    check_processes(config)
    register_core_files(config)
    isolation = config.getoption("isolation")
    if isolation not in (None, "", *ISOLATIONS):
        raise UsageError(f"--isolation={isolation}: expected one of {', '.join(ISOLATIONS)}")


def register_core_files(config) -> None:
    """The files of the core's options (``ireebench.outfiles.RunFiles``): every
    ``--module``, ``--parameters`` archive and ``@file`` input is read, and
    ``--benchmark_out`` may be none of them (nor a file a plugin reads or writes)."""
    for module in config.getoption("module") or ():
        if module != "-":
            register_input(config, f"--module={module}", module)
    for spec in config.getoption("parameters") or ():
        register_input(config, f"--parameters={spec}", spec.rpartition("=")[2])
    for value in config.getoption("input") or ():
        register_input(config, f"--input={value}", value_file(value))
    register_output(config, "benchmark_out", config.getoption("benchmark_out"))
