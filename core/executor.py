"""Executors: where the points of a run are measured (``--executor=NAME``).

A run is a set of independent measurements: the points of a sweep or a
suite, a shard of them, or a plain run's one configuration (see
:mod:`ireebench.points`). The backend decides *how* a point is measured;
the executor decides *where*. Plugins provide executors through
``ireebench_executors``, as they provide backends; ``--executor`` picks
one (:func:`select_executor`), and a backend that measures its points
where the executor says has the capability ``executors``
(:data:`ireebench.backend.EXECUTORS`).

* ``local`` (the default, the built-in ``local_executor`` plugin) measures
  here: the backend measures its points in this process, and runs a point
  in a process of its own only where it must (the points' runtime flags
  differ): :attr:`Executor.measures_here` is true.
* An executor that measures elsewhere (the ``ray_executor`` plugin's
  ``ray``: each point a Ray task on a node that holds its device) gets
  every point, a plain run's one too.

Either way the unit an executor runs is a :class:`PointJob`: one point,
measured alone by ireebench's own command line (``--point_index``: the
run's command line again, :func:`ireebench.points.point_command`, so the
same plugins, flags and worker measure it, wherever it runs). The
executor yields a :class:`PointOutcome` per job as each finishes, in any
order: what the point's process printed (its JSON report), or why it has
none. The backend turns outcomes into rows and reports them as they come;
the run's outputs (console, files, the store, the report) are this
process's alone, written once, as for a local run.

An executor never reports a point twice, and reports every job it was
given unless the run is interrupted: a job it cannot measure (its node died
once too often, its device hung) is an outcome with a ``failure``, which
the backend reports as that point's error rows. Closing the iterator (an
interrupt, an error) must stop what is still running.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from .errors import UsageError
from .hookcall import collect_named
from .stash import StashKey

# The name of the default executor: points measured on this machine.
LOCAL = "local"

# The run's executor, once selected.
EXECUTOR = StashKey["Executor"]()

# What a point's own process has in its environment besides what it inherits,
# wherever it runs: the run that starts it warns about the machine, once.
POINT_PROCESS_ENV = {"IREEBENCH_ENVIRONMENT_WARNINGS": "false"}


@dataclass
class PointJob:
    """One point of the run, to be measured alone.

    :ivar index: the point's index among the run's points (``--point_index``).
    :ivar config: the point's :class:`~ireebench.config.Config` (its devices,
        modules, inputs: what it needs where it runs).
    :ivar command: the ireebench arguments that measure only this point and
        print its JSON report on stdout (``python -m ireebench COMMAND``).
    :ivar label: where it comes from, for messages (``bs=4``, ``[[benchmark]] 2 of
        s.toml``).
    :ivar run_names: the names of the benchmarks it reports.
    """

    index: int
    config: object
    command: list[str]
    label: str = "the run"
    run_names: list[str] = field(default_factory=list)


@dataclass
class PointOutcome:
    """How one job ended.

    :ivar job: the :class:`PointJob`.
    :ivar stdout: what its ireebench process printed: a Google Benchmark
        JSON report first.
    :ivar stderr: what it wrote on stderr (passed on to this run's stderr).
    :ivar returncode: its exit status (0, or 1 when a benchmark failed).
    :ivar failure: why it has no report (its process could not run, or was
        lost with its machine once too often): the point's error rows say
        it; empty when the process ran.
    :ivar provenance: entries each of its rows carries, saying where it was
        measured (``host_name``, an executor's own such as ``ray_node_id``):
        text, lists or objects, with the meaning of the context keys of the
        same names (:func:`ireebench.comparison.machine.row_context`).
    """

    job: PointJob
    stdout: str = ""
    stderr: str = ""
    returncode: int = 0
    failure: str = ""
    provenance: dict = field(default_factory=dict)


class Executor:
    """Where the points of a run are measured.

    Subclass it and override :meth:`run_points`, or give it as a callable::

        Executor("slurm", run_points=submit_to_slurm, description="each point a Slurm job")

    :param name: what ``--executor`` selects it by.
    :param run_points: ``run_points(config, jobs) -> iterable of PointOutcome``:
        measure each :class:`PointJob` (``python -m ireebench *job.command``
        where it should run) and yield its outcome as it finishes; closing
        the iterator stops what still runs.
    :param description: one line for ``ireebench plugins`` and ``--help``.
    :param measures_here: true for an executor whose points the backend may
        measure in this process (sessions shared, repetitions interleaved);
        it then only gets the points that need a process of their own.
    """

    name = ""
    description = ""
    measures_here = False

    def __init__(self, name: str | None = None, run_points=None,
                 description: str | None = None, measures_here: bool | None = None):
        if name is not None:
            self.name = name
        if description is not None:
            self.description = description
        if measures_here is not None:
            self.measures_here = measures_here
        self._run_points = run_points

    def run_points(self, config, jobs: list[PointJob]) -> Iterable[PointOutcome]:
        if self._run_points is None:
            raise NotImplementedError(f"executor {self.name!r} has no run_points()")
        return self._run_points(config, jobs)

    def __repr__(self) -> str:
        return f"<Executor {self.name!r}>"


def select_executor(config) -> Executor:
    """The executor ``--executor`` names (``local`` by default), from every plugin's
    ``ireebench_executors`` (a name two plugins provide names both); kept for the run."""
    chosen = config.run.stash.get(EXECUTOR, None)
    if chosen is not None:
        return chosen
    executors = collect_named(config.pm, "ireebench_executors", "executor", config=config)
    name = config.getoption("executor") or LOCAL
    if name not in executors:
        raise UsageError(f"--executor={name}: unknown executor (known: "
                         f"{', '.join(sorted(executors)) or 'none'})")
    chosen = executors[name]
    if not isinstance(chosen, Executor):
        raise UsageError(f"executor {name!r} is not an ireebench.Executor")
    if not chosen.name:
        chosen.name = name
    config.run.stash[EXECUTOR] = chosen
    return chosen


def measures_here(config) -> bool:
    """May this run's points be measured in this process (the ``local`` executor)?"""
    return select_executor(config).measures_here


def outcomes(config, executor: Executor, jobs: list[PointJob]) -> Outcomes:
    """The executor's outcomes, each job at most once (:class:`Outcomes`).

    ``executor.run_points`` is called now, so that what it refuses before it
    measures (an unreachable cluster, a device no node has) is raised here,
    before the run's context is reported."""
    return Outcomes(executor.run_points(config, jobs))


class Outcomes:
    """An executor's outcomes, each job at most once; :meth:`close` (an interrupt, an
    error, the end) stops what the executor still runs, also before the first."""

    def __init__(self, iterable: Iterable[PointOutcome]):
        self._iterator = iter(iterable)
        self._seen: set[int] = set()

    def __iter__(self) -> Iterator[PointOutcome]:
        for outcome in self._iterator:
            if outcome.job.index in self._seen:  # never reported twice, whatever happened
                continue
            self._seen.add(outcome.job.index)
            yield outcome

    def close(self) -> None:
        close = getattr(self._iterator, "close", None)
        if close is not None:
            close()


__all__ = ["LOCAL", "POINT_PROCESS_ENV", "Executor", "PointJob", "PointOutcome", "measures_here",
           "select_executor"]
