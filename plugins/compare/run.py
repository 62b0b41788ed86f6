"""The run of ``ireebench compare``: read, compare, report, exit status.

Both sides are read through :func:`ireebench.comparison.inputs.load_reports`:
a file, or what a plugin resolves (a results store's ``stored:latest``).
A side given as a file is read first and the other side is asked *like*
it (a store then picks a run of the same machine and benchmarks); when
neither or both are files, the new side is read first. An old side that
names a history (``stored:history``, an
:class:`~ireebench.comparison.ReportHistory`) is the gate: the new run
judged against those runs (:func:`ireebench.comparison.history.compare_history`).

The reporters come from ``ireebench_compare_reporters`` (one plugin at a
time, so a name defined twice names both plugins); the display goes to
the run's stdout, ``--out`` to a file written atomically
(:class:`~ireebench.outfiles.OutputFile`). Both sides are read and compared
before anything is written, so bad input leaves no output and no file.
"""

from __future__ import annotations

import os

from ireebench.comparison.history import compare_history
from ireebench.comparison.inputs import ReportHistory, benchmark_file, load_reports
from ireebench.comparison.model import COMPARE_OPTIONS, compare
from ireebench.errors import UsageError
from ireebench.hookcall import collect_named, guarded
from ireebench.outfiles import OutputFile
from ireebench.results import RunResult

DEFAULT_REPORTER = "console"
DEFAULT_OUT_FORMAT = "json"


def compare_reporter_factories(config) -> dict:
    """Comparison reporter name -> factory, from every plugin."""
    return collect_named(config.pm, "ireebench_compare_reporters", "compare reporter",
                         config=config)


def _factory(factories: dict, flag: str, name: str):
    if name not in factories:
        known = ", ".join(sorted(factories)) or "none: every plugin providing one is blocked"
        raise UsageError(f"--{flag}={name}: unknown compare reporter (known: {known})")
    return factories[name]


def _report(config, name: str, factory, stream, comparison) -> None:
    reporter = guarded(config.pm, f"compare reporter factory {name!r}", factory, stream, config)
    guarded(config.pm, f"compare reporter {type(reporter).__name__}.report", reporter.report,
            comparison)


def _one(reference: str, loaded: list, side: str) -> tuple[str, dict]:
    if isinstance(loaded, ReportHistory):
        raise UsageError(f"compare: {reference}: a history is a baseline: give it as OLD "
                         "(ireebench compare stored:history NEW.json)")
    if len(loaded) != 1:
        raise UsageError(f"compare: {reference}: names {len(loaded)} reports; the {side} side "
                         "takes one")
    return loaded[0]


def load_sides(config, old_reference: str, new_reference: str):
    """(old's ``(label, report)`` list, new's one ``(label, report)``); see the module doc."""
    if os.path.isfile(old_reference) and not os.path.isfile(new_reference):
        old = load_reports(config, old_reference)
        new = _one(new_reference, load_reports(config, new_reference,
                                               like=_one(old_reference, old, "old")[1]), "new")
        return old, new
    new = _one(new_reference, load_reports(config, new_reference), "new")
    return load_reports(config, old_reference, like=new[1]), new


def judge(config, options):
    """The :class:`~ireebench.comparison.Comparison` of the two sides."""
    old_reference = config.getoption("old")
    old, new = load_sides(config, old_reference, config.getoption("new"))
    new_file = benchmark_file(*new)
    if isinstance(old, ReportHistory) or len(old) > 1:
        history = [benchmark_file(label, report) for label, report in old]
        return compare_history(history, new_file, options, old_reference,
                               getattr(old, "notes", ()))
    return compare(benchmark_file(*_one(old_reference, old, "old")), new_file, options)


def run_compare(config) -> RunResult:
    """Compares ``config.getoption("old")`` with ``"new"``; the exit code is 1 when a
    significant regression beyond its threshold exists, else 0. The run's
    resources are released on every path."""
    try:
        options = config.stash[COMPARE_OPTIONS]
        factories = compare_reporter_factories(config)
        display_name = config.getoption("reporter") or DEFAULT_REPORTER
        display = _factory(factories, "reporter", display_name)
        out_path = config.getoption("out")
        out_name = config.getoption("out_format") or DEFAULT_OUT_FORMAT
        out_factory = _factory(factories, "out_format", out_name) if out_path else None
        comparison = judge(config, options)
        _report(config, display_name, display, config.stdout, comparison)
        if out_factory is not None:
            handle = OutputFile(out_path, "out")
            try:
                _report(config, out_name, out_factory, handle.stream, comparison)
            except BaseException:
                handle.discard()
                raise
            handle.close()
    finally:
        config.release()
    return RunResult(comparison.exit_status, [], None, comparison)
