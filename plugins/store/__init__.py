"""The results store: ``--benchmark_save``, ``ireebench history``, ``stored:`` references.

``--benchmark_save`` stores the report exactly as ``--benchmark_out`` writes
it in JSON, from what the hub reported (so a crash the worker survived loses
none), with its provenance, tags and samples, in one transaction when the
run ends (an interrupted run too, as ``interrupted``, never a baseline unless
asked for); the context gains the git commit and branch (:mod:`.git`) and the
compile flags. ``ireebench_load_reports`` answers ``stored:...``
(:mod:`.references`), ``ireebench_compare_addoption`` gives ``compare`` the
store's options, and the subcommands (:mod:`.commands`) are deferred. The
database code is the ``store`` extra, imported only when a store is opened
(:func:`.location.open_store`). See docs/store.md.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass

from ireebench import StashKey, hookimpl
from ireebench.commands import DeferredCommand
from ireebench.errors import EXIT_OK, Terminated, UsageError, signal_name
from ireebench.outfiles import run_files
from ireebench.reporting.reported import reported, reporter_factories
from ireebench.signals import held_signal, signals_deferred

from .location import open_store, register_store, storage_url
from .references import HISTORY, LATEST, is_stored, parse_filter, parse_reference

GROUP = "Results store"
DEFAULT_WINDOW = 10
STORAGE_HELP = ("The results store: a path or sqlite:///PATH (SQLite), or a postgresql:// "
                "URL (default: $XDG_DATA_HOME/ireebench/results.sqlite).")


@dataclass
class Capture:
    """What a saved run keeps: the store (the run's context and rows are the
    hub's, read at its end: ``ireebench.reporting.reported``)."""

    store: object


CAPTURE = StashKey[Capture]()
# The ids of the runs this command read by ``stored:latest~N``: a side that is one of
# them is a place in the same list, so the other side's ``~N`` counts from the newest
# (``compare stored:latest~1 stored:latest``: the two newest), not from the run before it.
LISTED = StashKey[set]()


@hookimpl
def ireebench_addoption(parser):
    """Adds --benchmark_save and --benchmark_storage."""
    parser.addoption("--benchmark_save", "benchmark_save", type=bool, group=GROUP,
                     run_output=True, help="Store the run (its JSON report, provenance, tags and samples) in "
                          "the results store when it ends; see docs/store.md.")
    # run_output: where the run saves is the run's alone, as --benchmark_save is (a
    # point's own process, here or on a cluster's node, is never told the URL).
    parser.addoption("--benchmark_storage", "benchmark_storage", default="", group=GROUP,
                     metavar="URL", envvar="IREEBENCH_STORAGE", show_envvar=True,
                     run_output=True, help=STORAGE_HELP)


@hookimpl(optionalhook=True)
def ireebench_compare_addoption(parser):
    """The store's options of ``ireebench compare`` (for ``stored:`` references)."""
    add_reading_options(parser)


@hookimpl
def ireebench_load_reports_addoption(parser):
    """The same options for plugins' subcommands that read reports (``reads_reports=True``)."""
    add_reading_options(parser)


def add_reading_options(parser) -> None:
    parser.addoption("--benchmark_storage", "benchmark_storage", default="", group=GROUP,
                     metavar="URL", envvar="IREEBENCH_STORAGE", show_envvar=True,
                     help=STORAGE_HELP)
    parser.addoption("--where", "where", multiple=True, group=GROUP, metavar="KEY=VALUE",
                     help="Only stored runs with KEY=VALUE (branch, commit, host, status, "
                          "or a --benchmark_context key); repeatable, all must hold.")
    parser.addoption("--window", "window", type=int, default=DEFAULT_WINDOW, group=GROUP,
                     metavar="N", help="stored:history: the last N stored runs of each "
                                       f"benchmark ({DEFAULT_WINDOW}).")
    parser.addoption("--any_machine", "any_machine", type=bool, group=GROUP,
                     help="Use stored runs of any machine, not only those whose machine and "
                          "devices match the other side's.")


@hookimpl
def ireebench_register_commands(cli):
    """Registers ``ireebench history`` and ``ireebench store``."""
    cli.add_command(DeferredCommand(
        "history", "ireebench.plugins.store.commands:history",
        short_help="Stored runs per benchmark; --changes: where levels shifted."))
    cli.add_command(DeferredCommand(
        "store", "ireebench.plugins.store.commands:store",
        short_help="Import reports into the results store, export runs."))


@hookimpl
def ireebench_configure(config):
    """Opens the store of --benchmark_save now, so a bad URL fails before the run."""
    if not config.getoption("benchmark_save") or config.getoption("benchmark_list_tests"):
        return
    if config.getoption("benchmark_dry_run"):
        raise UsageError("--benchmark_save: a --benchmark_dry_run measures nothing worth "
                         "keeping (each benchmark runs once, untimed)")
    if "json" not in reporter_factories(config):
        raise UsageError("--benchmark_save: stores the JSON report, but the json reporter is "
                         "blocked (-p no:json)")
    url = storage_url(config.getoption("benchmark_storage"))
    register_store(run_files(config), url)  # no output of the run may replace it
    run_files(config).add_destination("--benchmark_save")  # measuring nothing then fails
    store = open_store(url, create=True)
    store.notify = lambda line: _note(config, line)  # why a save waits
    config.add_cleanup(store.close)
    config.stash[CAPTURE] = Capture(store)


@hookimpl(trylast=True)
def ireebench_report_context(config, context):
    """Adds the git commit and branch and the compile flags; keeps the context."""
    capture = config.stash.get(CAPTURE, None)
    if capture is None:
        return
    from .git import git_state  # only a saved run's (see LAZY_IMPORTS)
    from .records import COMPILE_FLAGS, GIT_BRANCH, GIT_COMMIT
    state = git_state()
    if state.note:
        _note(config, f"git: {state.note}; the run is saved without a commit")
    if state.commit:
        context.extra[GIT_COMMIT] = state.commit
    if state.branch:
        context.extra[GIT_BRANCH] = state.branch
    flags = list(config.getoption("compile_flag") or [])
    if flags:
        context.extra[COMPILE_FLAGS] = flags


def render_report(config, context, runs) -> str:
    """The run's JSON report, by Google Benchmark's JSON reporter (as --benchmark_out)."""
    stream = io.StringIO()
    reporter = reporter_factories(config)["json"](stream, config, io.StringIO())
    reporter.report_context(context)
    if runs:
        reporter.report_runs(list(runs))
    reporter.finalize()
    return stream.getvalue()


@hookimpl
def ireebench_sessionfinish(config, exitstatus):
    """Saves the run in one transaction, interrupted or not (signals held back)."""
    capture = config.stash.get(CAPTURE, None)
    if capture is None:
        return
    # The whole run, also in a worker resumed after a crash (the rows before it
    # are replayed into the hub, not streamed again).
    context, runs = reported(config)
    if context is None:
        # A run that failed (1..127) says why in its own error line, one is enough; an
        # interrupted one (128+: a signal) or one that ends without measuring says it here.
        if not 0 < exitstatus < 128:
            config.stderr.write("ireebench: --benchmark_save: nothing saved (no benchmark "
                                "ran)\n")
        return
    from .records import record_of_report, status_of
    text = render_report(config, context, runs)
    record = record_of_report(
        text, json.loads(text), run_id=config.run_id, status=status_of(exitstatus),
        exit_status=exitstatus, tags=dict(config.benchmark_context),
        samples=[(run.samples, run.batch_samples) for run in runs])
    with signals_deferred():  # a signal now is acted on once the run is saved
        try:
            run_id, _ = capture.store.save(record)
        except (UsageError, KeyboardInterrupt, Terminated) as exc:
            _not_saved(config, exc, exitstatus)
            raise
        state = "" if record.status == "complete" else f"{record.status} "
        config.stderr.write(f"ireebench: saved {state}run {run_id[:12]} "
                            f"({len(record.rows)} rows) to {capture.store.display}\n")
        config.stderr.flush()


def _not_saved(config, exc: BaseException, exitstatus: int) -> None:
    """Says the run was not saved, unless the error is the run's one line anyway.

    The run's own end (an interrupt, a failed benchmark, a signal held during
    the save) would hide a save's error: never silent, never exit 0.
    """
    if isinstance(exc, UsageError) and exitstatus == EXIT_OK and held_signal() is None:
        return  # the CLI's one error line, exit 1
    reason = (str(exc) if isinstance(exc, UsageError)
              else f"a second {signal_name(exc)} abandoned the save")
    config.stderr.write(f"ireebench: error: --benchmark_save: the run was not saved: {reason}\n")
    config.stderr.flush()


def _note(config, line: str) -> None:
    config.stderr.write(f"ireebench: note: --benchmark_save: {line}\n")
    config.stderr.flush()


# --- stored: references -------------------------------------------------------


def reading_filters(config, reference) -> tuple:
    filters = list(reference.filters)
    filters += [parse_filter(text) for text in config.getoption("where") or ()]
    return tuple(filters)


@hookimpl
def ireebench_load_reports(config, reference, like):
    """``stored:latest``, ``stored:latest~N``, ``stored:RUN_ID``, ``stored:history``."""
    if not is_stored(reference):
        return None
    parsed = parse_reference(reference)
    filters = reading_filters(config, parsed)
    any_machine = bool(config.getoption("any_machine"))
    url = storage_url(config.getoption("benchmark_storage"))
    register_store(run_files(config), url)  # a command's output may not replace it
    store = open_store(url, create=False, write=False)
    try:
        if parsed.selector == HISTORY:
            window = config.getoption("window", DEFAULT_WINDOW)
            if window < 1:
                raise UsageError(f"--window={window}: must be 1 or more")
            runs, note = store.history(filters, like, any_machine, window)
            from ireebench.comparison.inputs import ReportHistory
            return ReportHistory([(summary.label, report) for summary, report in runs],
                                 [note] if note else [])
        offset = parsed.offset if parsed.selector == LATEST else 0
        listed = config.stash.setdefault(LISTED, set())
        summary, text = store.run(parsed.selector, filters, like, any_machine, offset,
                                  reference, listed)
        if parsed.selector == LATEST:
            listed.add(summary.run_id)
        return [(summary.label, json.loads(text))]
    finally:
        store.close()
