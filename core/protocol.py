"""The run's protocol: the phases of an in-process run, each with its hooks, in call order.

The core's one owner of the sequence :mod:`ireebench.hookspecs` lists (each
hook's docstring says what it gets). The in-process backend
(``--backend=runtime``) is :func:`run_in_process`; a backend of its own
(the ``rank`` plugin's warm workers, a third party's) calls the phases
instead of the hooks, so that every plugin sees the same run:
:func:`start_session` once the session is open, :func:`finish_discovery`,
then per workload :func:`start_workload` (its cold start's rows come
last), :func:`ireebench._measure.measure_workload`, :func:`finish_workload`
(the extra rows), and once the reports are finalized
:func:`finish_measurements`.

Before each workload the run tells the hub (``hub.begin``), so that a
benchmark that never finishes is an error row; a worker resumed after a
crash (:mod:`ireebench._worker`) skips the benchmarks its predecessor
reported (``hub.already_reported``). The session's release is a cleanup
of the run, so it is still open during ``ireebench_sessionfinish``
(:mod:`ireebench._runner`). A run of several points (a sweep or suite)
plans them first (:mod:`ireebench._points_run`), then opens one session
per group of points that share their modules' bytes, parameters, devices
and runtime flags: interleaved (the default), every session first and the
repetitions of all workloads round by round in a random order
(:func:`_interleave`); otherwise each closed before the next opens (the
last one with the run). Imported when a run starts: it imports the IREE
runtime.
"""

from __future__ import annotations

import functools
import random

from . import _points_run as points_run
from . import names
from ._discovery import SKIPPED, discover_workloads
from ._measure import WorkloadMeasurement, error_run, measure_workload
from ._processes import spreads_repetitions
from ._runner import SESSION
from ._session import Session
from .backend import machine_context
from .errors import UsageError
from .executor import measures_here
from .hookcall import call_hook
from .points import PointPlan, interleaves, is_sweep, runtime_flags_vary, stamp_rows
from .results import Run
from .signature import example_inputs

__all__ = ["finish_discovery", "finish_measurements", "finish_workload", "run_in_process",
           "start_session", "start_workload"]


# --- the phases, each with its hooks, in the order of ireebench.hookspecs -------


def start_session(config, session: Session) -> Session:
    """Calls ``ireebench_sessionstart`` for ``session``, just opened."""
    call_hook(config.pm, "ireebench_sessionstart", config=config, session=session)
    return session


def finish_discovery(config, session: Session, workloads: list) -> list:
    """Calls ``ireebench_discovery_finish`` with the workloads discovered in ``session``."""
    call_hook(config.pm, "ireebench_discovery_finish", config=config, session=session,
              workloads=workloads)
    return workloads


def start_workload(config, session: Session, workload) -> list[Run]:
    """``ireebench_workload_start``, then the cold start's rows (reported last)."""
    kwargs = {"config": config, "session": session, "workload": workload}
    call_hook(config.pm, "ireebench_workload_start", **kwargs)
    return [run for run in call_hook(config.pm, "ireebench_measure_cold_start", **kwargs)
            if run is not None]


def finish_workload(config, session: Session, workload, runs: list[Run]) -> list[Run]:
    """``ireebench_workload_finish`` with the measured ``runs``, then the extra rows."""
    call_hook(config.pm, "ireebench_workload_finish", config=config, session=session,
              workload=workload, runs=runs)
    return [row for rows in call_hook(config.pm, "ireebench_report_extra_rows",
                                      config=config, workload=workload, runs=runs)
            for row in rows or []]


def finish_measurements(config, workloads: list, exit_code: int = 0) -> int:
    """``ireebench_measurements_finish`` once the reports are finalized: the run's
    exit code, the largest of ``exit_code`` and what the implementations return."""
    for code in call_hook(config.pm, "ireebench_measurements_finish", config=config,
                          workloads=workloads):
        exit_code = max(exit_code, code or 0)
    return exit_code


# --- the in-process run ------------------------------------------------------------


def run_in_process(config, hub) -> int:
    """The in-process run (``--backend=runtime``): measures with iree.runtime here
    (or, for points and processes, where the run's executor measures them)."""
    if hub is not None and spreads_repetitions(config):
        exit_code, workloads = points_run.measure_processes(config, hub)  # hub finalized
        return exit_code if workloads is None else finish_measurements(config, workloads,
                                                                       exit_code)
    if is_sweep(config) or interleaves(config) or not measures_here(config):
        return _run_points(config, hub)
    return _run_session(config, hub)


def _run_session(config, hub) -> int:
    """A plain run: one session, its workloads measured one after the other."""
    session = _open_session(config, config)
    workloads = discover_workloads(config, session)
    config.add_cleanup(functools.partial(_release_inputs, workloads))
    finish_discovery(config, session, workloads)
    if points_run.ends_unmeasured(config, hub, [w.run_name for w in workloads],
                                  lambda: _needs_inputs_hint(config)):
        return 0
    hub.report_context(machine_context(config), [w.run_name for w in workloads])
    exit_code = 0
    measured = []
    for family_index, workload in enumerate(workloads):
        if hub.already_reported(workload.run_name):
            continue  # a worker resumed after a crash: the one before reported it
        measured.append(workload)
        code = _measure_and_report(config, session, hub, workload, family_index)
        exit_code = max(exit_code, code)
    # The reports are complete before the follow-up work prints anything
    # (outputs come after the report, as the native tool prints them).
    hub.finalize()
    exit_code = finish_measurements(config, measured, exit_code)
    _release_inputs(workloads)  # now, not at the end of the run: nothing needs them
    return exit_code


def _open_session(config, session_config) -> Session:
    """Opens a session (a point's: ``session_config``): the run's session until the
    next one opens, closed when the run ends."""
    session = Session(session_config)
    config.add_cleanup(functools.partial(_close_session, config, session))
    session.open()
    config.stash[SESSION] = session
    return start_session(session_config, session)


def _discover(point_config, session) -> list:
    return finish_discovery(point_config, session, discover_workloads(point_config, session))


def _measure_and_report(config, session, hub, workload, family_index: int,
                        instance_index: int = 0) -> int:
    _begin(config, hub, workload, family_index, instance_index)
    extra = start_workload(config, session, workload)
    runs = measure_workload(config, session, workload)
    return _report_workload(config, session, hub, workload, runs, extra, family_index,
                            instance_index)


def _begin(config, hub, workload, family_index: int, instance_index: int) -> None:
    """Tells the hub the benchmark starts, with the row it is reported as if it
    never finishes (a crash, a hang, an interrupt): the hub and a worker's
    supervisor keep it."""
    planned = 1 if config.getoption("benchmark_dry_run") else config.getoption(
        "benchmark_repetitions")
    lost = error_run(workload, planned, 0, "")
    lost.family_index, lost.per_family_instance_index = family_index, instance_index
    stamp_rows(config, [lost])
    hub.begin(lost)


def _report_workload(config, session, hub, workload, runs, extra, family_index: int,
                     instance_index: int) -> int:
    """Numbers the rows, :func:`finish_workload`, then the report."""
    for run in runs + extra:  # Google Benchmark numbers the benchmarks that run
        run.family_index = family_index
        run.per_family_instance_index = instance_index
    try:
        extra.extend(finish_workload(config, session, workload, runs))
    except BaseException:
        stamp_rows(config, runs)
        hub.report(runs)  # what was measured is reported, whatever failed after
        raise
    finally:
        workload.last_batch = None  # results released before the next workload
    stamp_rows(config, runs + extra)  # a point's rows say which point (a sweep, a suite)
    hub.report(runs, extra)
    return 1 if any(run.error_occurred for run in runs) else 0


def _run_points(config, hub) -> int:
    """Measures the points of a sweep or suite (see the module docstring)."""
    plans = points_run.plan_points(config)
    run_names = [name for plan in plans for name in plan.run_names]
    if points_run.ends_unmeasured(config, hub, run_names):
        return 0
    family = points_run.Family()
    measured, copies = points_run.measured_once(config, [plan for plan in plans if not plan.error])
    hub = points_run.PointsHub(hub, machine_context(config), run_names, copies, family)
    exit_code = 0
    for plan in plans:  # nothing to measure: said first, before the others are measured
        if plan.error and not all(hub.already_reported(name) for name in plan.run_names):
            exit_code = points_run.report_failed(hub, [plan], plan.error, family)
    single = len(plans) == 1
    if not measures_here(config) or runtime_flags_vary([plan.point for plan in measured]):
        code, workloads = points_run.run_point_jobs(config, hub, measured, family, single)
    elif interleaves(config):
        code, workloads = _interleave(config, hub, measured, family, single)
    else:
        code, workloads = _run_sessions(config, hub, measured, family, single)
    exit_code = max(exit_code, code)
    hub.ensure_context()
    hub.finalize()
    exit_code = finish_measurements(config, workloads, exit_code)
    _release_inputs(workloads)
    return exit_code


def _run_sessions(config, hub, plans: list[PointPlan], family: points_run.Family,
                  single: bool) -> tuple[int, list]:
    """One session per group of points, opened in order, each closed before the next.

    ``single``: the run is one point, whose failure is the run's one-line error.
    """
    exit_code, measured = 0, []
    groups = points_run.session_groups(plans)
    for number, group in enumerate(groups):
        try:
            session = _open_session(config, group[0].point.config)
        except UsageError as exc:
            if single:
                raise
            exit_code = points_run.report_failed(hub, group, exc, family)
            continue
        group_workloads = []
        for plan in group:
            point_config = plan.point.config
            try:
                workloads = _discover(point_config, session)
            except UsageError as exc:
                if single:
                    raise
                exit_code = points_run.report_failed(hub, [plan], exc, family)
                continue
            group_workloads.extend(workloads)
            for workload in workloads:
                hub.ensure_context()
                family_index, instance = family.number(workload.function.name,
                                                       point_config.name_prefix)
                if hub.already_reported(workload.run_name):
                    continue  # a worker resumed after a crash: the one before reported it
                measured.append(workload)
                code = _measure_and_report(point_config, session, hub, workload, family_index,
                                           instance)
                exit_code = max(exit_code, code)
        if number < len(groups) - 1:  # sessions close in order; the last one with the run
            _release_inputs(group_workloads)
            _close_session(config, session)
    return exit_code, measured


def _interleave(config, hub, plans: list[PointPlan], family: points_run.Family,
                single: bool) -> tuple[int, list]:
    """Google Benchmark's random interleaving, round by round.

    Every session is opened and every workload discovered, started
    (``ireebench_workload_start``, cold start) and calibrated first, in
    order; then each round measures one repetition of every workload still
    running, in a fresh random order, so that drift over the run falls on
    all of them alike. Each workload keeps its own stopping rule (adaptive
    stopping per point) and is reported as soon as its last repetition is
    measured.
    """
    exit_code, pending, sessions = 0, [], []
    for group in points_run.session_groups(plans):
        try:
            session = _open_session(config, group[0].point.config)
        except UsageError as exc:
            if single:
                raise
            exit_code = points_run.report_failed(hub, group, exc, family)
            continue
        sessions.append(session)
        for plan in group:
            try:
                workloads = _discover(plan.point.config, session)
            except UsageError as exc:
                if single:
                    raise
                exit_code = points_run.report_failed(hub, [plan], exc, family)
                continue
            for workload in workloads:
                numbers = family.number(workload.function.name, plan.point.config.name_prefix)
                if hub.already_reported(workload.run_name):
                    continue  # a worker resumed after a crash: the one before reported it
                pending.append((plan.point.config, session, workload, numbers))
    measurements, workloads = [], [item[2] for item in pending]
    hub.ensure_context()
    for point_config, session, workload, numbers in pending:
        _begin(point_config, hub, workload, *numbers)
        extra = start_workload(point_config, session, workload)
        measurement = WorkloadMeasurement(point_config, session, workload)
        measurement.start()
        measurements.append((measurement, extra, numbers))
    shuffle = random.Random().shuffle  # seeded from the OS, as Google Benchmark's
    active = list(measurements)
    while active:
        order = [item for item in active if not item[0].done]
        shuffle(order)
        for measurement, _, numbers in order:
            # The benchmark that runs now is the one a crash or hang loses.
            _begin(measurement.config, hub, measurement.workload, *numbers)
            measurement.step()
        for item in active:
            measurement, extra, (family_index, instance) = item
            if measurement.done:
                code = _report_workload(measurement.config, measurement.session, hub,
                                        measurement.workload, measurement.finish(), extra,
                                        family_index, instance)
                exit_code = max(exit_code, code)
        active = [item for item in active if not item[0].done]
    # Sessions close in the order they opened (the last one with the run).
    last = sessions[-1] if sessions else None
    _release_inputs([workload for _, session, workload, _ in pending if session is not last])
    for session in sessions[:-1]:
        _close_session(config, session)
    return exit_code, workloads


def _close_session(config, session: Session) -> None:
    if config.stash.get(SESSION, None) is session:
        del config.stash[SESSION]
    session.close()


def _release_inputs(workloads) -> None:
    """Input buffers live until the run ends; they go before the devices do."""
    for workload in workloads:
        workload.inputs = None
        workload.last_batch = None


def _needs_inputs_hint(config) -> str | None:
    """One line naming the functions skipped for needing inputs, and how to run one.

    The native tool only says ``Failed to match any benchmarks against regex``
    when every function takes arguments; this line says why, with each
    function's ``iree.abi.declaration`` and a ``--function=... --input=...``
    that fits the first one. None when no skipped function takes inputs (or
    none matches --benchmark_filter).
    """
    waiting = [function for function, kind in config.stash.get(SKIPPED, [])
               if not names.is_internal(function.name) and not kind.auto_discover(function)
               and config.selects(names.run_name(function.name))]
    if not waiting:
        return None
    signatures = "; ".join(function.attr("iree.abi.declaration")
                           or f"{function.name} (cconv {function.cconv})"
                           for function in waiting)
    example = " ".join([f"--function={waiting[0].name}", *example_inputs(waiting[0])])
    return (f"ireebench: hint: no function runs without inputs; these take arguments: "
            f"{signatures}; run one with {example}")
