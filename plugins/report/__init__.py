"""Reports as pictures: ``ireebench report INPUTS... -o report.html`` and ``--benchmark_report``.

Google Benchmark draws nothing (google/benchmark#190 asks for charts viewed
with any browser, offline); this plugin draws what reports hold as one
self-contained HTML page (inline SVG, no script, nothing from the network),
for the ``ireebench report`` subcommand (:mod:`.command`, inputs only through
:func:`ireebench.comparison.inputs.load_reports`) and for a run's
``--benchmark_report`` (checked at ``ireebench_configure``: a run of hours
must not fail at its end; written at ``ireebench_sessionfinish`` from what
the run reported, also after an error, an interrupt or a survived crash).
The page is made of sections plugins return from
``ireebench_report_sections`` (declared here, :mod:`.hooks`). The modules of
the package: docs/architecture.md; the page: docs/report.md.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass

from ireebench import StashKey, comparison, hookimpl
from ireebench.commands import DeferredCommand
from ireebench.lib.gbench_json import JSONReporter
from ireebench.outfiles import register_output
from ireebench.reporting.reported import reported

from .hooks import ReportHooks
from .render import load_renderer, require_renderer

GROUP = "Report"
RUN_LABEL = "this run"


@dataclass
class RunRows:
    """A run with ``--benchmark_report``: where its page goes (its context and rows
    are the hub's, read at its end: ``ireebench.reporting.reported``)."""

    path: str


RUN_ROWS = StashKey[RunRows]()


@hookimpl
def ireebench_addhooks(pluginmanager):
    """Declares ``ireebench_report_sections``."""
    pluginmanager.add_hookspecs(ReportHooks)


@hookimpl
def ireebench_register_commands(cli):
    """Registers ``ireebench report``."""
    cli.add_command(DeferredCommand("report", "ireebench.plugins.report.command:COMMAND",
                                    short_help="Draw benchmark reports as one self-contained "
                                               "HTML page (charts, comparison, trend)."))


@hookimpl
def ireebench_addoption(parser):
    """Adds --benchmark_report."""
    parser.addoption(
        "--benchmark_report", "benchmark_report", default="", group=GROUP,
        metavar="FILE.html", run_output=True,
        help="When the run ends, draw its report (as `ireebench report` draws its JSON) "
             "into FILE, one self-contained HTML page written atomically. Needs "
             'matplotlib: pip install "ireebench[report]".')


def _flag(config) -> str:
    return f"--benchmark_report={config.getoption('benchmark_report')}"


@hookimpl
def ireebench_configure(config):
    """Checks the path and that matplotlib is there before anything runs."""
    path = config.getoption("benchmark_report")
    if not path:
        return
    register_output(config, "benchmark_report", path)  # never over an input or output
    require_renderer(_flag(config))
    config.stash[RUN_ROWS] = RunRows(path)


def run_report(context, rows, config) -> dict:
    """The run's report as its ``--benchmark_format=json`` output would hold it."""
    stream = io.StringIO()
    reporter = JSONReporter(stream, config, stream)
    reporter.report_context(context)
    reporter.report_runs(rows)
    reporter.finalize()
    return json.loads(stream.getvalue())


@hookimpl
def ireebench_sessionfinish(config):
    """Draws the run's report into ``--benchmark_report`` (nothing drawn: one line)."""
    state = config.stash.get(RUN_ROWS, None)
    # The whole run, also in a worker resumed after a crash (the rows before it
    # are replayed into the hub, not streamed again).
    context, rows = reported(config)
    if state is None or context is None:
        return  # --benchmark_list_tests, or the run ended before its first report
    from .data import read_report
    report = read_report(RUN_LABEL, run_report(context, rows, config))
    reason = report.nothing_to_draw()
    if reason:
        config.stderr.write(f"ireebench: warning: {_flag(config)}: nothing to draw "
                            f"({reason}); not written\n")
        return
    renderer = load_renderer(_flag(config))
    document = renderer.write([report], comparison.CompareOptions(), config, html_path=state.path,
                              flag="benchmark_report")
    renderer.raise_failures(document, config)
