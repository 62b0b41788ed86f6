"""A run of several points (sweeps, suites) or processes: what :mod:`ireebench.protocol`
needs to plan, number and report them, with no hook of its own."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from . import names
from ._discovery import module_functions, planned_run_names, unloaded_run_name
from ._modules import last_images
from ._processes import CONTEXT_KEY, PROCESS_KEY, merge_repetitions, process_command, processes_of
from ._session import check_drivers
from .backend import machine_context, runs_from_benchmark_json
from .errors import Terminated, UsageError, one_line, signal_name
from .executor import PointJob, outcomes, select_executor
from .lib.gbench_json import split_benchmark_json
from .native.backend import named_workload
from .outfiles import refuse_unmeasured
from .points import (
    ROW_POINTS,
    Point,
    PointPlan,
    is_sweep,
    measurement_key,
    point_command,
    point_context,
    points_of,
    session_key,
    stamp_rows,
)
from .results import Run
from .stats import EXTRA_STATISTICS, STATISTICS


def ends_unmeasured(config, hub, run_names: list[str], hint=lambda: "") -> bool:
    """Whether the run ends before measuring (exit 0): ``--benchmark_list_tests``
    (``hub`` None) prints the names; no name is Google Benchmark's behaviour on
    a filter that matches nothing (its line, no context, no rows), with
    ``hint()``'s line where it has one; given an output flag, it then fails
    (:func:`ireebench.outfiles.refuse_unmeasured`)."""
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
    refuse_unmeasured(config)
    return True


@dataclass
class Family:
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


def measured_once(config, plans: list[PointPlan]) -> tuple[list[PointPlan], list]:
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


class PointsHub:
    """The hub of a run of points: the context right before the first measurement or
    row, and each benchmark's rows reported again for the points that measure the
    same thing (:func:`measured_once`), under their own names and parameters.

    So a run of one point refuses its inputs before its context is printed,
    as a plain run does; the name column is sized from every point's names.
    """

    def __init__(self, hub, context, run_names: list[str], copies: list, family: Family):
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


def session_groups(plans: list[PointPlan]) -> list[list[PointPlan]]:
    """Points that share a session (the same modules' bytes and session flags),
    grouped in the order of their first point."""
    groups: dict[tuple, list[PointPlan]] = {}
    for plan in plans:
        groups.setdefault(session_key(plan.point.config, plan.modules_sha256),
                          []).append(plan)
    return list(groups.values())


def _error_rows(plan: PointPlan, message: str, family: Family) -> list[Run]:
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


def report_failed(hub, plans: list[PointPlan], message, family: Family) -> int:
    for plan in plans:
        rows = _error_rows(plan, str(message), family)
        if rows:
            hub.report(rows)
    return 1


def run_point_jobs(config, hub, plans: list[PointPlan], family: Family,
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


def _report_outcome(config, hub, plan: PointPlan, outcome, family: Family,
                    workloads: list, numbers: dict) -> int:
    """A point's rows from what its process printed (or its error rows)."""
    report, reason = _printed(config, outcome)
    if report is None:
        if not outcome.failure:
            reason = f"the process of point {plan.point.label} failed: {one_line(reason)}"
        rows = _error_rows(plan, reason, family)
        for row in rows:
            row.provenance = {**row.provenance, **outcome.provenance}
            row.family_index, row.per_family_instance_index = numbers.get(
                (plan.index, row.function), (row.family_index, row.per_family_instance_index))
        if rows:
            hub.report(rows)
        return 1
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


def measure_processes(config, hub) -> tuple[int, list | None]:
    """``--benchmark_processes=N``: the run's repetitions measured by N processes of
    its own, each benchmark reported once with all of them (:mod:`ireebench._processes`),
    the reports finalized; the exit code and the workloads (None: ended unmeasured).

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
    if ends_unmeasured(config, hub, run_names):
        return 0, None
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
    return exit_code, workloads


def _printed(config, outcome) -> tuple[dict | None, str]:
    """The report a point's or process's process printed (its stderr passed on), or
    None and why not: the executor's reason, else its last line (or exit status)."""
    if outcome.failure:
        return None, outcome.failure
    report = split_benchmark_json(outcome.stdout)[0]
    if report is not None:
        if outcome.stderr:
            config.stderr.write(outcome.stderr)
        return report, ""
    lines = [line for line in outcome.stderr.splitlines() if line.strip()]
    return None, (lines[-1].removeprefix("ireebench: error: ") if lines
                  else f"exit status {outcome.returncode}")


def _process_report(config, outcome) -> tuple[dict | None, str]:
    """The rows a process printed, by run name (its stderr passed on), or why none."""
    report, reason = _printed(config, outcome)
    if report is None:
        return None, f"{outcome.job.label} failed: {one_line(reason)}"
    rows: dict[str, list[Run]] = {}
    for runs in runs_from_benchmark_json(report, config.getoption("batch_size")):
        rows.setdefault(runs[0].run_name, []).extend(runs)
    return rows, ""


def _report_processes(config, hub, plans: list[PointPlan], reports: dict,
                      failures: dict) -> tuple[int, list]:
    """Each planned benchmark once, in the points' order: the rows of every process
    that measured it (:func:`ireebench._processes.merge_repetitions`), then the extra
    rows that follow it (a cold start, dispatch statistics) from the first process
    that reported them."""
    exit_code, workloads = 0, []
    statistics = STATISTICS + list(config.stash.get(EXTRA_STATISTICS, []))
    planned = {name for plan in plans for name in plan.run_names}
    extras = _extra_rows(reports, planned)
    family = Family()  # for a benchmark no process reported: the points' order
    for plan in plans:
        if plan.error:  # its module cannot be had: said once, not once per process
            exit_code = report_failed(hub, [plan], plan.error, family)
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
                    rows = [row for row in _error_rows(plan, reason, Family())
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
