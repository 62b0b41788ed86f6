"""``--scenario``: MLPerf LoadGen's load scenarios, with latency tails you can trust.

``--scenario=single_stream|multi_stream|server|offline`` replaces each
repetition's closed loop of batches by a LoadGen scenario run of the
benchmark's function, on ``--batch_concurrency`` lanes; every point is named
after its scenario (``BM_f/scenario:server/qps:100/...``), so the store, the
gate, sweeps and the report read its rows as any rows. See docs/serving.md;
the package's modules and this plugin's hooks: docs/architecture.md.
"""

from __future__ import annotations

import dataclasses
import json

from ireebench import StashKey, hookimpl
from ireebench.backend import IN_PROCESS, BenchmarkFailure, error_run, new_run, require
from ireebench.errors import UsageError, flag_error
from ireebench.executor import select_executor
from ireebench.lib import slo
from ireebench.outfiles import register_input, register_output, write_to

from . import search
from .hooks import ServingHooks
from .settings import (
    MULTI_STREAM,
    SCENARIOS,
    SERVER,
    SINGLE_STREAM,
    Settings,
    settings_of,
)

GROUP = "Serving scenarios (MLPerf LoadGen)"
DEFAULT_TOLERANCE = 0.02

# A search's tried loads, per benchmark run name, until they are reported.
SEARCH_ROWS = StashKey[dict]()
# --scenario_log's lines so far.
LOG_LINES = StashKey[list]()
# --search_state, opened once per run.
STATE = StashKey[search.SearchState]()


@hookimpl
def ireebench_addhooks(pluginmanager):
    """Declares ``ireebench_server_arrivals`` (:mod:`.hooks`)."""
    pluginmanager.add_hookspecs(ServingHooks)


@hookimpl
def ireebench_addoption(parser):
    """The scenario flags (LoadGen's and vLLM's names where they have one)."""
    add = parser.addoption
    add("--scenario", "scenario", default=None, group=GROUP, metavar="NAME", module_run=True,
        per_point=True, requires=IN_PROCESS,
        help="Measure each repetition as a MLPerf LoadGen scenario: single_stream (the next "
             "query when the last completes), multi_stream (--samples_per_query samples a "
             "query), server (open-loop arrivals at --target_qps, latency from the scheduled "
             "time) or offline (saturating throughput). Needs an async (coarse-fences) "
             "function; single_stream also runs a sync one.")
    add("--target_qps", "target_qps", type=float, default=None, group=GROUP, metavar="QPS",
        per_point=True, module_run=True, requires=IN_PROCESS,
        help="Server: the arrival rate, queries per second (Poisson arrivals).")
    add("--burstiness", "burstiness", type=float, default=None, group=GROUP, metavar="B",
        per_point=True, module_run=True, requires=IN_PROCESS,
        help="Server: gamma-distributed inter-arrival times of shape B (vLLM's "
             "--burstiness); 1 (the default) is Poisson, under 1 burstier.")
    add("--arrival_trace", "arrival_trace", default=None, group=GROUP, metavar="FILE",
        per_point=True, module_run=True, requires=IN_PROCESS,
        help="Server: replay these arrival times (seconds, one per line) instead of "
             "--target_qps.")
    add("--scenario_seed", "scenario_seed", type=int, default=0, group=GROUP, metavar="N",
        per_point=True, module_run=True, requires=IN_PROCESS,
        help="Seed of the Server's arrival schedule (the same seed, the same schedule).")
    add("--min_duration", "min_duration", default=None, group=GROUP, metavar="TIME",
        per_point=True, module_run=True, requires=IN_PROCESS,
        help="LoadGen's minimum duration of a scenario run (default 1s; LoadGen's is 10s). "
             "A run lasts until both this and --min_query_count are met.")
    add("--min_query_count", "min_query_count", type=int, default=None, group=GROUP,
        metavar="N", per_point=True, module_run=True, requires=IN_PROCESS,
        help="LoadGen's minimum number of queries (Offline: samples) of a run; default 100, "
             "or what early stopping needs for the verdict's percentile (662 for p99).")
    add("--samples_per_query", "samples_per_query", type=int, default=None, group=GROUP,
        metavar="N", per_point=True, module_run=True, requires=IN_PROCESS,
        help="MultiStream: samples (invocations) issued together per query (default 8).")
    add("--latency_bound", "latency_bound", default=None, group=GROUP, metavar="pNN:TIME",
        per_point=True, module_run=True, requires=IN_PROCESS,
        help="The run is VALID only if the NN-th percentile of the latency is within TIME, "
             "with LoadGen's early stopping at 99% confidence (e.g. p99:20ms).")
    add("--search", "search", type=bool, group=GROUP, per_point=True, module_run=True, requires=IN_PROCESS,
        help="Find the highest --target_qps (server) or --samples_per_query (multi_stream) "
             "that meets --latency_bound: doubling, then bisection (LoadGen's peak search); "
             "each tried load is a row.")
    add("--search_tolerance", "search_tolerance", type=float, default=DEFAULT_TOLERANCE,
        group=GROUP, metavar="FRACTION", per_point=True, module_run=True, requires=IN_PROCESS,
        help="--search stops when the lowest failing rate is within this fraction of the "
             "highest passing one (default 0.02).")
    add("--search_state", "search_state", default=None, group=GROUP, metavar="FILE",
        module_run=True, requires=IN_PROCESS,
        help="--search: keep every tried load in FILE as soon as it is measured; a later run "
             "with the same FILE reuses them (resumes an interrupted search).")
    add("--scenario_log", "scenario_log", default=None, group=GROUP, metavar="FILE",
        module_run=True, requires=IN_PROCESS,
        help="Write every query's scheduled, issued and completed times (JSON lines), as "
             "LoadGen's detail log does.")


@hookimpl
def ireebench_configure(config):
    """Checks the flags (the run's; every point's in generate_points) and the paths."""
    scenario = config.getoption("scenario")
    if scenario:
        _check_scenario(scenario)
        require(config, IN_PROCESS, "scenario", scenario)
        settings_of(config)
    tolerance = config.getoption("search_tolerance")
    if not 0 < tolerance < 1:
        raise flag_error("search_tolerance", tolerance, "must be a fraction between 0 and 1")
    _refuse_files_elsewhere(config)
    for flag in ("scenario_log", "search_state"):
        # Never over the module, an input, the store or another output.
        register_output(config, flag, config.getoption(flag))
    _register_trace(config)
    if config.getoption("scenario_log"):
        config.stash[LOG_LINES] = []
    config.stash[STATE] = search.SearchState(config.getoption("search_state"))
    config.stash[SEARCH_ROWS] = {}


def _refuse_files_elsewhere(config) -> None:
    """The log and the search state are written by the process that measures: refused
    when the executor measures each point in a process elsewhere (``--executor=ray``),
    whose file would stay on the node, one point's replacing another's."""
    executor = select_executor(config)
    if executor.measures_here:
        return
    for flag in ("scenario_log", "search_state"):
        if config.getoption(flag):
            raise UsageError(f"--{flag}={config.getoption(flag)}: written by the process that "
                             f"measures; --executor={executor.name} measures each point in a "
                             "process of its own elsewhere (use --executor=local)")


def _check_scenario(scenario: str) -> None:
    if scenario not in SCENARIOS:
        raise flag_error("scenario", scenario, f"expected one of {', '.join(SCENARIOS)}")


def _register_trace(config) -> None:
    """A replayed trace is an input of the run: no output may replace it."""
    trace = config.getoption("arrival_trace")
    if trace:
        register_input(config, f"--arrival_trace={trace}", trace)


def point_params(settings: Settings, params: dict) -> dict:
    """The parameters a scenario adds to a point's name (``scenario:server/qps:100``)."""
    added = {"scenario": settings.scenario}
    if settings.search:
        added["search"] = settings.bound.text
    elif settings.scenario == SERVER and settings.arrivals.trace is None \
            and "target_qps" not in params:
        added["qps"] = search.round_rate(settings.arrivals.qps)
    elif settings.scenario == MULTI_STREAM and "samples_per_query" not in params:
        added["samples"] = settings.samples_per_query
    return {name: value for name, value in added.items() if name not in params}


@hookimpl
def ireebench_generate_points(config, points):
    """Names every point after its scenario, as a sweep's points are named."""
    for position, point in enumerate(points):
        scenario = point.config.getoption("scenario")
        if not scenario:
            continue
        _check_scenario(scenario)
        settings = settings_of(point.config)
        _register_trace(point.config)
        points[position] = point.derive(point_params(settings, point.params))


@hookimpl
def ireebench_discovery_finish(config, session, workloads):
    """Refuses, before anything runs, a function the scenario cannot drive."""
    scenario = config.getoption("scenario")
    if not scenario:
        return
    allowed = ("async", "sync") if scenario == SINGLE_STREAM else ("async",)
    for workload in workloads:
        if workload.kind.name not in allowed:
            hint = (" (compile it with --iree-execution-model=async-external)"
                    if workload.kind.name == "sync" else "")
            raise UsageError(f"--scenario={scenario}: @{workload.function.name} is a function "
                             f"of the {workload.kind.name!r} kind; the scenario drives async "
                             f"(coarse-fences) functions{hint}")


@hookimpl
def ireebench_report_row_names(config, run_names):
    """Room in the console's name column for a search's rows (``.../qps:1234.5``)."""
    if not config.getoption("search"):
        return None
    settings = settings_of(config)
    if settings is None:
        return None
    suffix = f"/{search.value_name(settings)}:12345.6"
    return [name.removesuffix("/process_time/real_time") + suffix for name in run_names]


def measurement_part():
    """:mod:`.measurement`, the scenario runs' work with the runtime and numpy, imported
    when a run first measures a scenario (not when the plugin is loaded)."""
    from . import measurement  # the runtime, numpy: see LAZY_IMPORTS in tests/core/test_imports.py

    return measurement


def measure(workload, session, settings: Settings):
    """One scenario run: ``(summary, timeline)`` (a failure raises BenchmarkFailure)."""
    return measurement_part().measure(workload, session, settings)


def _dry(settings: Settings) -> Settings:
    """--benchmark_dry_run: one query, no minimum duration, no search."""
    arrivals = settings.arrivals
    if settings.scenario == SERVER and arrivals.trace is None and arrivals.qps <= 0:
        arrivals = dataclasses.replace(arrivals, qps=1.0)  # a search without a start: one query
    return dataclasses.replace(settings, min_duration=0.0, min_queries=1, search=False,
                               arrivals=arrivals)


@hookimpl
def ireebench_measure_repetition(config, workload, repetition):
    """Runs the scenario as the repetition (returns None without ``--scenario``)."""
    settings = settings_of(config)
    if settings is None:
        return None
    if config.getoption("benchmark_dry_run"):
        settings = _dry(settings)
    from .summary import scenario_row
    try:
        if settings.search:
            return _search(config, workload, repetition, settings)
        summary, timeline = measure(workload, repetition.session, settings)
    except BenchmarkFailure as exc:
        return error_run(workload, repetition.repetitions, repetition.index, str(exc))
    _log(config, workload, repetition, timeline, summary)
    return scenario_row(workload, repetition, summary, timeline, config.stash.get(slo.SLOS, None))


def _search(config, workload, repetition, settings: Settings):
    from .summary import scenario_row
    template = new_run(workload, repetition.repetitions, repetition.index)

    def measure_at(trial_settings):
        summary, timeline = measure(workload, repetition.session, trial_settings)
        _log(config, workload, repetition, timeline, summary)
        return (scenario_row(workload, repetition, summary, timeline,
                             config.stash.get(slo.SLOS, None)), summary.valid)

    module = (config.getoption("module") or [""])[-1]
    key = search.search_key(settings, module)
    state = config.stash[STATE]
    engine = search.Search(settings, measure_at, template, state, key,
                           config.getoption("search_tolerance"))
    stored = state.stored_start(workload.run_name, key)
    start, note = stored if stored is not None else _start(workload, repetition, settings)
    state.begin(workload.run_name, key, start, note)
    passing, failing = engine.run(start)
    config.stash[SEARCH_ROWS][workload.run_name] = engine.rows()
    return search.result_row(engine, passing, failing, template, note)


def _start(workload, repetition, settings: Settings):
    """The search's first load: the flag's, or half what a closed-loop probe sustains."""
    if settings.scenario != SERVER:
        return settings.samples_per_query, ""
    if settings.arrivals.qps > 0:
        return search.round_rate(settings.arrivals.qps), ""
    probe = dataclasses.replace(settings, scenario=SINGLE_STREAM, min_duration=0.0,
                                min_queries=search.PROBE_QUERIES, bound=None, search=False)
    summary, _ = measure(workload, repetition.session, probe)
    service = summary.mean_latency
    rate = search.round_rate(0.5 * settings.lanes / service)
    return rate, search.probe_note(rate, service, settings.lanes)


@hookimpl
def ireebench_report_extra_rows(config, workload, runs):
    """A search's tried loads, one row each, under the benchmark's row."""
    rows = config.stash.get(SEARCH_ROWS, {}).pop(workload.run_name, None)
    return rows or None


def _log(config, workload, repetition, timeline, summary) -> None:
    lines = config.stash.get(LOG_LINES, None)
    if lines is None:
        return
    start = timeline.start
    settings = summary.settings
    for index in range(timeline.queries):
        record = {"benchmark": workload.run_name, "repetition": repetition.index,
                  "scenario": settings.scenario, "query": index,
                  "lane": timeline.lanes[index] if timeline.lanes else 0,
                  "samples": timeline.samples_per_query,
                  "scheduled_s": timeline.scheduled[index] - start,
                  "issued_s": timeline.issued[index] - start,
                  "completed_s": timeline.completed[index] - start,
                  "latency_s": timeline.completed[index] - timeline.scheduled[index]}
        if settings.scenario == SERVER:
            record["target_qps"] = settings.arrivals.qps
        lines.append(json.dumps(record))


@hookimpl
def ireebench_sessionfinish(config, session, exitstatus):
    """Writes ``--scenario_log`` (atomically), also after an interrupt."""
    lines = config.stash.get(LOG_LINES, None)
    path = config.getoption("scenario_log")
    if lines is None or not path:
        return
    write_to(path, "scenario_log", "".join(line + "\n" for line in lines))
