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
Two modules (``ireebench compare A.vmfb B.vmfb``) are measured here first,
interleaved in one process, and judged on the ratios of the rounds
(:mod:`.paired`). Reports measured under different allocator settings (``malloc_trim`` and
``malloc_parameters`` in their contexts, see the ``allocator`` plugin; a
report that does not record it, such as the native tool's, counts as its
own setting) get one warning line on stderr and the same note in the
comparison, which every reporter shows.
"""

from __future__ import annotations

import contextlib
import gc
import os

from ireebench.comparison.inputs import ReportHistory, benchmark_file, load_reports
from ireebench.comparison.judgement import compare
from ireebench.comparison.model import COMPARE_OPTIONS
from ireebench.errors import UsageError, printable
from ireebench.hookcall import collect_named, guarded
from ireebench.lib.allocator import describe_setting, setting_of
from ireebench.outfiles import OutputFile
from ireebench.results import RunResult

from .paired import judge as judge_modules

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


@contextlib.contextmanager
def _collector_paused():
    """Python's cyclic garbage collector off while the reports are read,
    compared and reported: they create millions of small objects and no
    cycle, and each collection walks all of them (a report of 200,000 benchmarks spent a
    third of its time there; mypy raises its thresholds for the same reason)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def allocator_note(old, new) -> str | None:
    """The note for two reports measured under different allocator settings
    (``--malloc_trim``: the heap regime alone can change a time twofold)."""
    settings = [setting_of(report.context) for report in (old, new)]
    if settings[0] == settings[1]:
        return None
    return (f"old and new were measured with different allocator settings (old: "
            f"{describe_setting(settings[0], settings[1])}, new: "
            f"{describe_setting(settings[1], settings[0])}): "
            "the heap regime alone can change the times; see --malloc_trim in docs/usage.md")


def _warn_settings(config, olds, new, comparison) -> None:
    """One warning line on stderr, and a note every reporter shows (a history:
    for the first of its runs measured under another setting)."""
    note = next((note for note in (allocator_note(old, new) for old in olds) if note), None)
    if note is not None:
        comparison.notes.append(note)
        config.stderr.write(f"ireebench: warning: compare: {printable(note)}\n")


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
        olds = [benchmark_file(label, report) for label, report in old]
        from ireebench.comparison.history import compare_history
        comparison = compare_history(olds, new_file, options, old_reference,
                                     getattr(old, "notes", ()))
    else:
        olds = [benchmark_file(*_one(old_reference, old, "old"))]
        comparison = compare(olds[0], new_file, options)
    _warn_settings(config, olds, new_file, comparison)
    return comparison


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
        # Two modules are measured first, the collector on (a run of its own).
        paired = judge_modules(config, options) if config.getoption("paired", None) else None
        with _collector_paused():
            comparison = paired if paired is not None else judge(config, options)
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
