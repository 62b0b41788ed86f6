"""The timed loops of the four scenarios: what is issued when, and when it completes.

Each loop returns a :class:`Timeline`: per query its scheduled, issued and
completed times (``time.perf_counter`` seconds). Everything a loop can
prepare is prepared before its clock starts (the samples' argument lists
and fences, the Server's whole schedule); inside, a query costs one
``invoke`` per sample and the reading of the clock.

* **Server** (open loop): query ``i`` is issued at its scheduled time
  whatever happened before; the issuing thread sleeps until then (the GIL
  released, its timer slack lowered to 1 ns and its priority real-time
  where Linux allows: :class:`_Priority`) and never waits for a result.
  One thread per lane waits on that lane's fences in order and stamps each completion, so a query that waits behind a slow
  one is late by the whole wait: latency is completion - *scheduled* time,
  and no stall can hide by delaying the queries after it (coordinated
  omission). The issue lag (issued - scheduled) is kept apart.
* **SingleStream**: the next query is issued when the last one completes.
* **MultiStream**: each query is ``samples_per_query`` samples issued at
  once (spread over the lanes); the next query is issued when all of them
  completed.
* **Offline**: samples are issued as fast as the device takes them, with
  :data:`~.settings.OFFLINE_DEPTH` samples in flight per lane, until the
  duration rules are met; then the rest completes.

The closed-loop scenarios stop issuing once both of LoadGen's duration
rules hold (at least the minimum query count, and the last query issued at
least the minimum duration after the first).
"""

from __future__ import annotations

import collections
import contextlib
import ctypes
import os
import sys
import threading
import time
from dataclasses import dataclass, field

from .invocations import Invocations
from .settings import OFFLINE_DEPTH

# How long a lane's waiter blocks before it looks whether the run was
# abandoned (an interrupt, a failure); a completion wakes it at once.
POLL_NS = 100_000_000
# The closed-loop scenarios make the samples beyond the minimum count in chunks
# between queries, the first of this many, each next one twice as large.
CHUNK = 256
# Server: the first query is scheduled this long after the clock starts, so
# that every lane's waiter is already waiting.
LEAD_SECONDS = 0.005
PR_SET_TIMERSLACK = 29  # prctl(2)
ISSUE_BEHIND = 0.05  # seconds late: the Server's schedule is lost (see _Priority)


@dataclass
class Timeline:
    """What happened to every query of one run (perf_counter seconds)."""

    start: float  # the run's time 0
    scheduled: list[float]
    issued: list[float]
    completed: list[float]
    samples_per_query: int = 1
    lanes: list[int] = field(default_factory=list)  # the lane of each query's first sample
    cpu_seconds: float = 0.0
    issue_priority: str = ""  # Server: why its issuing thread was not real-time, if not

    @property
    def queries(self) -> int:
        return len(self.completed)


class ScenarioFailure(Exception):
    """An invocation or a fence failed; the message is the runtime's."""


@contextlib.contextmanager
def _fine_timer_slack():
    """This thread's timer slack at 1 ns (Linux's default of 50 us would be issue lag)."""
    if not sys.platform.startswith("linux"):
        yield
        return
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
        previous = prctl(PR_SET_TIMERSLACK + 1, 0, 0, 0, 0)  # PR_GET_TIMERSLACK
        prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0)
    except (OSError, AttributeError):
        yield
        return
    try:
        yield
    finally:
        prctl(PR_SET_TIMERSLACK, max(int(previous), 1), 0, 0, 0)


class _Priority:
    """The issuing thread at real-time priority (SCHED_FIFO 1) where this process may
    (root, CAP_SYS_NICE, an RLIMIT_RTPRIO): a sleeping thread of normal priority on a
    busy machine wakes milliseconds late (issue lag p99 2 ms at load 3 on 2 CPUs), a
    real-time one at once (0.04 ms). It only sleeps and issues; when the schedule is
    lost anyway (ISSUE_BEHIND late: the run cannot keep up, and is INVALID) it goes
    back to normal priority, so that it never takes a CPU from the work it issues."""

    def __init__(self):
        self.raised = False
        self.denied = ""

    def __enter__(self):
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))  # this thread
            self.raised = True
        except (AttributeError, OSError) as exc:
            self.denied = getattr(exc, "strerror", None) or type(exc).__name__
        return self

    def lower(self) -> None:
        if self.raised:
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
            self.raised = False

    def __exit__(self, *exc_info):
        self.lower()


class _LaneWaiter(threading.Thread):
    """Stamps the completion of a lane's samples, in the lane's order."""

    def __init__(self, work: list, completed: list, abandoned: threading.Event):
        super().__init__(name="ireebench-scenario-lane", daemon=True)
        self.work = work  # [(query index, sample)], in issue order
        self.completed = completed
        self.abandoned = abandoned
        self.error: BaseException | None = None

    def run(self) -> None:
        clock, completed, abandoned = time.perf_counter, self.completed, self.abandoned
        try:
            for index, sample in self.work:
                fence = sample.done
                while not fence.wait(timeout=POLL_NS):
                    if abandoned.is_set():
                        return
                completed[index] = clock()
                sample.arguments = sample.results = None  # release its buffers now
        except Exception as exc:  # noqa: BLE001 - a failed fence ends the run
            self.error = exc
            abandoned.set()


def run_server(invocations: Invocations, offsets) -> Timeline:
    """Issues each query at ``offsets[i]`` seconds after the start, whatever came before."""
    count = len(offsets)
    samples = invocations.make(count)
    completed = [0.0] * count
    issued = [0.0] * count
    abandoned = threading.Event()
    work = [[] for _ in range(invocations.lanes)]
    for index, sample in enumerate(samples):
        work[sample.lane].append((index, sample))
    waiters = [_LaneWaiter(lane, completed, abandoned) for lane in work]
    for waiter in waiters:
        waiter.start()
    invoke, function = invocations.invoke, invocations.function
    clock, sleep, process_time = time.perf_counter, time.sleep, time.process_time
    calls = [(sample.arguments, sample.results) for sample in samples]
    del samples, work  # the waiters hold them until they complete
    try:
        with _fine_timer_slack(), _Priority() as priority:
            cpu_start = process_time()
            start = clock() + LEAD_SECONDS
            targets = [start + float(offset) for offset in offsets]
            for index in range(count):
                remaining = targets[index] - clock()
                if remaining > 0:
                    sleep(remaining)
                elif remaining < -ISSUE_BEHIND and priority.raised:
                    priority.lower()
                issued[index] = clock()
                arguments, results = calls[index]
                calls[index] = None
                invoke(function, arguments, results)
                if abandoned.is_set():
                    break
            for waiter in waiters:
                waiter.join()
            cpu = process_time() - cpu_start
    except BaseException:
        abandoned.set()
        for waiter in waiters:  # each returns within POLL_NS: none outlives the run's session
            waiter.join()
        raise
    _raise_failure(waiters)
    timeline = Timeline(start, targets, issued, completed, 1,
                        [index % invocations.lanes for index in range(count)], cpu)
    timeline.issue_priority = "" if priority.denied == "" else \
        f"the issuing thread at normal priority (real-time priority: {priority.denied})"
    return timeline


def _raise_failure(waiters) -> None:
    for waiter in waiters:
        if waiter.error is not None:
            raise ScenarioFailure(str(waiter.error)) from waiter.error


def _rules_met(settings, queries: int, elapsed: float) -> bool:
    return queries >= settings.min_queries and elapsed >= settings.min_duration


class _Pool:
    """Samples made ahead: the minimum count's before the clock starts, then chunks of
    doubling size between queries (never inside one)."""

    def __init__(self, invocations: Invocations, initial: int):
        self.invocations = invocations
        self.ready: collections.deque = collections.deque(invocations.make(initial))
        self.chunk = CHUNK

    def take(self, count: int) -> list:
        if len(self.ready) < count:
            self.ready.extend(self.invocations.make(max(self.chunk, count)))
            self.chunk *= 2
        return [self.ready.popleft() for _ in range(count)]


def _wait(sample) -> None:
    if sample.done is not None:
        sample.done.wait()


def run_streams(invocations: Invocations, settings) -> Timeline:
    """SingleStream (one sample a query) and MultiStream: the next query when the last is done."""
    per_query = settings.samples_per_query
    pool = _Pool(invocations, settings.min_queries * per_query)
    invoke, function = invocations.invoke, invocations.function
    clock, process_time = time.perf_counter, time.process_time
    issued, completed, lanes = [], [], []
    cpu_start = process_time()
    start = clock()
    while not (issued and _rules_met(settings, len(issued), issued[-1] - issued[0])):
        samples = pool.take(per_query)
        began = clock()
        for sample in samples:
            invoke(function, sample.arguments, sample.results)
        for sample in samples:
            _wait(sample)
        completed.append(clock())
        issued.append(began)
        lanes.append(samples[0].lane)
    cpu = process_time() - cpu_start
    return Timeline(start, list(issued), issued, completed, per_query, lanes, cpu)


def run_offline(invocations: Invocations, settings) -> Timeline:
    """Saturates the lanes: a new sample as soon as one of the oldest completes."""
    pool = _Pool(invocations, settings.min_queries)
    depth = OFFLINE_DEPTH * invocations.lanes
    invoke, function = invocations.invoke, invocations.function
    clock, process_time = time.perf_counter, time.process_time
    issued, completed, lanes = [], [], []
    in_flight: collections.deque = collections.deque()  # (index, sample), oldest first
    cpu_start = process_time()
    start = clock()
    while True:
        stop = issued and _rules_met(settings, len(issued), clock() - start)
        if not stop and len(in_flight) < depth:
            sample = pool.take(1)[0]
            issued.append(clock())
            completed.append(0.0)
            lanes.append(sample.lane)
            invoke(function, sample.arguments, sample.results)
            in_flight.append((len(issued) - 1, sample))
            continue
        if not in_flight:
            break
        index, sample = in_flight.popleft()
        _wait(sample)
        completed[index] = clock()
    cpu = process_time() - cpu_start
    return Timeline(start, [start] * len(issued), issued, completed, 1, lanes, cpu)
