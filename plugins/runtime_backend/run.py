"""The in-process run of ``--backend=runtime``: session, discovery, measurement, reports.

The part of the ``runtime_backend`` plugin that works with the runtime,
imported when a run starts (:func:`ireebench.plugins.runtime_backend.run_in_process`);
the plugin's module docstring says what one run does.
"""

from __future__ import annotations

import dataclasses
import functools
import random
from dataclasses import dataclass, field

from ireebench import names
from ireebench.backend import machine_context, runs_from_benchmark_json
from ireebench.discovery import (
    SKIPPED,
    discover_workloads,
    module_functions,
    planned_run_names,
    unloaded_run_name,
)
from ireebench.errors import Terminated, UsageError, one_line, signal_name
from ireebench.executor import PointJob, measures_here, outcomes, select_executor
from ireebench.hookcall import call_hook
from ireebench.lib.gbench_json import split_benchmark_json
from ireebench.measure import WorkloadMeasurement, error_run, measure_workload
from ireebench.modules import last_images
from ireebench.native.backend import named_workload
from ireebench.points import (
    ROW_POINTS,
    Point,
    PointPlan,
    interleaves,
    is_sweep,
    measurement_key,
    point_command,
    point_context,
    points_of,
    runtime_flags_vary,
    session_key,
    stamp_rows,
)
from ireebench.processes import (
    CONTEXT_KEY,
    PROCESS_KEY,
    merge_repetitions,
    process_command,
    processes_of,
    spreads_repetitions,
)
from ireebench.results import Run
from ireebench.runner import SESSION
from ireebench.session import Session, check_drivers
from ireebench.signature import example_inputs
from ireebench.stats import EXTRA_STATISTICS, STATISTICS


def _close_session(config, session: Session) -> None:
    if config.stash.get(SESSION, None) is session:
        del config.stash[SESSION]
    session.close()


def _release_inputs(workloads) -> None:
    """Input buffers live until the run ends; they go before the devices do."""
    for workload in workloads:
        workload.inputs = None
        workload.last_batch = None


def _ends_unmeasured(config, hub, run_names: list[str], hint=lambda: "") -> bool:
    """Whether the run ends before measuring (exit 0): ``--benchmark_list_tests``
    (``hub`` None) prints the names; no name is Google Benchmark's behaviour on
    a filter that matches nothing (its line, no context, no rows, an empty
    ``--benchmark_out`` file), with ``hint()``'s line where it has one."""
    if hub is None:
        config.stdout.write("".join(f"{name}\n" for name in run_names))
        return True
    if run_names:
        return False
    pattern = config.getoption("benchmark_filter") or "."
    config.stderr.write(f"Failed to match any benchmarks against regex: {pattern}\n")
    line = hint()
    if line:
        config.stderr.write(line + "\n")
    return True


def run_in_process(config, hub) -> int:
    """The default backend: measures in this process with iree.runtime."""
    if hub is not None and spreads_repetitions(config):
        return run_processes(config, hub)
    if is_sweep(config) or interleaves(config) or not measures_here(config):
        return run_points(config, hub)
    session = Session(config)
    config.add_cleanup(functools.partial(_close_session, config, session))
    session.open()
    config.stash[SESSION] = session
    pm = config.pm
    call_hook(pm, "ireebench_sessionstart", config=config, session=session)
    workloads = discover_workloads(config, session)
    config.add_cleanup(functools.partial(_release_inputs, workloads))
    call_hook(pm, "ireebench_discovery_finish", config=config, session=session,
              workloads=workloads)
    if _ends_unmeasured(config, hub, [w.run_name for w in workloads],
                        lambda: needs_inputs_hint(config)):
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
    for code in call_hook(pm, "ireebench_measurements_finish", config=config,
                          workloads=measured):
        exit_code = max(exit_code, code or 0)
    _release_inputs(workloads)  # now, not at the end of the run: nothing needs them
    return exit_code


def needs_inputs_hint(config) -> str | None:
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


def _measure_and_report(config, session, hub, workload, family_index: int,
                        instance_index: int = 0) -> int:
    extra = _start_workload(config, session, hub, workload, family_index, instance_index)
    runs = measure_workload(config, session, workload)
    return _finish_workload(config, session, hub, workload, runs, extra, family_index,
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


def _start_workload(config, session, hub, workload, family_index: int,
                    instance_index: int) -> list[Run]:
    """``ireebench_workload_start``, then the cold start's rows."""
    pm = config.pm
    _begin(config, hub, workload, family_index, instance_index)
    call_hook(pm, "ireebench_workload_start", config=config, session=session, workload=workload)
    return [run for run in call_hook(pm, "ireebench_measure_cold_start", config=config,
                                     session=session, workload=workload) if run is not None]


def _finish_workload(config, session, hub, workload, runs, extra, family_index: int,
                     instance_index: int) -> int:
    """Numbers the rows, ``ireebench_workload_finish``, extra rows, then the report."""
    pm = config.pm
    for run in runs + extra:  # Google Benchmark numbers the benchmarks that run
        run.family_index = family_index
        run.per_family_instance_index = instance_index
    try:
        call_hook(pm, "ireebench_workload_finish", config=config, session=session,
                  workload=workload, runs=runs)
        for rows in call_hook(pm, "ireebench_report_extra_rows", config=config,
                              workload=workload, runs=runs):
            extra.extend(rows or [])
    except BaseException:
        stamp_rows(config, runs)
        hub.report(runs)  # what was measured is reported, whatever failed after
        raise
    finally:
        workload.last_batch = None  # results released before the next workload
    stamp_rows(config, runs + extra)  # a point's rows say which point (a sweep, a suite)
    hub.report(runs, extra)
    return 1 if any(run.error_occurred for run in runs) else 0


# --- a run of several points (sweeps, suites) -----------------------------------


@dataclass
class _Family:
    """Google Benchmark's numbering: a family per function (and prefix), an
    instance per point (``family_index``, ``per_family_instance_index``)."""

    indices: dict = field(default_factory=dict)  # family -> [family index, instances]

    def number(self, function: str, prefix: str) -> tuple[int, int]:
        entry = self.indices.setdefault((prefix, function), [len(self.indices), 0])
        entry[1] += 1
        return entry[0], entry[1] - 1


def plan_points(config) -> list[PointPlan]:
    """Every point's names, learnt without a device; two points never share a name.

    Every point's devices are checked first (their drivers known: nothing is
    created), so a mistyped device is one line before any module is
    compiled. A point whose module cannot be had (it fails to compile, is
    missing, is not a module) is planned with its error: the run reports it
    as that point's error row and measures the others (a run of one point
    stops with the error, as a plain run does).
    """
    points = points_of(config)
    for point in points:
        try:
            check_drivers(point.config)
        except UsageError as exc:
            raise UsageError(f"{exc} (point {point.label})" if len(points) > 1 else str(exc),
                             exc.exit_code, exc.status) from None
    plans, owners = [], config.stash.setdefault(ROW_POINTS, {})
    for index, point in enumerate(points):
        try:
            functions = module_functions(point.config)
        except UsageError as exc:
            if len(points) == 1:
                raise
            plan = PointPlan(point, index, [unloaded_run_name(point.config)], str(exc))
        else:
            plan = PointPlan(point, index, planned_run_names(point.config, functions),
                             modules_sha256=tuple(image.sha256 for image in
                                                  last_images(point.config)))
        for name in plan.run_names:
            if name in owners:
                raise UsageError(f"points {owners[name].label} and {point.label} both report "
                                 f"{name}; give them different parameters (or suite entries a "
                                 "`name`)")
            owners[name] = point
        plans.append(plan)
    return plans


def run_points(config, hub) -> int:
    """Measures the points of a sweep or suite (see the module docstring)."""
    plans = plan_points(config)
    run_names = [name for plan in plans for name in plan.run_names]
    if _ends_unmeasured(config, hub, run_names):
        return 0
    family = _Family()
    measured, copies = _measured_once(config, [plan for plan in plans if not plan.error])
    hub = _PointsHub(hub, machine_context(config), run_names, copies, family)
    exit_code = 0
    for plan in plans:  # nothing to measure: said first, before the others are measured
        if plan.error and not all(hub.already_reported(name) for name in plan.run_names):
            exit_code = _report_failed(hub, [plan], plan.error, family)
    run = _run_sessions
    if not measures_here(config) or runtime_flags_vary([plan.point for plan in measured]):
        run = _run_point_jobs
    elif interleaves(config):
        run = _interleave
    code, workloads = run(config, hub, measured, family, single=len(plans) == 1)
    exit_code = max(exit_code, code)
    hub.ensure_context()
    hub.finalize()
    for code in call_hook(config.pm, "ireebench_measurements_finish", config=config,
                          workloads=workloads):
        exit_code = max(exit_code, code or 0)
    _release_inputs(workloads)
    return exit_code


def _measured_once(config, plans: list[PointPlan]) -> tuple[list[PointPlan], list]:
    """The points to measure, and ``(measured, other)`` for each point that measures
    the same thing as one measured (identical modules, every other option equal:
    :func:`measurement_key`): it is reported from that measurement, under its
    own names."""
    measured, copies, firsts = [], [], {}
    for plan in plans:
        key = measurement_key(plan)
        first = firsts.get(key)
        same_functions = first is not None and [names.function_of(n) for n in plan.run_names] \
            == [names.function_of(n) for n in first.run_names]
        if not same_functions:
            firsts.setdefault(key, plan)
            measured.append(plan)
            continue
        copies.append((first, plan))
        config.stderr.write(f"ireebench: note: point {plan.point.label} measures the same "
                            f"module (sha256 {plan.modules_sha256[-1][:12]}) with the same "
                            f"options as point {first.point.label}: measured once, reported "
                            "for both\n")
    return measured, copies


class _PointsHub:
    """The hub of a run of points: the context right before the first measurement or
    row, and each benchmark's rows reported again for the points that measure the
    same thing (:func:`_measured_once`), under their own names and parameters.

    So a run of one point refuses its inputs before its context is printed,
    as a plain run does; the name column is sized from every point's names.
    """

    def __init__(self, hub, context, run_names: list[str], copies: list, family: _Family):
        self.hub = hub
        self.context = context
        self.run_names = run_names
        self.reported = False
        self.family = family
        self.copies: dict[str, list] = {}  # run_name -> [(its point, a point reported alike)]
        for first, other in copies:
            for name in first.run_names:
                self.copies.setdefault(name, []).append((first.point, other.point))

    def ensure_context(self) -> None:
        if not self.reported:
            self.reported = True
            self.hub.report_context(self.context, self.run_names)

    def report(self, runs, extra_rows=()) -> None:
        self.ensure_context()
        self.hub.report(runs, extra_rows)
        rows = [*runs, *extra_rows]
        for source, target in self.copies.get(rows[0].run_name if rows else "", ()):
            copied = [_renamed(row, source, target) for row in rows]
            entries = point_context(target.config)  # its own module path and devices
            for row in copied:
                row.provenance = {**row.provenance, **entries}
            numbers = self.family.number(names.function_of(copied[0].run_name),
                                         target.name_prefix)
            for row in copied:
                row.family_index, row.per_family_instance_index = numbers
            self.hub.report(copied[:len(runs)], copied[len(runs):])

    def finalize(self) -> None:
        self.hub.finalize()

    def begin(self, row) -> None:
        self.hub.begin(row)

    def already_reported(self, run_name: str) -> bool:
        return self.hub.already_reported(run_name)


def _renamed(row: Run, source: Point, target: Point) -> Run:
    """A copy of ``row`` (measured for point ``source``) as point ``target`` reports it."""
    function = names.function_of(row.run_name or row.name)
    old = names.family_name(function, source.params, source.name_prefix)
    new = names.family_name(function, target.params, target.name_prefix)
    copy = dataclasses.replace(row, counters=dict(row.counters), samples=list(row.samples),
                               batch_samples=list(row.batch_samples),
                               params=dict(target.params), provenance=dict(row.provenance))
    for attr in ("name", "run_name"):
        value = getattr(copy, attr)
        if value.startswith(old):
            setattr(copy, attr, new + value[len(old):])
    return copy


def _session_groups(plans: list[PointPlan]) -> list[list[PointPlan]]:
    """Points that share a session (the same modules' bytes and session flags),
    grouped in the order of their first point."""
    groups: dict[tuple, list[PointPlan]] = {}
    for plan in plans:
        groups.setdefault(session_key(plan.point.config, plan.modules_sha256),
                          []).append(plan)
    return list(groups.values())


def _error_rows(plan: PointPlan, message: str, family: _Family) -> list[Run]:
    """One error row per benchmark a failed point would have reported."""
    rows = []
    config = plan.point.config
    for run_name in plan.run_names:
        function = names.function_of(run_name)
        family_index, instance = family.number(function, config.name_prefix)
        rows.append(Run(name=names.family_of(run_name), run_name=run_name, function=function,
                        params=dict(config.params), error_occurred=True, error_message=message,
                        time_unit=config.getoption("time_unit") or "ms",
                        repetitions=config.getoption("benchmark_repetitions"),
                        batch_size=config.getoption("batch_size"),
                        family_index=family_index, per_family_instance_index=instance))
    stamp_rows(config, rows)
    return rows


def _report_failed(hub, plans: list[PointPlan], message, family: _Family) -> int:
    for plan in plans:
        rows = _error_rows(plan, str(message), family)
        if rows:
            hub.report(rows)
    return 1


def _open_session(config, session_config) -> Session:
    """Opens a point's session: the run's session until the next one opens."""
    session = Session(session_config)
    config.add_cleanup(functools.partial(_close_session, config, session))
    session.open()
    config.stash[SESSION] = session
    call_hook(config.pm, "ireebench_sessionstart", config=session_config, session=session)
    return session


def _discover(point_config, session) -> list:
    workloads = discover_workloads(point_config, session)
    call_hook(point_config.pm, "ireebench_discovery_finish", config=point_config,
              session=session, workloads=workloads)
    return workloads


def _run_sessions(config, hub, plans: list[PointPlan], family: _Family,
                  single: bool) -> tuple[int, list]:
    """One session per group of points, opened in order, each closed before the next.

    ``single``: the run is one point, whose failure is the run's one-line error.
    """
    exit_code, measured = 0, []
    groups = _session_groups(plans)
    for number, group in enumerate(groups):
        try:
            session = _open_session(config, group[0].point.config)
        except UsageError as exc:
            if single:
                raise
            exit_code = _report_failed(hub, group, exc, family)
            continue
        group_workloads = []
        for plan in group:
            point_config = plan.point.config
            try:
                workloads = _discover(point_config, session)
            except UsageError as exc:
                if single:
                    raise
                exit_code = _report_failed(hub, [plan], exc, family)
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


def _interleave(config, hub, plans: list[PointPlan], family: _Family,
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
    for group in _session_groups(plans):
        try:
            session = _open_session(config, group[0].point.config)
        except UsageError as exc:
            if single:
                raise
            exit_code = _report_failed(hub, group, exc, family)
            continue
        sessions.append(session)
        for plan in group:
            try:
                workloads = _discover(plan.point.config, session)
            except UsageError as exc:
                if single:
                    raise
                exit_code = _report_failed(hub, [plan], exc, family)
                continue
            for workload in workloads:
                numbers = family.number(workload.function.name, plan.point.config.name_prefix)
                if hub.already_reported(workload.run_name):
                    continue  # a worker resumed after a crash: the one before reported it
                pending.append((plan.point.config, session, workload, numbers))
    measurements, workloads = [], [item[2] for item in pending]
    hub.ensure_context()
    for point_config, session, workload, numbers in pending:
        extra = _start_workload(point_config, session, hub, workload, *numbers)
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
                code = _finish_workload(measurement.config, measurement.session, hub,
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


def _run_point_jobs(config, hub, plans: list[PointPlan], family: _Family,
                    single: bool) -> tuple[int, list]:
    """Each point measured alone by the run's executor (:mod:`ireebench.executor`).

    Here, by a process of its own when the points' runtime flags differ
    (IREE's runtime flags are process-global, and drivers read some of them
    once per process: local-task its ``--task_topology_*`` when the driver
    is first created), or on a Ray cluster's node (``--executor=ray``).
    Each is this command line with ``--point_index`` (and JSON on stdout),
    run where the executor runs it; its rows are reported here as each point
    finishes, in whatever order they finish (the executor's). A point whose
    process failed, or that the executor could not measure, is its point's
    error rows.
    """
    exit_code, workloads = 0, []
    jobs = [PointJob(plan.index, plan.point.config, point_command(config, plan.index),
                     plan.point.label, list(plan.run_names))
            for plan in plans
            # a worker resumed after a crash: the one before reported them
            if not (plan.run_names and all(hub.already_reported(n) for n in plan.run_names))]
    by_index = {plan.index: plan for plan in plans}
    # Numbered in the points' order, as a local run numbers them, whatever order
    # the executor's points finish in.
    numbers = {(plan.index, names.function_of(name)):
               family.number(names.function_of(name), plan.point.config.name_prefix)
               for plan in plans for name in plan.run_names}
    stream = outcomes(config, select_executor(config), jobs)  # its refusals: before the context
    try:
        hub.ensure_context()
        for outcome in stream:
            plan = by_index[outcome.job.index]
            code = _report_outcome(config, hub, plan, outcome, family, workloads, numbers)
            exit_code = max(exit_code, code)
    finally:
        stream.close()  # what still runs stops (Ctrl-C, an error)
    return exit_code, workloads


def _report_outcome(config, hub, plan: PointPlan, outcome, family: _Family,
                    workloads: list, numbers: dict) -> int:
    """A point's rows from what its process printed (or its error rows)."""
    report = None
    if not outcome.failure:
        report, _ = split_benchmark_json(outcome.stdout)
    if report is None:
        reason = outcome.failure
        if not reason:
            lines = [line for line in outcome.stderr.splitlines() if line.strip()]
            reason = lines[-1].removeprefix("ireebench: error: ") if lines else \
                f"exit status {outcome.returncode}"
            reason = f"the process of point {plan.point.label} failed: {one_line(reason)}"
        rows = _error_rows(plan, reason, family)
        for row in rows:
            row.provenance = {**row.provenance, **outcome.provenance}
            row.family_index, row.per_family_instance_index = numbers.get(
                (plan.index, row.function), (row.family_index, row.per_family_instance_index))
        if rows:
            hub.report(rows)
        return 1
    if outcome.stderr:
        config.stderr.write(outcome.stderr)
    point_config = plan.point.config
    entries = point_context(point_config) if is_sweep(config) else {}
    for runs in runs_from_benchmark_json(report, point_config.getoption("batch_size")):
        family_index, instance = numbers.get((plan.index, runs[0].function)) or \
            family.number(runs[0].function, point_config.name_prefix)
        for run in runs:
            run.name = names.family_of(run.run_name)
            run.params = dict(point_config.params)
            run.family_index, run.per_family_instance_index = family_index, instance
            # What this run knows of the point (its module as given here) and where
            # the executor measured it (host_name) win over what its process said.
            run.provenance = {**run.provenance, **entries, **outcome.provenance}
        workloads.append(named_workload(point_config, runs[0].function, runs[0].time_unit))
        workloads[-1].params = dict(point_config.params)
        hub.report(runs)
    return outcome.returncode


# --- repetitions in several processes (--benchmark_processes) -------------------


def run_processes(config, hub) -> int:
    """``--benchmark_processes=N``: the run's repetitions measured by N processes of
    its own, each benchmark reported once with all of them (:mod:`ireebench.processes`).

    Every point's names are learnt first, as for a run of points (a mistyped
    device or a module that cannot be had is one line before any process
    starts); then the run's executor (``local``) runs this command line with
    ``--process_index=I`` for I = 0 .. N-1, one after the other, each
    measuring its share of every benchmark's repetitions (a sweep's points
    interleaved in each process, as here). Once they have ended, each
    benchmark is reported in the points' order: every process's
    repetitions, each with the process that measured it, and the aggregates
    of all of them. A process that failed is one error row per benchmark
    (its reason); the others still count. An interrupt (Ctrl-C, SIGTERM)
    reports what the finished processes measured, the one it stopped as an
    error row, then ends the run.
    """
    plans = plan_points(config)
    run_names = [name for plan in plans for name in plan.run_names]
    if _ends_unmeasured(config, hub, run_names):
        return 0
    processes = processes_of(config)
    jobs = [PointJob(index, config, process_command(config, index),
                     f"process {index + 1} of {processes}", list(run_names))
            for index in range(processes)]
    stream = outcomes(config, select_executor(config), jobs)  # its refusals: before the context
    context = machine_context(config)
    context.extra[CONTEXT_KEY] = processes
    reports: dict[int, dict] = {}  # process index -> run name -> its rows
    failures: dict[int, str] = {}  # process index -> why it has no rows
    interrupted = None
    hub.report_context(context, run_names)
    try:
        for outcome in stream:
            index = outcome.job.index
            report, reason = _process_report(config, outcome)
            if report is None:
                failures[index] = reason
            else:
                reports[index] = report
    except (KeyboardInterrupt, Terminated) as exc:
        interrupted = exc
        running = next((index for index in range(processes)
                        if index not in reports and index not in failures), None)
        if running is not None:
            failures[running] = (f"interrupted by {signal_name(exc)} while running (process "
                                 f"{running + 1} of {processes})")
    finally:
        stream.close()  # what still runs stops (Ctrl-C, an error)
    exit_code, workloads = _report_processes(config, hub, plans, reports, failures)
    if interrupted is not None:
        raise interrupted
    hub.finalize()
    for code in call_hook(config.pm, "ireebench_measurements_finish", config=config,
                          workloads=workloads):
        exit_code = max(exit_code, code or 0)
    return exit_code


def _process_report(config, outcome) -> tuple[dict | None, str]:
    """The rows a process printed, by run name (its stderr passed on), or why none."""
    label = outcome.job.label
    report = None
    if not outcome.failure:
        report, _ = split_benchmark_json(outcome.stdout)
    if report is None:
        reason = outcome.failure
        if not reason:
            lines = [line for line in outcome.stderr.splitlines() if line.strip()]
            reason = lines[-1].removeprefix("ireebench: error: ") if lines else \
                f"exit status {outcome.returncode}"
        return None, f"{label} failed: {one_line(reason)}"
    if outcome.stderr:
        config.stderr.write(outcome.stderr)
    rows: dict[str, list[Run]] = {}
    for runs in runs_from_benchmark_json(report, config.getoption("batch_size")):
        rows.setdefault(runs[0].run_name, []).extend(runs)
    return rows, ""


def _report_processes(config, hub, plans: list[PointPlan], reports: dict,
                      failures: dict) -> tuple[int, list]:
    """Each planned benchmark once, in the points' order: the rows of every process
    that measured it (:func:`ireebench.processes.merge_repetitions`), then the extra
    rows that follow it (a cold start, dispatch statistics) from the first process
    that reported them."""
    exit_code, workloads = 0, []
    statistics = STATISTICS + list(config.stash.get(EXTRA_STATISTICS, []))
    planned = {name for plan in plans for name in plan.run_names}
    extras = _extra_rows(reports, planned)
    family = _Family()  # for a benchmark no process reported: the points' order
    for plan in plans:
        if plan.error:  # its module cannot be had: said once, not once per process
            exit_code = _report_failed(hub, [plan], plan.error, family)
            continue
        point_config = plan.point.config
        repetitions = point_config.getoption("benchmark_repetitions")
        for name in plan.run_names:
            numbers = family.number(names.function_of(name), point_config.name_prefix)
            shares = []
            for index in sorted({*reports, *failures}):
                rows = reports[index].get(name) if index in reports else None
                if rows is None:
                    reason = failures.get(index) or f"process {index + 1} reported no " \
                                                      f"{name}"
                    rows = [row for row in _error_rows(plan, reason, _Family())
                            if row.run_name == name]
                    for row in rows:
                        row.family_index, row.per_family_instance_index = numbers
                shares.append((index, rows))
            if not shares:
                continue
            measured = [rows[0] for _, rows in shares if not rows[0].error_occurred]
            if measured:  # the processes' own numbering, as a run of one process numbers
                numbers = measured[0].family_index, measured[0].per_family_instance_index
            merged = merge_repetitions(shares, repetitions, statistics)
            extra = extras.get(name, [])
            for row in merged + extra:
                row.name = names.family_of(row.run_name)
                row.params = dict(point_config.params)
                row.family_index, row.per_family_instance_index = numbers
            hub.report(merged, extra)
            if any(row.error_occurred for row in merged):
                exit_code = 1
            workloads.append(named_workload(point_config, names.function_of(name),
                                            merged[0].time_unit))
            workloads[-1].params = dict(point_config.params)
    return exit_code, workloads


def _extra_rows(reports: dict, planned: set[str]) -> dict[str, list[Run]]:
    """Planned run name -> the rows that followed it in the first process that
    reported them (rows a plugin appends: their names are not planned)."""
    extras: dict[str, list[Run]] = {}
    seen: set[str] = set()
    for index in sorted(reports):
        owner = None
        for name, rows in reports[index].items():
            if name in planned:
                owner = name
                continue
            if owner is None or name in seen:
                continue
            seen.add(name)
            for row in rows:
                row.extra_row = True
                row.provenance = {**row.provenance, PROCESS_KEY: str(index)}
            extras.setdefault(owner, []).extend(rows)
    return extras
