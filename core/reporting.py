"""Reporter interface, atomic output files, and the hub that feeds the reporters.

Reporters stream: Google Benchmark's JSON and CSV reporters write the
context first, then each benchmark's rows as they finish, then a closing
part. ireebench keeps that design and adds two guarantees so that an
interrupted run still leaves a usable report:

- each reporter call runs with SIGINT/SIGTERM held back (see
  :func:`signals_deferred`), so a record is never cut in the middle;
- the hub is finalized on every exit path (``runner.run_config``), so the
  JSON reporter closes its arrays, and ``--benchmark_out`` files are written
  to a temporary name and renamed into place only once complete
  (:class:`AtomicFile`).

So after Ctrl-C the output file holds every run finished so far as valid
JSON (or CSV), and the exit code is 130 (143 for SIGTERM).
"""

from __future__ import annotations

import contextlib
import os
import signal
import tempfile
import threading
from pathlib import Path

from .errors import UsageError
from .humanize import cpp_stream
from .results import Run


class Reporter:
    """Base class of reporters (Google Benchmark's BenchmarkReporter).

    A reporter plugin returns ``{"name": factory}`` from
    ``ireebench_reporters``; the factory is called as
    ``factory(stream, config, err_stream)`` (a subclass of this class is
    such a factory).

    ``stream`` is where the report goes (stdout for the display reporter, the
    ``--benchmark_out`` file otherwise); ``err_stream`` is where Google
    Benchmark's console and CSV reporters print the machine context (stderr
    for the display reporter, the same file for ``--benchmark_out``).
    """

    def __init__(self, stream, config, err_stream=None):
        self.stream = stream
        self.config = config
        self.err_stream = err_stream

    def report_context(self, context) -> bool:
        """Called once before any run. Return False to receive no runs."""
        return True

    def report_runs(self, runs: list[Run]) -> None:
        """Called once per benchmark with its rows (repetitions, aggregates, extras)."""

    def finalize(self) -> None:
        """Called once at the end, also after an error or an interrupt."""


def print_basic_context(stream, context) -> None:
    """Google Benchmark's PrintBasicContext (reporter.cc), used by console and CSV.

    Date, executable, CPUs and caches, load average, --benchmark_context
    entries (sorted by key) and the CPU-scaling / ASLR warnings, written in
    one call.
    """
    lines = [context.date, f"Running {context.executable}"]
    plural = "s" if context.num_cpus > 1 else ""
    mhz = cpp_stream(context.cycles_per_second / 1e6)
    lines.append(f"Run on ({context.num_cpus} X {mhz} MHz CPU {plural})")
    if context.caches:
        lines.append("CPU Caches:")
        for cache in context.caches:
            line = f"  L{cache.level} {cache.type} {cache.size // 1024} KiB"
            if cache.num_sharing:
                line += f" (x{context.num_cpus // cache.num_sharing})"
            lines.append(line)
    if context.load_avg:
        lines.append("Load Average: " + ", ".join(f"{v:.2f}" for v in context.load_avg))
    for key, value in context.sorted_global_context():
        lines.append(f"{key}: {value}")
    if context.cpu_scaling_enabled:
        lines.append("***WARNING*** CPU scaling is enabled, the benchmark real time "
                     "measurements may be noisy and will incur extra overhead.")
    if context.aslr_enabled:
        lines.append("***WARNING*** ASLR is enabled, the results may have unreproducible "
                     "noise in them.")
    if context.library_build_type == "debug":
        lines.append("***WARNING*** Library was built as DEBUG. Timings may be affected.")
    stream.write("\n".join(lines) + "\n")
    stream.flush()


_DEFERRED_SIGNALS = tuple(
    sig for sig in (getattr(signal, "SIGINT", None), getattr(signal, "SIGTERM", None)) if sig
)


@contextlib.contextmanager
def signals_deferred():
    """Holds SIGINT/SIGTERM back for the duration of the block.

    A signal received inside the block is delivered to the previous handler
    when the block ends (so Ctrl-C still raises KeyboardInterrupt, just not
    in the middle of a report record). Outside the main thread, where
    handlers cannot be changed, the block runs unprotected.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[tuple[int, object]] = []
    previous: dict[int, object] = {}

    def hold(signum, frame):
        pending.append((signum, frame))

    try:
        for sig in _DEFERRED_SIGNALS:
            previous[sig] = signal.signal(sig, hold)
    except (ValueError, OSError):  # embedded interpreters may refuse
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        yield
        return
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if pending:
            signum, frame = pending[0]
            handler = previous.get(signum)
            if callable(handler):
                handler(signum, frame)
            elif handler == signal.SIG_DFL:
                os.kill(os.getpid(), signum)  # the default action, now unblocked


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


class AtomicFile:
    """A text file written to a temporary name and renamed into place on close.

    The temporary file sits in the target's directory (so the rename is
    atomic) and gets the permissions a plain ``open()`` would give. Until
    :meth:`close`, the target path is untouched; :meth:`discard` removes the
    temporary file.
    """

    def __init__(self, path: str, flag: str = "benchmark_out"):
        self.path = Path(path)
        self.flag = flag
        directory = self.path.parent if str(self.path.parent) else Path(".")
        if not directory.is_dir():
            raise UsageError(f"--{flag}={path}: directory {directory} does not exist")
        if self.path.is_dir():
            raise UsageError(f"--{flag}={path}: is a directory")
        try:
            fd, self._tmp = tempfile.mkstemp(
                prefix=f".{self.path.name}.", suffix=".tmp", dir=directory
            )
        except OSError as exc:
            raise UsageError(f"--{flag}={path}: cannot write: {exc.strerror}") from None
        try:
            os.fchmod(fd, 0o666 & ~_umask())
        except (AttributeError, OSError):
            pass
        self.stream = os.fdopen(fd, "w", encoding="utf-8", newline="")

    @property
    def closed(self) -> bool:
        return self.stream.closed

    def close(self) -> None:
        """Flushes, syncs and renames the temporary file onto the target."""
        if self.stream.closed:
            return
        try:
            self.stream.flush()
            os.fsync(self.stream.fileno())
            self.stream.close()
            os.replace(self._tmp, self.path)
        except OSError as exc:
            self.discard()
            raise UsageError(f"--{self.flag}={self.path}: cannot write: {exc.strerror}") from None

    def discard(self) -> None:
        """Drops the temporary file; the target path is left as it was."""
        if not self.stream.closed:
            self.stream.close()
        try:
            os.unlink(self._tmp)
        except OSError:
            pass


class ReportHub:
    """Sends the context and each benchmark's runs to every reporter.

    Applies --benchmark_report_aggregates_only / --benchmark_display_aggregates_only
    the way Google Benchmark does (aggregates only when there are some), and
    calls the streaming hook ``ireebench_benchmark_result`` for every row.
    Reporter calls run with signals deferred, so an interrupt never leaves a
    half-written record.
    """

    def __init__(self, config, display: Reporter, file_reporter: Reporter | None = None,
                 file_handle: AtomicFile | None = None):
        self.config = config
        self.display = display
        self.file = file_reporter
        self._file_handle = file_handle
        self.runs: list[Run] = []
        self.context = None
        self._finalized = False
        report_only = bool(config.getoption("benchmark_report_aggregates_only"))
        self.display_aggregates_only = report_only or bool(
            config.getoption("benchmark_display_aggregates_only")
        )
        self.file_aggregates_only = report_only
        self._display_active = True
        self._file_active = True

    def _call(self, reporter, method: str, *args):
        """Calls a reporter method; a reporter's bug is reported naming its plugin."""
        from .pluginmanager import guarded

        where = f"reporter {type(reporter).__name__}.{method}"
        return guarded(self.config.pm, where, getattr(reporter, method), *args)

    def report_context(self, context) -> None:
        """Lets plugins add to the context (``ireebench_report_context``), then
        reports it to every reporter (once, before any run)."""
        from .pluginmanager import call_hook

        call_hook(self.config.pm, "ireebench_report_context", config=self.config,
                  context=context)
        self.context = context
        with signals_deferred():
            self._display_active = self._call(self.display, "report_context", context) is not False
            if self.file is not None:
                self._file_active = self._call(self.file, "report_context", context) is not False

    def report(self, runs: list[Run], extra_rows: list[Run] = ()) -> None:
        """Reports one benchmark: its repetitions, aggregates and extra rows."""
        from .pluginmanager import call_hook

        rows = list(runs) + list(extra_rows)
        # Streaming sinks first and outside the deferred block: a slow sink
        # must not delay Ctrl-C.
        for run in rows:
            call_hook(self.config.pm, "ireebench_benchmark_result", run=run)
        iterations = [r for r in runs if r.run_type != "aggregate"]
        aggregates = [r for r in runs if r.run_type == "aggregate"]
        targets = [(self.display, self.display_aggregates_only, self._display_active)]
        if self.file is not None:
            targets.append((self.file, self.file_aggregates_only, self._file_active))
        failure = None
        with signals_deferred():
            self.runs.extend(rows)
            for reporter, aggregates_only, active in targets:
                if not active:
                    continue
                shown = aggregates if (aggregates_only and aggregates) else iterations + aggregates
                shown = shown + list(extra_rows)
                try:
                    if shown:
                        self._call(reporter, "report_runs", shown)
                except UsageError as exc:  # the other reporter still gets the rows
                    failure = failure or exc
        if failure is not None:
            raise failure

    def finalize(self) -> None:
        """Finalizes every reporter and commits the --benchmark_out file (once)."""
        if self._finalized:
            return
        self._finalized = True
        with signals_deferred():
            try:
                self._call(self.display, "finalize")
            finally:
                if self.file is not None:
                    try:
                        self._call(self.file, "finalize")
                    finally:
                        if self._file_handle is not None:
                            self._file_handle.close()

    def close(self, failed: bool = False) -> None:
        """Ends the report on any exit path.

        After a context was reported the reporters are finalized, so the
        output holds every finished run (also after an error or an
        interrupt). Without a context (nothing was benchmarked), a failed run
        leaves no ``--benchmark_out`` file, while a completed one leaves an
        empty file, as Google Benchmark does when no benchmark matches.
        """
        if self.context is not None:
            self.finalize()
            return
        if self._file_handle is not None:
            if failed:
                self._file_handle.discard()
            else:
                self._file_handle.close()
