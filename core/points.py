"""Configuration points: one run that measures many configurations.

A *point* is one configuration of a run: a command line of its own, parsed
into its own :class:`~ireebench.config.Config` (``Config.for_point``), with
``params`` (axis name -> value, numbers as numbers) that name its rows
(``BM_forward/bs:4/process_time/real_time``, see :mod:`ireebench.names`).
A plain run is one point without parameters: its own config.

Where points come from: a plugin turns the benchmark run's command line
into the command lines of its points (``ireebench_expand_command_line``:
the ``sweeps`` plugin's ``--sweep``), or builds them itself (its ``ireebench
run SUITE.toml``) and has the core parse them (:func:`ireebench._cli.command.parse_points`);
then, once the run is configured, every plugin may add or rewrite points
(``ireebench_generate_points``, as pytest's ``pytest_generate_tests``), and
the core checks them (:func:`check_points`) and keeps them in
``config.stash[POINTS]``.

What may differ between points: the options marked ``per_point`` (the
core's module, device, parameters, function, inputs, batch and measurement
flags; plugins' such as ``--compile_flag``) and the runtime flags. Every
other option applies to the whole run (reports, output files, statistics
settings) and must be the same in every point.

How a backend runs them (the in-process backend, capability ``sweeps``):
points whose :func:`session_key` is equal (the same modules, parameters,
devices, compile flags and runtime flags) share one session; each point's
workloads are discovered with its own function, inputs and batch flags.
IREE's runtime flags are process-global and drivers read some of them once
per process (local-task reads ``--task_topology_*`` when its driver is first
created), so when the points' runtime flags differ, each point runs in a
process of its own: the same command line with ``--point_index=INDEX``
(:func:`point_command`).

What each row says of its point: the context describes the run as a whole
(every device, every module), and each row of a run of several points
carries the context entries of its own point (``ireebench_point_context``:
its devices, module and the module's sha256), which a backend puts on the
point's rows with :func:`stamp_rows` before it reports them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import names
from ._processes import process_options, processes_of, spreads_repetitions
from .backend import SWEEPS
from .errors import PluginError, UsageError
from .executor import measures_here, select_executor
from .hookcall import implementations
from .native import USER_PASS_FLAGS
from .results import RUN_KEYS
from .stash import StashKey

# The points of the run, in order (absent: the run is its own single point).
POINTS = StashKey["list[Point]"]()

# The most points one run measures (a sweep's product, a suite's entries
# together): each is parsed, planned and measured, so a product of 10**10 is
# refused in one line before a single point is made, not after gigabytes.
MAX_POINTS = 10_000

# Options of one workload: points that differ only in these share a session.
WORKLOAD_OPTIONS = frozenset({
    "function", "input", "batch_size", "batch_concurrency", "time_unit",
    "benchmark_min_time", "benchmark_min_warmup_time", "benchmark_repetitions",
})

# The flags that make a point's own process report to its parent: JSON on
# stdout, every row (the parent applies the aggregates-only flags). The
# outputs of the whole run (options marked ``run_output``: --benchmark_out,
# --benchmark_save, --benchmark_report) are the parent's alone
# (:func:`point_process_options`).
CHILD_REPORT_FLAGS = (
    "--benchmark_format=json", "--reporter=json",
    "--benchmark_report_aggregates_only=false", "--benchmark_display_aggregates_only=false",
    "--benchmark_list_tests=false", "--benchmark_enable_random_interleaving=false",
)


@dataclass
class PointSpec:
    """A point as a command line, before it is parsed.

    :ivar params: axis name -> value (numbers as numbers), in axis order.
    :ivar argv: the point's command line (``{NAME}`` already replaced).
    :ivar label: where it comes from, for messages (``bs=4``, ``entry 2 of s.toml``).
    :ivar name_prefix: prefixes its rows' names (a suite entry's ``name``).
    """

    params: dict
    argv: list[str]
    label: str = ""
    name_prefix: str = ""


@dataclass
class Point:
    """One configuration of the run (what ``ireebench_generate_points`` sees).

    :ivar config: the point's :class:`~ireebench.config.Config` (its options,
        runtime flags, ``params``; the run's stash, streams and cleanups).
    """

    config: object

    @property
    def params(self) -> dict:
        return self.config.params

    @property
    def label(self) -> str:
        """Where it comes from, for messages (``bs=4``, ``entry 2 of suite.toml``)."""
        return self.config.point_label or describe_params(self.params) or "the run"

    @property
    def name_prefix(self) -> str:
        return self.config.name_prefix

    def derive(self, params: dict | None = None, label: str = "", **options) -> Point:
        """A new point: this one with more (or changed) ``params`` and options.

        ``options`` are option names with their parsed values (a list for a
        repeatable flag: ``input=["16x512xf32=0.5"]``); the new parameters
        come after this point's in its name.
        """
        merged = dict(self.config.options)
        for name, value in options.items():
            if name not in merged:
                raise UsageError(f"point {self.label}: unknown option {name!r}")
            merged[name] = list(value) if isinstance(value, (list, tuple)) else value
        all_params = {**self.params, **(params or {})}
        return Point(self.config.run.for_point(
            merged, self.config.runtime_flags, all_params, self.name_prefix,
            label or describe_params(all_params)))


def describe_params(params: dict) -> str:
    """``bs=4, seq=2048``: a point's parameters in messages."""
    return ", ".join(f"{name}={names.format_value(value)}" for name, value in params.items())


def points_of(config) -> list[Point]:
    """The points of the run: those the plugins made (maybe none: an empty
    shard), or the run itself."""
    points = config.run.stash.get(POINTS, None)
    return [Point(config.run)] if points is None else list(points)


def is_sweep(config) -> bool:
    """Does the run measure several points, none, or one with parameters?"""
    points = points_of(config)
    return len(points) != 1 or bool(points[0].params or points[0].name_prefix)


def _frozen(value):
    return tuple(value) if isinstance(value, (list, tuple)) else value


def session_key(config, modules_sha256: tuple[str, ...] = ()) -> tuple:
    """What a point's session depends on: every option but the workload's, and
    the runtime flags. Points with equal keys share one session.

    ``modules_sha256`` (the point's modules, once taken): the modules' bytes
    stand for them, and the options marked ``module_source`` are left out,
    so points whose modules are identical (two paths, two compile flags
    making the same bytes) share one session: the module is loaded once.
    """
    skipped = set(WORKLOAD_OPTIONS)
    if modules_sha256:
        skipped |= {spec.name for spec in config.option_specs.values() if spec.module_source}
    options = tuple((name, _frozen(value)) for name, value in sorted(config.options.items())
                    if name not in skipped)
    return options, tuple(config.runtime_flags), modules_sha256


def per_point_options(config) -> set[str]:
    """The names of the options that may differ between points (marked ``per_point``:
    the core's module, device, parameters, function, input, batch and measurement
    flags; plugins' such as ``--compile_flag``)."""
    return {spec.name for spec in config.option_specs.values() if spec.per_point}


def _shown_flag(name: str, value) -> str:
    if isinstance(value, bool):
        return f"--{name}" if value else f"--{name}=false"
    if isinstance(value, (list, tuple)):
        return " ".join(f"--{name}={item}" for item in value) or f"--{name}"
    return f"--{name}={value}"


def check_points(config, points: list[Point]) -> None:
    """Refuses points that cannot be one run, in one line naming the flag and the point.

    Options that apply to the whole run must be the same in every point;
    options of the whole run's follow-up passes (``whole_run``: allocator
    statistics at exit, output processing) and the device profiling and
    capture flags need one configuration; the backend must run points
    (capability ``sweeps``). (That two points never report the same name is
    checked once their names are known, before anything is measured.)
    """
    run = config.run
    varying = per_point_options(run)
    for point in points:
        for name, value in point.config.options.items():
            if name in varying or _frozen(value) == _frozen(run.options.get(name)):
                continue
            raise UsageError(f"{_shown_flag(name, value)} (point {point.label}): cannot vary "
                             "per point: it applies to the whole run")
    here = measures_here(run)
    if not here and run.options.get("benchmark_enable_random_interleaving"):
        raise UsageError(f"--benchmark_enable_random_interleaving=true: needs every point in "
                         f"this process; --executor={select_executor(run).name} measures each "
                         "point in a process of its own")
    spread = spreads_repetitions(run)
    if spread and not here:
        raise UsageError(f"--benchmark_processes={processes_of(run)}: spreads the repetitions "
                         f"over processes on this machine; --executor={select_executor(run).name}"
                         " measures each point elsewhere (use --executor=local)")
    single = len(points) == 1 and not (points[0].params or points[0].name_prefix)
    if single and here and not spread:
        return
    # Measured elsewhere, even one configuration is a point of its own process there.
    if single and spread:
        what = (f"--benchmark_processes={processes_of(run)} (each process measures a share "
                "of the repetitions)")
    else:
        what = (f"a sweep or suite ({len(points)} points)" if here or len(points) > 1 else
                f"--executor={select_executor(run).name} (each point is measured in a process "
                "of its own)")
    backend = run.backend
    if len(points) > 1 and not backend.has(SWEEPS):
        raise UsageError(f"a run of {len(points)} configurations (point {points[0].label}"
                         f"{' ...' if len(points) > 1 else ''}) needs "
                         f"a backend that measures many configurations in one run (capability "
                         f"'{SWEEPS}'); --backend={backend.name} does not have it")
    for spec in run.option_specs.values():
        value = run.options.get(spec.name)
        if spec.whole_run and value not in (None, spec.default, (), [], ""):
            raise UsageError(f"{_shown_flag(spec.name, value)}: concerns the whole run of one "
                             f"configuration and cannot be used with {what}")
    for flag in run.runtime_flags:
        if flag.startswith(USER_PASS_FLAGS):
            raise UsageError(f"{flag}: a native pass over the whole run of one configuration; "
                             f"it cannot be used with {what}")


def interleaves(config) -> bool:
    """Are the benchmarks' repetitions interleaved, round by round?

    ``--benchmark_enable_random_interleaving`` when it is given, true or
    false (its environment variable too); unset, a run of several points (a
    sweep, a suite) interleaves, unlike Google Benchmark: its points are
    compared with each other, and drift over the run must fall on all of
    them alike. A plain run does not, as Google Benchmark does not. Never
    when an executor measures the points elsewhere (``--executor=ray``): each
    point is then measured on its own.
    """
    if not measures_here(config.run):
        return False
    value = config.run.options.get("benchmark_enable_random_interleaving")
    if value is not None:
        return bool(value)
    return len(points_of(config)) > 1


def runtime_flags_vary(points: list[Point]) -> bool:
    """Do the points' runtime flags differ (so each needs a process of its own)?"""
    return len({tuple(point.config.runtime_flags) for point in points}) > 1


@dataclass
class PointPlan:
    """What one point will report, known before any session opens.

    :ivar error: why its module cannot be had (it failed to compile, is
        missing, is not a module): the point is an error row per name, and
        the run's other points are measured.
    :ivar modules_sha256: the sha256 of each of its modules (once taken).
    """

    point: Point
    index: int  # its index among the run's points (--point_index)
    run_names: list[str] = field(default_factory=list)  # BM_f/bs:4/process_time/real_time ...
    error: str = ""
    modules_sha256: tuple[str, ...] = ()


# Reported name -> the point that reports it (every planned point, failed ones
# too): what a plugin asks to know a row's point (its params, module, device).
ROW_POINTS = StashKey["dict[str, Point]"]()


def point_of_row(config, run_name: str) -> Point | None:
    """The point of a sweep or suite whose benchmark ``run_name`` is (``Run.run_name``);
    None outside a run of several points, or for a name no point planned."""
    return config.run.stash.get(ROW_POINTS, {}).get(run_name)


def measurement_key(plan: PointPlan) -> tuple:
    """What a point's measurement depends on: its modules' bytes (not their paths,
    nor the options marked ``module_source`` that made them: ``--compile_flag``),
    every other option and the runtime flags. Points with equal keys measure
    the same thing: it is measured once and reported for each."""
    config = plan.point.config
    made_by = {spec.name for spec in config.option_specs.values() if spec.module_source}
    options = tuple((name, _frozen(value)) for name, value in sorted(config.options.items())
                    if name not in made_by)
    return plan.modules_sha256, options, tuple(config.runtime_flags)


def point_process_options(options: dict, option_specs: dict) -> dict:
    """A point's parsed options, as the process that measures it alone runs them.

    In a process started with ``--point_index`` (:func:`point_command`) or
    ``--process_index`` (one of the processes of ``--benchmark_processes``,
    :mod:`ireebench._processes`) every option marked ``run_output`` has its
    default: the run that started it writes ``--benchmark_out``, saves to the
    store and draws the report once for all its points, so a two-point run
    is stored once, not three times; with ``--process_index`` its
    ``--benchmark_repetitions`` is the process's share
    (:func:`ireebench._processes.process_options`). Any other run's options
    are returned as they are.
    """
    if options.get("point_index") is None and options.get("process_index") is None:
        return options
    return process_options({name: (option_specs[name].default if name in option_specs
                                   and option_specs[name].run_output else value)
                            for name, value in options.items()})


def point_command(config, index: int) -> list[str]:
    """The ireebench command line that measures only point ``index`` of this run,
    reporting JSON on stdout (see :data:`CHILD_REPORT_FLAGS`)."""
    return [*config.run.command_line, *CHILD_REPORT_FLAGS, f"--point_index={index}"]


def point_context(config) -> dict:
    """The context entries of one point's rows (``ireebench_point_context``, one
    plugin at a time, later plugins' values over earlier ones'); a key that is
    a member of every row or not a string, or a value that is not text, a list
    or an object, is the plugin's bug."""
    merged: dict = {}
    for plugin_name, call in implementations(config.pm, "ireebench_point_context",
                                             registration_order=True):
        entries = call(config=config)
        if not entries:
            continue
        if not isinstance(entries, dict):
            raise PluginError("ireebench_point_context", plugin_name, TypeError(
                f"returned {type(entries).__name__}; expected a dict of context entries"))
        for key, value in entries.items():
            if not isinstance(key, str) or key in RUN_KEYS:
                raise PluginError("ireebench_point_context", plugin_name, ValueError(
                    f"returned the key {key!r}, which is a member of every row "
                    "(or not a name); give it another name"))
            if not isinstance(value, (str, list, dict)):
                raise PluginError("ireebench_point_context", plugin_name, TypeError(
                    f"returned {key!r}: {type(value).__name__}; a row's context entry is "
                    "text, a list or an object (a number would read as a counter)"))
        merged.update(entries)
    return merged


def stamp_rows(config, rows) -> None:
    """Gives each of ``rows`` (a point's, ``config`` its config) the point's context
    entries (:func:`point_context`), in a run of several points (:func:`is_sweep`);
    an entry a row already has (set where it was measured) stays."""
    if not rows or not is_sweep(config):
        return
    entries = point_context(config)
    if entries:
        for row in rows:
            row.provenance = {**entries, **row.provenance}


__all__ = [
    "MAX_POINTS", "POINTS", "PointSpec", "describe_params", "interleaves", "is_sweep",
    "point_of_row", "points_of", "stamp_rows"
]
