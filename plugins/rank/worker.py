"""The warm workers: one forked process per device, measuring candidates one at a time.

A worker is forked from the ranking process (plugins loaded, the run
configured, no device created: GPU drivers must start in the worker), puts
itself in a process group of its own (the ranking kills the group, so a
native pass it started dies too) and dies with its parent
(``PR_SET_PDEATHSIG``). Then, once: its CPUs (``os.sched_setaffinity``, and
a ``local-task`` topology), the device, the baseline's module, function
and inputs (:class:`~.measure.WarmDevice`). It says ``ready`` (or
``failed`` with the one-line error) and serves requests until its pipe
closes:

* ``measure JOB``: answers ``begin`` at once (the moment the candidate
  starts on the device: its timeout counts from here, never from a queue),
  then ``result MEASUREMENT``;
* ``rerank JOBS ROUNDS SEED``: ``begin``, then ``rerank RESULT``;
* ``stop``.

The channel is the one of ``--isolation=worker`` (:mod:`ireebench.lib.channel`):
length-prefixed JSON frames, rows encoded as its messages encode them. A
worker that dies (a crash) or hangs (killed at its deadline) costs the
candidate it was running; :class:`WorkerProcess` tells how it died
(:func:`ireebench.lib.channel.describe_death`) and the ranking starts another.
An error that is not the candidate's (a plugin's, a bug) is sent as
``error`` and ends the ranking with it.
"""

from __future__ import annotations

import contextlib
import faulthandler
import glob
import os
import select
import signal
import time

import iree.runtime as rt
from ireebench.errors import EXIT_FAILED, EXIT_OK, EXIT_PLUGIN_ERROR, UsageError
from ireebench.lib.channel import (
    Channel,
    ForwardedStream,
    Frames,
    describe_death,
    die_with,
    encode_error,
    encode_message,
    flush,
    fork_worker,
    signal_group,
)
from ireebench.streams import CliStream

from .devices import DeviceSpec
from .measure import Job, WarmDevice
from .replay import ReplayDevice

# How long an idle worker has to end after "stop" before it is killed.
STOP_SECONDS = 2.0
# The pipes of the workers this process holds: a worker forked later closes
# them (or it would hold the others' pipes open).
_HELD: set[int] = set()


def _iree_threads() -> list[str]:
    """The names of this process's IREE task-system threads (``iree-worker-0`` ...)."""
    names = []
    for path in glob.glob("/proc/self/task/*/comm"):
        with contextlib.suppress(OSError), open(path) as handle:
            name = handle.read().strip()
            if name.startswith("iree-"):
                names.append(name)
    return names


def check_forkable(spec: DeviceSpec) -> None:
    """A worker forked from a process whose ``local-task`` driver already runs
    (its task system's threads do not survive a fork) would wait forever for
    them: refused in one line instead."""
    if spec.driver == "local-task" and _iree_threads():
        raise UsageError(f"--devices={spec.uri}: this process already runs IREE's local-task "
                         "task system (a device was created here), which a forked worker "
                         "cannot use: rank from a fresh process (the ireebench command) or "
                         "on local-sync")


def stop_or_kill(worker) -> None:
    """Asks an idle worker (a :class:`WorkerProcess`, a ``remote.RayWorker``) to stop and
    waits :data:`STOP_SECONDS` for its end; kills it if the request fails or it has not
    ended by then."""
    if worker.send("stop"):
        deadline = time.monotonic() + STOP_SECONDS
        while not worker.ended and time.monotonic() < deadline:
            select.select([worker.replies], [], [], max(0.0, deadline - time.monotonic()))
            worker.receive()
        if worker.ended:
            return
    worker.kill()


class WorkerHandle:
    """What the ranking holds of a warm worker, forked here or on a cluster's node
    (``remote.RayWorker``): its replies and the ranking's state of it."""

    def __init__(self, spec: DeviceSpec, pid: int, replies: int):
        self.spec = spec
        self.pid = pid
        self.replies = replies  # the non-blocking descriptor to select() on
        self._frames = Frames()
        self.ended = False  # its replies pipe is at its end
        self.wait_status: int | None = None
        self.ready = False
        self.lost = ""  # why it was lost with its node (never here)
        self.where: dict = {}  # what its rows say of where they were measured
        self.busy = None  # what it is measuring (the ranking's task)
        self.started_at: float | None = None  # its "begin", for the deadline
        self.deadline: float | None = None
        self.since_baseline = 0  # candidates since its last baseline
        self.sequence = 0  # measurements it made (its position for drift)

    def receive(self) -> list:
        """The messages that have arrived (``(kind, args)``); sets ``ended`` at the end."""
        messages, self.ended = self._frames.drain(self.replies, self.ended)
        return messages


class WorkerProcess(WorkerHandle):
    """The ranking's handle of one forked warm worker."""

    def __init__(self, spec: DeviceSpec, pid: int, requests: int, replies: int):
        super().__init__(spec, pid, replies)
        self._requests = requests

    @classmethod
    def start(cls, config, spec: DeviceSpec, function: str, baseline: Job,
              check_outputs: bool) -> WorkerProcess:
        """Forks a worker for ``spec`` (it opens the device; wait for ``ready``)."""
        check_forkable(spec)
        requests_r, requests_w = os.pipe()
        replies_r, replies_w = os.pipe()
        parent = os.getpid()
        pid = fork_worker(lambda: _serve(config, spec, function, baseline, check_outputs,
                                         requests_r, replies_w, parent),
                          (requests_r, replies_w), (requests_w, replies_r),
                          (config.stdout, config.stderr), tuple(_HELD))
        os.set_blocking(replies_r, False)
        _HELD.update((requests_w, replies_r))
        return cls(spec, pid, requests_w, replies_r)

    def send(self, kind: str, *args) -> bool:
        """One request; False when the worker is gone."""
        frame = memoryview(encode_message(kind, *args))
        try:
            while frame:
                frame = frame[os.write(self._requests, frame):]
        except OSError:
            return False
        return True

    def kill(self) -> None:
        signal_group(self.pid, signal.SIGKILL)

    def reap(self) -> int:
        """Waits for the process; its wait status."""
        if self.wait_status is None:
            try:
                _, self.wait_status = os.waitpid(self.pid, 0)
            except ChildProcessError:
                self.wait_status = 0
        return self.wait_status

    def death(self) -> str:
        """How it ended: ``crashed: SIGSEGV (Segmentation fault)``."""
        return describe_death(self.reap())

    def close(self, stop: bool = True) -> None:
        """Asks an idle worker to stop (killed if it has not within
        :data:`STOP_SECONDS`), or kills it; reaps it, closes the pipes."""
        if stop and not self.ended and self.wait_status is None:
            stop_or_kill(self)
        else:
            self.kill()
        for fd in (self._requests, self.replies):
            _HELD.discard(fd)
        with contextlib.suppress(OSError):
            os.close(self._requests)
        self.reap()
        with contextlib.suppress(OSError):
            os.close(self.replies)


class LocalWorkers:
    """The warm workers of this machine (``--executor=local``): each forked from the
    ranking. The ranking's other pool is :class:`.remote.RayWorkers`."""

    retries = 0  # a worker cannot be lost here without its machine

    def __init__(self, config):
        self.config = config

    def start(self, spec: DeviceSpec, function: str, baseline: Job, check_outputs: bool,
              metric: str) -> WorkerProcess:
        return WorkerProcess.start(self.config, spec, function, baseline, check_outputs)

    def close(self) -> None:
        pass


def _serve(config, spec: DeviceSpec, function: str, baseline: Job, check_outputs: bool,
           requests: int, replies: int, parent: int, forward_streams: bool = False) -> int:
    """The worker process (see the module docstring); its exit status.

    ``forward_streams``: what the run writes goes to the ranking as ``write``
    messages (a worker on another machine, :mod:`.serve`), not to this process's
    own stdout and stderr (a forked worker's: the ranking's terminal)."""
    die_with(parent)
    # A candidate's crash is its state, reported by the ranking: no traceback
    # of this process on stderr (pytest and -X faulthandler enable one).
    faulthandler.disable()
    with contextlib.suppress(ValueError, OSError):
        signal.set_wakeup_fd(-1)
    # The ranking ends its workers itself: a Ctrl-C is for it alone.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for signum in (signal.SIGTERM, signal.SIGCHLD, signal.SIGTSTP, signal.SIGCONT,
                   signal.SIGPIPE):
        signal.signal(signum, signal.SIG_DFL)
    channel = Channel(replies)
    if forward_streams or not isinstance(config.stdout, CliStream):  # the Python API's
        config.stdout = ForwardedStream(channel, "stdout")
        config.stderr = ForwardedStream(channel, "stderr")
    try:
        if spec.cpus:
            os.sched_setaffinity(0, spec.cpus)
        for flag in spec.runtime_flags(config.runtime_flags):
            rt.flags.parse_flags(flag)
        # --replay: each measurement a native replay process (nothing stays warm).
        device = ReplayDevice if config.getoption("replay", "") else WarmDevice
        warm = device(config, spec.uri, function, baseline, check_outputs).open()
    except BaseException as exc:  # noqa: BLE001 - told to the ranking
        channel.send("failed", encode_error(exc))
        return EXIT_FAILED
    channel.send("ready", {"pid": os.getpid(), "device": warm.describe(),
                           "cpus": sorted(os.sched_getaffinity(0)) if spec.cpus else []})
    frames = Frames()
    try:
        while True:
            chunk = os.read(requests, 1 << 16)
            if not chunk:
                return EXIT_OK
            for kind, args in frames.feed(chunk):
                if kind == "stop":
                    return EXIT_OK
                channel.send("begin")
                if kind == "measure":
                    measured = warm.measure(Job.from_data(args[0]))
                    channel.send("result", measured.to_data())
                elif kind == "rerank":
                    jobs = [Job.from_data(data) for data in args[0]]
                    channel.send("rerank", warm.rerank(jobs, args[1], args[2]).to_data())
    except BaseException as exc:  # noqa: BLE001 - a plugin's error or a bug: the run's end
        channel.send("error", encode_error(exc))
        return EXIT_PLUGIN_ERROR
    finally:
        flush(config.stdout, config.stderr)
