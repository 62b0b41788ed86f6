"""Reporter interface and the hub that feeds the display and file reporters."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .errors import UsageError
from .results import Run


class Reporter:
    """Base class of reporters (Google Benchmark's BenchmarkReporter).

    ``stream`` is where the report goes (stdout for the display reporter, the
    ``--benchmark_out`` file otherwise); ``err_stream`` is for the context
    lines Google Benchmark's console reporter prints to stderr.
    """

    def __init__(self, stream, config, err_stream=None):
        self.stream = stream
        self.config = config
        self.err_stream = err_stream

    def report_context(self, context) -> bool:
        """Called once before any run. Return False to skip the runs."""
        return True

    def report_runs(self, runs: list[Run]) -> None:
        """Called once per benchmark with its rows (repetitions, aggregates, extras)."""

    def finalize(self) -> None:
        """Called once at the end, also after an error or an interrupt."""


class AtomicFile:
    """A text file written to a temporary name and renamed into place on close."""

    def __init__(self, path: str, flag: str = "benchmark_out"):
        self.path = Path(path)
        directory = self.path.parent if str(self.path.parent) else Path(".")
        if not directory.is_dir():
            raise UsageError(f"--{flag}={path}: directory {directory} does not exist")
        try:
            fd, self._tmp = tempfile.mkstemp(
                prefix=f".{self.path.name}.", suffix=".tmp", dir=directory
            )
        except OSError as exc:
            raise UsageError(f"--{flag}={path}: cannot write: {exc.strerror}") from None
        self.stream = os.fdopen(fd, "w", encoding="utf-8", newline="")

    def close(self) -> None:
        if self.stream.closed:
            return
        self.stream.flush()
        os.fsync(self.stream.fileno())
        self.stream.close()
        os.replace(self._tmp, self.path)

    def discard(self) -> None:
        if not self.stream.closed:
            self.stream.close()
        try:
            os.unlink(self._tmp)
        except OSError:
            pass


class ReportHub:
    """Sends the context and each benchmark's runs to every reporter.

    Applies --benchmark_report_aggregates_only / --benchmark_display_aggregates_only
    the way Google Benchmark does, and calls the streaming hook for every run.
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

    def report_context(self, context) -> None:
        self.context = context
        self._display_active = self.display.report_context(context)
        if self.file is not None:
            self._file_active = self.file.report_context(context)

    def report(self, runs: list[Run], extra_rows: list[Run] = ()) -> None:
        """Reports one benchmark: its repetitions, aggregates and extra rows."""
        from .pluginmanager import call_hook

        rows = list(runs) + list(extra_rows)
        for run in rows:
            call_hook(self.config.pm, "ireebench_benchmark_result", run=run)
        self.runs.extend(rows)
        iterations = [r for r in runs if r.run_type != "aggregate"]
        aggregates = [r for r in runs if r.run_type == "aggregate"]
        targets = [(self.display, self.display_aggregates_only, self._display_active)]
        if self.file is not None:
            targets.append((self.file, self.file_aggregates_only, self._file_active))
        for reporter, aggregates_only, active in targets:
            if not active:
                continue
            shown = aggregates if (aggregates_only and aggregates) else iterations + aggregates
            shown = shown + list(extra_rows)
            if shown:
                reporter.report_runs(shown)

    def finalize(self) -> None:
        if self._finalized:
            return
        self._finalized = True
        try:
            self.display.finalize()
        finally:
            if self.file is not None:
                try:
                    self.file.finalize()
                finally:
                    if self._file_handle is not None:
                        self._file_handle.close()
