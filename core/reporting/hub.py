"""The hub that builds the reporters and feeds them, so an interrupted run still reports.

Reporters stream: Google Benchmark's JSON and CSV reporters write the
context first, then each benchmark's rows as they finish, then a closing
part. ireebench keeps that design and adds two guarantees so that an
interrupted run still leaves a usable report:

- each reporter call runs with SIGINT/SIGTERM held back
  (:func:`ireebench.signals.signals_deferred`), so a record is never cut in
  the middle;
- the hub is closed on every exit path (by the core's run,
  ``ireebench._runner.run_config``), so the JSON reporter closes its arrays,
  and ``--benchmark_out`` files are written to a temporary name and renamed
  into place only once complete (:class:`ireebench.outfiles.OutputFile`).

So after Ctrl-C the output file holds every run finished so far as valid
JSON (or CSV), and the exit code is 130 (143 for SIGTERM).

In a forked worker (:mod:`ireebench._worker`) the hub also tells the
supervisor what it reported (the context, "benchmark X is starting"
through :meth:`ReportHub.begin`, each benchmark's rows, the reports
finalized), so that the supervisor can finish the reports of a worker that
crashed or hung. A worker resumed after a crash gets what its predecessor
reported: its hub replays it into its own reporters, with the display
muted (the display then continues exactly where the dead worker's
stopped) and without the streaming hook (plugins saw those rows), then
reports the lost benchmark's error row and carries on.
"""

from __future__ import annotations

import copy

from .._context import name_field_width
from .._worker import REPORT_CHANNEL, RESUME
from ..errors import OutputClosed, PluginError, UsageError, signal_name
from ..hookcall import call_hook, guarded, guarded_for
from ..outfiles import OutputFile
from ..results import Run
from ..signals import signals_deferred
from .reported import REPORT_HUB, reporter_factories
from .reporter import Reporter

# What one reporter's call may end with while the other reporter carries on.
_REPORTER_FAILURES = (UsageError, PluginError, OutputClosed)


# What the hub calls on every reporter.
_REPORTER_METHODS = ("report_context", "report_runs", "finalize")


def _make_reporter(config, name: str, factory, owner: str | None, *streams) -> Reporter:
    """Calls a reporter factory; what it makes must have every method the hub
    calls, or the plugin that provided it is named now, not at the first row."""
    where = f"reporter factory {name!r}"
    reporter = guarded_for(config.pm, where, owner, factory, *streams)
    missing = [method for method in _REPORTER_METHODS
               if not callable(getattr(reporter, method, None))]
    if missing:
        raise PluginError(where, owner, TypeError(
            f"made a {type(reporter).__name__} without {', '.join(missing)}; subclass "
            "ireebench.Reporter"))
    return reporter


def build_hub(config) -> ReportHub:
    """Creates the display reporter (the run's stdout) and the --benchmark_out reporter."""
    owners: dict[str, str] = {}
    factories = reporter_factories(config, owners)
    display_name = config.getoption("reporter") or config.getoption("benchmark_format")
    flag = "reporter" if config.getoption("reporter") else "benchmark_format"
    if display_name not in factories:
        raise UsageError(
            f"--{flag}={display_name}: unknown reporter (known: {', '.join(sorted(factories))})"
        )
    out_path = config.getoption("benchmark_out")
    out_format = config.getoption("benchmark_out_format")
    if out_path and out_format not in factories:
        raise UsageError(
            f"--benchmark_out_format={out_format}: unknown reporter "
            f"(known: {', '.join(sorted(factories))})"
        )
    resumed = config.stash.get(RESUME, None) is not None
    display_streams = (config.stdout, config.stderr)
    if resumed:
        # A resumed worker: what the dead one displayed is replayed silently.
        display_streams = (MutableStream(config.stdout), MutableStream(config.stderr))
    muted = list(display_streams) if resumed else []
    display = _make_reporter(config, display_name, factories[display_name],
                             owners.get(display_name), display_streams[0], config,
                             display_streams[1])
    file_reporter = handle = None
    if out_path:
        handle = OutputFile(out_path, "benchmark_out")
        file_stream = handle.stream
        if resumed and not handle.atomic:
            # A FIFO or a device already got what the dead worker wrote: it
            # continues too (a regular file is written anew, whole).
            file_stream = MutableStream(handle.stream)
            muted.append(file_stream)
        try:
            # The file's context lines go to the file too, as Google Benchmark's do.
            file_reporter = _make_reporter(config, out_format, factories[out_format],
                                           owners.get(out_format), file_stream, config,
                                           file_stream)
        except BaseException:
            handle.discard()
            raise
    hub = ReportHub(config, display, file_reporter, handle, muted)
    config.stash[REPORT_HUB] = hub
    if hub.resumed:
        try:
            hub.replay()
        except BaseException:
            if handle is not None:
                handle.discard()
            raise
    return hub


class MutableStream:
    """A stream that drops what is written while ``muted`` (a replayed display)."""

    def __init__(self, stream):
        self._stream = stream
        self.muted = True  # until the replay is over

    def write(self, text):
        return len(text) if self.muted else self._stream.write(text)

    def flush(self) -> None:
        if not self.muted:
            self._stream.flush()

    def __getattr__(self, name):
        return getattr(self._stream, name)


class ReportHub:
    """Sends the context and each benchmark's runs to every reporter.

    Applies --benchmark_report_aggregates_only / --benchmark_display_aggregates_only
    the way Google Benchmark does (aggregates only when there are some), and
    calls the streaming hook ``ireebench_benchmark_result`` for every row.
    Reporter calls run with signals deferred, so an interrupt never leaves a
    half-written record.
    """

    def __init__(self, config, display: Reporter, file_reporter: Reporter | None = None,
                 file_handle: OutputFile | None = None, muted_streams=()):
        self.config = config
        # A forked worker's channel to its supervisor, and what a resumed
        # worker replays (ireebench._worker); None in a plain run.
        self._channel = config.stash.get(REPORT_CHANNEL, None)
        self._resume = config.stash.get(RESUME, None)
        self._muted_streams = list(muted_streams)
        # The row of the benchmark begun and not reported yet (see begin).
        self._running: Run | None = None
        self._lost_reported = False
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
        self._display_closed = False  # stdout's reader went away
        self._file_active = True
        # A file whose reporter failed once is incomplete: it is never committed.
        self._file_failed = False

    def _call(self, reporter, method: str, *args):
        """Calls a reporter method; a reporter's bug is reported naming its plugin."""
        where = f"reporter {type(reporter).__name__}.{method}"
        try:
            return guarded(self.config.pm, where, getattr(reporter, method), *args)
        except OutputClosed:
            # stdout's reader went away (`| head`): the display stops, the
            # file goes on to the end of the run.
            if reporter is self.display:
                self._display_active = False
                self._display_closed = True
            raise
        except BaseException:
            if reporter is self.file:
                self._file_failed = True
            raise

    def _tell(self, kind: str, *args) -> None:
        """Tells a forked worker's supervisor (nothing in a plain run)."""
        if self._channel is not None:
            self._channel.send(kind, *args)

    def report_context(self, context, run_names=()) -> None:
        """Reports the context to every reporter (once, before any run).

        ``run_names``: the benchmarks about to run. The console's name
        column is sized from them and from the rows plugins will add
        (``ireebench_report_row_names``), as Google Benchmark sizes it from
        every name before the first row; then plugins add to the context
        (``ireebench_report_context``).

        In a resumed worker (whose hub replayed its predecessor's reports
        when it was built), reports the lost benchmarks instead: ``context``
        is not used (the predecessor's is complete) and the hooks are not
        called again.
        """
        if self.resumed:
            self._report_lost()
            return
        config = self.config
        if run_names:
            names = list(run_names)
            for rows in call_hook(config.pm, "ireebench_report_row_names", config=config,
                                  run_names=list(run_names)):
                names.extend(rows or [])
            context.name_field_width = max(
                context.name_field_width,
                name_field_width(list(run_names), config.getoption("benchmark_repetitions")),
                *(len(name) for name in names))
        call_hook(config.pm, "ireebench_report_context", config=config, context=context)
        self.context = context
        with signals_deferred():
            failure = self._context_to_reporters(context)
            self._tell("context", context)
        if failure is not None:
            raise failure

    def _context_to_reporters(self, context) -> BaseException | None:
        failure = None
        try:
            self._display_active = self._call(self.display, "report_context",
                                              context) is not False
        except _REPORTER_FAILURES as exc:  # the file reporter still gets the context
            failure = exc
        if self.file is not None:
            try:
                self._file_active = self._call(self.file, "report_context",
                                               context) is not False
            except _REPORTER_FAILURES as exc:
                failure = failure or exc
        return failure

    @property
    def resumed(self) -> bool:
        """This hub continues the reports of a worker that died (ireebench._worker)."""
        return self._resume is not None

    def replay(self) -> None:
        """A resumed worker: the predecessor's context and rows into this hub's
        reporters, the display muted, without the streaming hook (called by
        :func:`build_hub`)."""
        resume = self._resume
        failure = None
        try:
            if resume.context is not None:
                self.context = resume.context
                with signals_deferred():
                    failure = self._context_to_reporters(resume.context)
                    for runs, extra_rows in resume.groups:
                        self.runs.extend(list(runs) + list(extra_rows))
                        failure = failure or self._rows_to_reporters(runs, extra_rows)
        finally:
            for stream in self._muted_streams:
                stream.muted = False
        if failure is not None:
            raise failure

    def _report_lost(self) -> None:
        """A resumed worker: the error rows of the benchmarks its predecessors
        lost, reported as any benchmark (once, where the context was)."""
        lost, self._lost_reported = not self._lost_reported, True
        if lost and self.context is not None:
            for runs, extra_rows in self._resume.pending:
                self.report(runs, extra_rows)

    def begin(self, row: Run) -> None:
        """The backend starts the benchmark ``row`` names.

        ``row`` is the (error) row the benchmark is reported as if it never
        finishes: interrupted (:meth:`abandon`), or, in a forked worker,
        crashed or hung (the supervisor reports it). Reporting the
        benchmark's rows ends it.
        """
        self._running = row
        self._tell("begin", row)

    def already_reported(self, run_name: str) -> bool:
        """In a resumed worker: the benchmark ``run_name`` was reported (or
        lost) before this process started; the backend skips it."""
        return self._resume is not None and run_name in self._resume.run_names

    def abandon(self, reason: BaseException) -> None:
        """Reports the benchmark begun and not finished as an error row naming
        ``reason`` (SIGINT or SIGTERM)."""
        row, self._running = self._running, None
        if row is None or self.context is None:
            return
        row = copy.deepcopy(row)
        row.error_occurred = True
        row.error_message = f"interrupted by {signal_name(reason)} while running"
        self.report([row])

    def report(self, runs: list[Run], extra_rows: list[Run] = ()) -> None:
        """Reports one benchmark: its repetitions, aggregates and extra rows."""
        rows = list(runs) + list(extra_rows)
        self.runs.extend(rows)
        self._running = None
        # A forked worker's supervisor has the rows before any plugin code runs
        # on them: a streaming hook or a reporter that kills the process loses
        # nothing measured.
        self._tell("rows", list(runs), list(extra_rows))
        # Streaming hooks first and outside the deferred block: a slow hook
        # must not delay Ctrl-C. Each gets a copy, so a hook that changes a
        # run changes nothing that reporters or the Python API see. A hook
        # that fails (or an interrupt in one) stops the run, but the rows are
        # reported first: they were measured.
        failure = None
        try:
            for run in rows:
                call_hook(self.config.pm, "ireebench_benchmark_result", config=self.config,
                          run=run.copy())
        except BaseException as exc:  # noqa: BLE001 - raised once the rows are reported
            failure = exc
        with signals_deferred():
            reporting = self._rows_to_reporters(runs, extra_rows)
        failure = failure or reporting
        if failure is not None:
            raise failure

    def _rows_to_reporters(self, runs, extra_rows) -> BaseException | None:
        iterations = [r for r in runs if r.run_type != "aggregate"]
        aggregates = [r for r in runs if r.run_type == "aggregate"]
        targets = [(self.display, self.display_aggregates_only, self._display_active)]
        if self.file is not None:
            targets.append((self.file, self.file_aggregates_only, self._file_active))
        failure = None
        for reporter, aggregates_only, active in targets:
            if not active:
                continue
            shown = aggregates if (aggregates_only and aggregates) else iterations + aggregates
            shown = shown + list(extra_rows)
            try:
                if shown:
                    self._call(reporter, "report_runs", shown)
            except _REPORTER_FAILURES as exc:  # the other reporter still gets the rows
                failure = failure or exc
        return failure

    def finalize(self) -> None:
        """Finalizes every reporter and commits the --benchmark_out file (once).

        A reporter that fails to finalize does not keep the other from
        finalizing; a file whose reporter failed is discarded (the previous
        file at that path is kept).
        """
        if self._finalized:
            return
        self._finalized = True
        failure = None
        with signals_deferred():
            for reporter, handle in ((self.display, None), (self.file, self._file_handle)):
                if reporter is None:
                    continue
                try:
                    if reporter is not self.display or not self._display_closed:
                        self._call(reporter, "finalize")
                except _REPORTER_FAILURES as exc:
                    failure = failure or exc
                if handle is None:
                    continue
                if self._file_failed:
                    handle.discard()
                    continue
                try:
                    handle.close()
                except UsageError as exc:
                    failure = failure or exc
            self._tell("finalized")
        if failure is not None:
            raise failure

    def close(self, failed: bool = False) -> None:
        """Ends the report on any exit path.

        After a context was reported the reporters are finalized, so the
        output holds every finished run (also after an error or an
        interrupt). Without a context (nothing was benchmarked), a failed run
        leaves no ``--benchmark_out`` file, while a completed one leaves an
        empty file, as Google Benchmark does when no benchmark matches.
        """
        if self.context is not None:
            if self.resumed and not self._finalized:
                try:  # a resumed worker that stopped before its context
                    self._report_lost()
                finally:
                    self.finalize()
                return
            self.finalize()
            return
        if self._file_handle is not None:
            if failed or self._file_failed:
                self._file_handle.discard()
            else:
                self._file_handle.close()
