"""The run of ``ireebench compare``: read, compare, report, exit status.

The reporters come from ``ireebench_compare_reporters`` (one plugin at a
time, so a name defined twice names both plugins); the display goes to
the run's stdout, ``--out`` to a file written atomically
(:class:`~ireebench.outfiles.OutputFile`). Both files are read and compared
before anything is written, so bad input leaves no output and no file.
"""

from __future__ import annotations

import contextlib
import gc

from ireebench.comparison.inputs import load_benchmark_file
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
        with _collector_paused():
            old = load_benchmark_file(config, config.getoption("old"))
            new = load_benchmark_file(config, config.getoption("new"))
            comparison = compare(old, new, options)
            del old, new  # the rows are in the comparison now: freed before reporting
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
