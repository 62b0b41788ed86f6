"""The supervisor: the run in a forked worker, so that the measurement survives the function.

In process, a function that never returns cannot be interrupted (the call
into the runtime does not come back to Python, where signals are
handled), and one that crashes takes the process with it: every finished
row is lost. iree-benchmark-module has the same fate (exit 139); the
native backend (:mod:`ireebench.native.backend`) runs one native process
per benchmark, so that a crash is that benchmark's error row
(``iree-benchmark-module failed: killed by signal 11``) and the others
still run. This module gives the in-process backend that behaviour with
one process for all benchmarks, as long as none dies. The anchors are
pyperf (a benchmark measured in worker processes that stream results to
the runner) and pytest-forked (a test run in a forked child whose death
becomes a failed report).

* **Where.** :func:`ireebench._runner.run_config` asks :func:`wanted`, then
  calls :func:`supervise`: the original process becomes a small
  supervisor and ``os.fork()`` s a worker that runs the normal run
  (:func:`ireebench._runner.run_here`: reports, backend, every hook of the
  run's plugins, the display on the real stdout/stderr) and ends with
  ``os._exit`` (no interpreter teardown, no atexit handler run twice).
  Plugins are loaded and ``ireebench_configure`` has run before the fork,
  and the run's scratch directory exists; the IREE runtime (devices,
  sessions, threads) starts only in the worker, so the supervisor can fork
  again safely.
* **The channel** (:mod:`ireebench.lib.channel`). A pipe from the worker:
  the messages its hub writes (the context once reported, "benchmark X is
  starting", each benchmark's rows, the reports finalized, every temporary
  file created next to an output, "reports closed with status S", the
  end), and where it is: the plugin code it enters and leaves
  (:func:`ireebench.hookcall.observe_calls`) and whether it holds signals
  back (:func:`ireebench.signals.observe_deferring`). A benchmark's rows
  are sent before any plugin code sees them, so a worker that dies in a
  streaming hook or a reporter loses nothing measured. A second pipe
  carries one byte per signal that the worker's Python code handled; a
  third gets faulthandler's dump of a crashing worker's Python frames,
  from which the supervisor names the plugin whose code crashed it.
* **A worker that ends** (any status): the supervisor passes its status on
  and re-raises its error, so the command line prints the same one line as
  in process and the Python API gets the same exception; its stdout and
  stderr were the real ones all along.
* **Signals.** The worker has a process group of its own, so a terminal's
  Ctrl-C (sent to the foreground group) reaches only the supervisor, which
  forwards SIGINT/SIGTERM to the worker's group exactly once per signal.
  In one shared group the worker would get Ctrl-C twice (from the
  terminal, and forwarded), and a second signal means "the user insists"
  (it gets through a hanging reporter and discards the unfinished file);
  the supervisor cannot tell a signal the whole group got (a terminal,
  ``kill -- -PGID``) from one sent to it alone (``kill PID``, a CI
  runner), so it could not de-duplicate. A worker in Python code handles
  the signal as in process (reports closed, 130/143) and first
  acknowledges it, from the handler (also while
  :func:`ireebench.signals.signals_deferred` holds it back). One that does
  not acknowledge within :data:`GRACE_SECONDS` (0.4 s: Python code answers
  in microseconds, and the run must end within about a second) is stuck in
  native code: it is killed (SIGKILL, its whole group), and the reports
  are finished from the rows received, the running benchmark an error row;
  one that holds signals back (a record, a commit, a save) gets
  :data:`DEFERRED_GRACE_SECONDS`, a second signal 0.4 s. A worker killed
  after it closed its reports ends the run with the signal, never 0.
  The cost of a group of its own is job control, done here: Ctrl-Z stops
  the worker, then the supervisor, and ``fg`` (SIGCONT) resumes both; the
  worker ignores SIGTTOU/SIGTTIN (a background group writing to a terminal
  with ``stty tostop``); and it dies with the supervisor
  (``PR_SET_PDEATHSIG`` on Linux), so a supervisor killed with SIGKILL, or
  by a hang-up, leaves no worker measuring.
* **A worker that dies** while a benchmark runs (a crash, an outside
  SIGKILL): that benchmark is an error row naming the signal, and a fresh
  worker resumes: it opens the session again, discovers the same
  workloads, replays what its predecessors reported into its own reporters
  (the display muted, no streaming hook; ``--benchmark_out`` rewritten
  whole), reports the error row and measures the benchmarks not reported
  yet. Each resume consumes one benchmark, so resumes are bounded by the
  workloads; a worker that dies before starting a benchmark ends the run
  (one line, exit 1). Where it died in a plugin's code outside the
  measurement (:data:`MEASUREMENT_HOOKS`), it is that plugin's error (exit
  3, naming the hook and the plugin), as if the plugin had raised; in
  another hook while a benchmark runs, that benchmark's error row names
  the hook. The reports of a worker that cannot go on (killed
  after a signal, dead before any benchmark) are finished by a *finalizer*
  worker: a resumed worker that measures nothing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import faulthandler
import os
import re
import select
import signal
import threading
import time
import traceback
from dataclasses import dataclass, field

from ._context import Context
from ._modules import TAKEN_BEFORE, observe_module_images, read_stdin_module
from .backend import IN_PROCESS, Backend
from .errors import (
    DEBUG_ENV,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_PLUGIN_ERROR,
    PluginError,
    Terminated,
    UsageError,
    exit_status,
)
from .hookcall import observe_calls, plugin_of_files
from .lib import channel as wire
from .outfiles import is_special_file, observe_temporaries
from .results import Run, RunResult
from .signals import observe_deferring, observe_signals
from .stash import StashKey
from .streams import CliStream

# How long a worker has to acknowledge a forwarded SIGINT/SIGTERM before it
# is taken to be stuck in native code and killed. Python code handles a
# signal within microseconds; a longer wait only delays Ctrl-C.
GRACE_SECONDS = 0.4
# How long while it holds signals back (a record written, a file committed, a
# save): it acts on the signal when that step is done, which must not be cut
# short by a kill. A second signal shortens it to GRACE_SECONDS (the user insists).
DEFERRED_GRACE_SECONDS = 10.0
# The hooks that measure: a process that dies in them is the function's crash.
MEASUREMENT_HOOKS = frozenset({"ireebench_measure_repetition", "ireebench_measure_cold_start"})
# faulthandler's dump of a crashed worker (its Python frames: at most 100, a
# few KiB, less than a pipe holds), read bounded.
_CRASH_DUMP_BYTES = 1 << 16
_FRAME = re.compile(r'^\s*File "(.*)", line \d+ in (\S+)', re.MULTILINE)

# In a worker: the channel to the supervisor (the hub writes it), and what
# a resumed worker replays (ireebench.reporting.hub).
REPORT_CHANNEL = StashKey["wire.Channel"]()
RESUME = StashKey["Resume"]()



def wanted(config, backend) -> bool:
    """Whether this run measures in a worker: the one place that decides.

    ``--isolation=worker`` (or ``IREEBENCH_ISOLATION=worker``), or no
    choice on the command line (``ireebench._cli.run_cli``, whose streams
    are :class:`~ireebench.streams.CliStream`); never for the Python API
    unless asked, never where ``os.fork`` is missing or outside the main
    thread (signal handlers), and only for a backend that measures in this
    process (the ``in_process`` capability): the others (``native``,
    ``replay``) already run their measurements in processes of their own.
    """
    choice = config.getoption("isolation") or None
    if choice not in (None, "worker", "none"):
        raise UsageError(f"--isolation={choice}: one of worker, none")
    if choice == "none" or not backend.has(IN_PROCESS):
        return False
    possible = hasattr(os, "fork") and threading.current_thread() is threading.main_thread()
    if choice == "worker":
        if not possible:
            raise UsageError("--isolation=worker: needs os.fork and the main thread "
                             "(use --isolation=none)")
        return True
    return possible and isinstance(config.stdout, CliStream)


def reports_closed(config, status: int, error: BaseException | None) -> None:
    """In a worker: tells the supervisor the reports are closed with ``status``
    (a worker that dies after this, in its teardown, still exits ``status``)."""
    channel = config.stash.get(REPORT_CHANNEL, None)
    if channel is not None:
        channel.send("closed", status, wire.encode_error(error))


def supervise(config, backend, run) -> RunResult:
    """Runs ``run(config, backend)`` in forked workers; see the module docstring.

    :param run: :func:`ireebench._runner.run_here`.
    """
    held = None
    try:
        # Made here, so that every worker shares it and the supervisor
        # removes what a dead worker left there (the module copies).
        config.scratch_dir()
        read_stdin_module(config)
        held = _hold_special_output(config)
    except BaseException as exc:  # noqa: BLE001 - the run is closed and it is raised
        return run(config, None, failure=exc)
    try:
        return Supervisor(config, backend, run).supervise()
    finally:
        if held is not None:
            os.close(held)


def _hold_special_output(config) -> int | None:
    """Keeps a ``--benchmark_out`` FIFO (or device) open for the whole run.

    Its reader then does not see the end of the report when a worker dies,
    and the next worker's open finds the reader still there (a FIFO without
    a reader blocks the open): the report continues where it stopped.
    """
    path = config.getoption("benchmark_out")
    if not path or config.getoption("benchmark_list_tests") or not is_special_file(path):
        return None
    try:
        return os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    except OSError:
        return None  # the worker's own open says why, in one line


@dataclass
class Resume:
    """What a resumed (or finalizing) worker's hub replays: the context and
    rows reported so far, and the error rows of the benchmarks lost."""

    context: Context | None
    groups: list = field(default_factory=list)  # (runs, extra rows) per benchmark, in order
    pending: list = field(default_factory=list)  # (runs, extra rows) of lost benchmarks
    # The modules its predecessors took: ([spec, resolved], a file with the
    # bytes or None, sha256); taken again, the same bytes (a --module=- is
    # read once).
    modules: list = field(default_factory=list)

    @property
    def run_names(self) -> set[str]:
        return {run.run_name for runs, _ in self.groups + self.pending for run in runs}


@dataclass
class _Worker:
    """One worker process, as its supervisor saw it."""

    pid: int
    running: Run | None = None  # the benchmark begun and not reported
    began: bool = False  # this worker began a benchmark
    finalized: bool = False  # its reports were finalized (files committed)
    closed: tuple | None = None  # (status, error): its reports were closed
    done: tuple | None = None  # (status, error): its run ended
    wait_status: int = 0
    killed: bool = False  # by the supervisor, after an unacknowledged signal
    ended: int | None = None  # its wait status, when reaped before the loop saw it
    call: tuple | None = None  # (where, plugin) of the plugin code it is in
    deferring: bool = False  # it holds signals back now
    crash_dump: str = ""  # its Python frames, had it crashed (faulthandler)


def _lost(row: Run, message: str) -> tuple[list[Run], list[Run]]:
    row = dataclasses.replace(row, error_occurred=True, error_message=message)
    return [row], []


def _plugin_code(where: str | None) -> bool:
    """Whether a worker was in a plugin's code (a hook, a reporter), not in the
    backend's own (``backend 'runtime'``: measuring, between benchmarks) nor in
    the run's teardown (``cleanup ...``: the runtime released)."""
    return where is not None and not where.startswith(("backend ", "cleanup "))


def _in(where: str | None, plugin: str | None) -> str:
    """``in ireebench_workload_start of plugin 'x'`` ("" when nothing is known)."""
    if where is None:
        return ""
    return f"in {where}" + (f" of plugin {plugin!r}" if plugin else "")


class WorkerDied(Exception):
    """The process running plugin code died (the ``PluginError``'s original)."""


def _crash_error(where: str, plugin: str | None, how: str, kept: str) -> PluginError:
    return PluginError(where, plugin, WorkerDied(f"the process {how}{kept}"))


def _read_available(fd: int) -> str:
    """What a pipe holds now, up to :data:`_CRASH_DUMP_BYTES` (never waits)."""
    os.set_blocking(fd, False)
    chunks, size = [], 0
    with contextlib.suppress(OSError):
        while size < _CRASH_DUMP_BYTES and (chunk := os.read(fd, _CRASH_DUMP_BYTES - size)):
            chunks.append(chunk)
            size += len(chunk)
    return b"".join(chunks).decode("utf-8", errors="replace")


def _crash_frames(dump: str) -> list[tuple[str, str]]:
    """``(file, function)`` of a crashed worker's frames, outermost first (from its
    faulthandler dump, innermost first; none if it did not crash)."""
    return list(reversed(_FRAME.findall(dump)))


def _note(signum, frame) -> None:
    """The supervisor's handler: the wakeup fd carries the signal to its loop."""


def _raising(channel: wire.Channel, exception):
    def handler(signum, frame):
        channel.acknowledge(signum)
        raise exception()

    return handler


class Supervisor:
    """The original process while workers run: forwards signals, collects the
    rows, and finishes what a dead or stuck worker could not."""

    def __init__(self, config, backend, run):
        self.config = config
        self.backend = backend
        self.run = run
        self.context: Context | None = None
        self.groups: list = []
        self.pending: list = []
        self.temporaries: list[str] = []
        self.modules: list = []
        self.signals: list[int] = []  # user signals received, first first
        self.crashed = False  # a benchmark was lost: the run exits 1
        self._previous: dict = {}
        self._deadline: float | None = None

    # --- the whole run ----------------------------------------------------

    def supervise(self) -> RunResult:
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        handled = [*wire.USER_SIGNALS, signal.SIGTSTP, signal.SIGCONT, signal.SIGCHLD]
        for signum in handled:
            previous = signal.getsignal(signum)
            self._previous[signum] = previous
            # An ignored signal (`nohup`, `&`) stays ignored; SIGCHLD is always
            # caught (ignored, it would reap the worker before waitpid could).
            if previous != signal.SIG_IGN or signum == signal.SIGCHLD:
                signal.signal(signum, _note)
        old_wakeup = signal.set_wakeup_fd(self._wake_w, warn_on_full_buffer=False)
        in_process = False
        try:
            return self._workers()
        except _NoFork:
            in_process = True
        finally:
            signal.set_wakeup_fd(old_wakeup)
            for signum, previous in self._previous.items():
                signal.signal(signum, previous)
            os.close(self._wake_r)
            os.close(self._wake_w)
            for path in self.temporaries:  # what a dead worker left
                with contextlib.suppress(OSError):
                    os.unlink(path)
            if not in_process:
                self.config.remove_scratch()
        # No worker could be forked: measured here, as with --isolation=none.
        return self.run(self.config, self.backend)

    def _workers(self) -> RunResult:
        mode, reason = "run", None
        while True:
            if self.signals and mode == "resume":
                mode, reason = "finalize", wire.interrupt(self.signals[0])
            worker = self._start(mode, reason)
            outcome = worker.done or worker.closed
            if outcome is not None and self._unfinished(mode, worker, outcome[1]):
                # Interrupted before it rewrote the reports: finish them.
                mode, reason = "finalize", wire.decode_error(outcome[1])
                continue
            if outcome is not None:
                if worker.done is None:
                    self._after_closing(worker)
                return self._result(*outcome)
            if mode == "finalize":
                # The finalizer died too: nothing more can be written.
                raise reason
            mode, reason = self._after_death(worker)

    def _unfinished(self, mode: str, worker: _Worker, error) -> bool:
        """A resumed worker interrupted before its hub replayed the reports (a
        signal pending since the fork) leaves them to a finalizer."""
        return (mode == "resume" and self.context is not None and not worker.finalized
                and error is not None and error["kind"] in ("interrupt", "terminated"))

    def _after_closing(self, worker: _Worker) -> None:
        """A worker that closed its reports, then died before its run ended: killed
        after a signal (the run ends with the signal, never exit 0), crashed in a
        plugin's code (the plugin's error: what it had to do, a save, a page, is not
        done), or crashed in its teardown (its status stands, with a warning)."""
        how = wire.describe_death(worker.wait_status)
        where, plugin = self._blame(worker)
        if worker.killed:
            name = signal.Signals(self.signals[0]).name
            self.config.stderr.write(
                f"ireebench: warning: the worker process did not answer {name} "
                f"{_in(where, plugin) or 'while it ended the run'} and was killed after "
                "closing its reports: what that step had not finished is lost\n")
            raise wire.interrupt(self.signals[0])
        if not os.WIFSIGNALED(worker.wait_status):
            return
        if _plugin_code(where):
            raise _crash_error(where, plugin, how, " after closing the reports")
        self.config.stderr.write(f"ireebench: warning: the worker process {how} after "
                                 "closing its reports\n")

    def _blame(self, worker: _Worker) -> tuple[str | None, str | None]:
        """``(where, plugin)``: the plugin code a dead worker was in (what it told the
        supervisor last), the plugin made precise by its crash dump's frames."""
        where, plugin = worker.call or (None, None)
        frames = _crash_frames(worker.crash_dump)
        if frames:
            plugin = plugin_of_files(self.config.pm, [path for path, _ in frames]) or plugin
        return where, plugin

    def _after_death(self, worker: _Worker):
        """What follows a worker that died without closing its reports."""
        how = wire.describe_death(worker.wait_status)
        where, plugin = self._blame(worker)
        if worker.killed:  # stuck in native code after a signal
            name = signal.Signals(self.signals[0]).name
            if worker.running is not None:
                self.pending.append(_lost(worker.running, (
                    f"interrupted by {name} while running (the function did not return; "
                    "the worker was killed)")))
            if worker.finalized:
                raise wire.interrupt(self.signals[0])
            return "finalize", wire.interrupt(self.signals[0])
        if worker.running is not None:
            self.crashed = True
            inside = f" ({_in(where, plugin)})" if _plugin_code(where) and \
                where not in MEASUREMENT_HOOKS else ""
            self.pending.append(_lost(worker.running, f"the process {how} while running "
                                                      f"{worker.running.name}{inside}"))
            if self.signals:
                return "finalize", wire.interrupt(self.signals[0])
            return "resume", None
        if _plugin_code(where):
            # A plugin's code outside the measurement (a streaming hook, a reporter):
            # the rows measured before are kept, the run stops as on its exception.
            kept = "; the rows measured before are kept" if self.groups else \
                " before any benchmark ran"
            reason = wire.interrupt(self.signals[0]) if self.signals else \
                _crash_error(where, plugin, how, kept)
            if worker.finalized:
                raise reason
            return "finalize", reason
        if worker.finalized:
            raise UsageError(f"the worker process {how} after the reports were written")
        where = ("before any benchmark ran" if not self.groups
                 else f"after {self.groups[-1][0][0].name}" if self.groups[-1][0]
                 else "between benchmarks")
        if self.pending and not worker.began:
            where = f"after resuming (before it ran a benchmark; {where})"
        reason = wire.interrupt(self.signals[0]) if self.signals else UsageError(
            f"the worker process {how} {where}")
        return "finalize", reason

    def _result(self, status: int, error) -> RunResult:
        if error is not None:
            raise wire.decode_error(error)
        if status == EXIT_OK and self.crashed:
            status = EXIT_FAILED  # a lost benchmark is a failed benchmark
        rows = [row for runs, extra in self.groups for row in [*runs, *extra]]
        return RunResult(status, rows, self.context)

    # --- one worker -------------------------------------------------------

    def _start(self, mode: str, reason) -> _Worker:
        """Forks a worker and watches it until it has ended."""
        resume = None if mode == "run" else Resume(self.context, list(self.groups),
                                                    list(self.pending), list(self.modules))
        backend = self.backend if mode != "finalize" else _finalizer(reason)
        data_r, data_w = os.pipe()
        ack_r, ack_w = os.pipe()
        crash_r, crash_w = os.pipe()  # a crashing worker's Python frames (faulthandler)
        supervisor = os.getpid()
        held = signal.pthread_sigmask(signal.SIG_BLOCK, wire.USER_SIGNALS)
        try:
            pid = wire.fork_worker(
                lambda: self._worker(supervisor, backend, resume, data_w, ack_w, crash_w, held),
                (data_w, ack_w, crash_w), (data_r, ack_r, crash_r),
                (self.config.stdout, self.config.stderr), (self._wake_r, self._wake_w))
        except OSError as exc:
            if mode == "run":
                self.config.stderr.write(f"ireebench: warning: --isolation=worker: cannot "
                                         f"fork ({exc.strerror}); measuring in process\n")
                raise _NoFork() from None
            raise UsageError(f"--isolation=worker: cannot fork a worker: {exc.strerror}") \
                from None
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        worker = _Worker(pid)
        try:
            self._watch(worker, data_r, ack_r)
        except BaseException:
            # The supervisor itself failed: no worker may go on without it.
            wire.signal_group(pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.waitpid(pid, 0)
            raise
        finally:
            worker.crash_dump = _read_available(crash_r)
            os.close(data_r)
            os.close(ack_r)
            os.close(crash_r)
        return worker

    def _worker(self, supervisor: int, backend, resume, data_w: int, ack_w: int,
                crash_w: int, held) -> None:
        """The worker process: the normal run, then ``os._exit`` (never returns)."""
        config = self.config
        status, error, channel = EXIT_PLUGIN_ERROR, None, None
        try:
            signal.set_wakeup_fd(-1)
            wire.die_with(supervisor)
            channel = wire.Channel(data_w, ack_w)
            for signum, exception in ((signal.SIGINT, KeyboardInterrupt),
                                      (signal.SIGTERM, Terminated)):
                if self._previous[signum] != signal.SIG_IGN:
                    signal.signal(signum, _raising(channel, exception))
            for signum in (signal.SIGTSTP, signal.SIGCONT, signal.SIGCHLD):
                signal.signal(signum, self._previous[signum])
            # In a group of its own, the worker writes to the terminal from
            # the background: `stty tostop` must not stop it (nor a read).
            for signum in (signal.SIGTTOU, signal.SIGTTIN):
                signal.signal(signum, signal.SIG_IGN)
            observe_signals(channel.acknowledge)
            observe_deferring(lambda active: channel.send("deferring", active))
            observe_calls(lambda where, plugin: channel.send("call", where, plugin))
            # Should it crash (SIGSEGV, SIGABRT...), its Python frames go to the
            # supervisor, which names the plugin whose code crashed it.
            faulthandler.enable(file=crash_w, all_threads=False)
            observe_temporaries(lambda path: channel.send("temporary", path))
            observe_module_images(lambda key, path, digest:
                                  channel.send("module", key, path, digest))
            if not isinstance(config.stdout, CliStream):  # the Python API's streams
                config.stdout = wire.ForwardedStream(channel, "stdout")
                config.stderr = wire.ForwardedStream(channel, "stderr")
            config.stash[REPORT_CHANNEL] = channel
            if resume is not None:
                config.stash[RESUME] = resume
                config.stash[TAKEN_BEFORE] = {tuple(key): (path, digest)
                                              for key, path, digest in resume.modules}
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
            status = self.run(config, backend).exit_code
        except BaseException as exc:  # noqa: BLE001 - told to the supervisor
            status, error = exit_status(exc), exc
            if os.environ.get(DEBUG_ENV) and status == EXIT_PLUGIN_ERROR:
                traceback.print_exception(exc)  # the supervisor gets only its line
        try:
            if channel is not None:
                channel.send("done", status, wire.encode_error(error))
        finally:
            wire.flush(config.stdout, config.stderr)
            os._exit(status)

    def _watch(self, worker: _Worker, data_r: int, ack_r: int) -> None:
        """Until the worker has ended: its messages, acknowledgements, signals."""
        os.set_blocking(data_r, False)
        os.set_blocking(ack_r, False)
        frames = wire.Frames()
        reading = {data_r, ack_r}
        self._deadline = None
        while True:
            timeout = 1.0 if self._deadline is None else max(
                0.0, self._deadline - time.monotonic())
            if not reading:
                timeout = min(timeout, 0.05)  # both pipes closed: the worker is ending
            ready, _, _ = select.select([self._wake_r, *reading], [], [], timeout)
            if self._wake_r in ready:
                self._signals(worker)
            if ack_r in ready and self._read(ack_r, reading):
                self._deadline = None  # it handles the signal in Python code
            if data_r in ready:
                chunk = self._read(data_r, reading)
                for kind, args in frames.feed(chunk or b""):
                    self._message(worker, kind, args)
            if self._deadline is not None and time.monotonic() >= self._deadline:
                self._deadline = None
                worker.killed = True
                wire.signal_group(worker.pid, signal.SIGKILL)
            if worker.ended is not None:  # reaped while it was being stopped
                pid, wait_status = worker.pid, worker.ended
            else:
                try:
                    pid, wait_status = os.waitpid(worker.pid, os.WNOHANG)
                except ChildProcessError:  # reaped by someone else: its status is unknown
                    pid, wait_status = worker.pid, 0
            if pid:
                worker.wait_status = wait_status
                with contextlib.suppress(OSError):  # what it wrote before it ended
                    while chunk := os.read(data_r, 1 << 16):
                        for kind, args in frames.feed(chunk):
                            self._message(worker, kind, args)
                return

    @staticmethod
    def _read(fd: int, reading: set) -> bytes:
        try:
            data = os.read(fd, 1 << 16)
        except BlockingIOError:
            return b""
        if not data:
            reading.discard(fd)
        return data

    def _signals(self, worker: _Worker) -> None:
        try:
            received = os.read(self._wake_r, 512)
        except BlockingIOError:
            return
        for signum in received:
            if signum in wire.USER_SIGNALS:
                self.signals.append(signum)
                wire.signal_group(worker.pid, signum)
                wire.signal_group(worker.pid, signal.SIGCONT)  # a stopped worker must act
                grace = GRACE_SECONDS if len(self.signals) > 1 or not worker.deferring \
                    else DEFERRED_GRACE_SECONDS
                deadline = time.monotonic() + grace
                self._deadline = deadline if self._deadline is None \
                    else min(self._deadline, deadline)
            elif signum == signal.SIGTSTP:  # Ctrl-Z: the worker stops with us
                wire.signal_group(worker.pid, signal.SIGSTOP)
                self._until_stopped(worker)
                signal.signal(signal.SIGTSTP, signal.SIG_DFL)
                os.kill(os.getpid(), signal.SIGTSTP)  # stopped here until SIGCONT
                signal.signal(signal.SIGTSTP, _note)
                wire.signal_group(worker.pid, signal.SIGCONT)
                if self._deadline is not None:
                    self._deadline = time.monotonic() + GRACE_SECONDS
            elif signum == signal.SIGCONT:
                wire.signal_group(worker.pid, signal.SIGCONT)

    @staticmethod
    def _until_stopped(worker: _Worker) -> None:
        """Waits until the worker has stopped (a signal is delivered when the
        kernel gets to it), so that both are stopped when the shell sees us stop."""
        if worker.ended is not None:
            return
        try:
            pid, wait_status = os.waitpid(worker.pid, os.WUNTRACED)
        except ChildProcessError:
            return
        if pid and not os.WIFSTOPPED(wait_status):
            worker.ended = wait_status  # it ended instead

    def _message(self, worker: _Worker, kind: str, args: list) -> None:
        if kind == "context":
            self.context = args[0]
        elif kind == "begin":
            worker.running, worker.began = args[0], True
        elif kind == "rows":
            runs, extra = args
            self.groups.append((runs, extra))
            names = {run.run_name for run in runs}
            self.pending = [lost for lost in self.pending
                            if not names & {run.run_name for run in lost[0]}]
            worker.running = None
        elif kind == "finalized":
            worker.finalized = True
        elif kind == "temporary":
            self.temporaries.append(args[0])
        elif kind == "module":
            self.modules.append(tuple(args))
        elif kind == "call":
            worker.call = (args[0], args[1]) if args[0] is not None else None
        elif kind == "deferring":
            worker.deferring = bool(args[0])
            if self._deadline is not None and len(self.signals) == 1:
                # A signal forwarded as the worker began (or ended) holding it back.
                grace = DEFERRED_GRACE_SECONDS if worker.deferring else GRACE_SECONDS
                self._deadline = time.monotonic() + grace
        elif kind == "closed":
            worker.closed = tuple(args)
        elif kind == "done":
            worker.done = tuple(args)
        elif kind == "write":
            stream = self.config.stdout if args[0] == "stdout" else self.config.stderr
            with contextlib.suppress(Exception):
                stream.write(args[1])
                stream.flush()


class _NoFork(Exception):
    """The first worker could not be forked."""


def _finalizer(reason: BaseException) -> Backend:
    """The backend of a worker that only finishes the reports: the resumed hub
    has replayed them, closing it reports the lost benchmarks; then the run
    ends with ``reason``."""

    def finish(config, hub):
        raise reason

    return Backend("finalizer", finish)
