"""The sections of the HTML report: what a plugin returns from ``ireebench_report_sections``.

The report (the built-in ``report`` plugin: ``ireebench report``,
``--benchmark_report``) declares the hook and draws the page; this is the
public shape of a section, as :class:`~ireebench.comparison.CompareReporter`
is of a comparison reporter, so a plugin needs nothing of the report's
internals to add one. ``render(report, out)`` receives the report's data
(its ``reports`` oldest first and ``latest``, ``comparisons``, ``trends``,
``findings``, ``units``) and the writer of the section (``out``:
``paragraph``, ``table``, ``html``, ``details``, ``figure``/``chart``,
``svg``), see docs/plugins.md, "Adding a section to the HTML report".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

# The places of the report's own sections, in the order of the page.
SECTION_ORDER = {"summary": 10, "comparison": 20, "trend": 30, "sweeps": 40, "benchmarks": 50,
                 "dispatches": 60, "metrics": 70, "inputs": 90}
# A plugin's section that says no place: after the metrics, before the inputs.
DEFAULT_SECTION_ORDER = 80


@dataclass(frozen=True)
class ReportSection:
    """A section of the HTML report.

    :param title: its heading (and its entry in the table of contents).
    :param render: ``render(report, out)``: writes the section into ``out``
        from ``report`` (the report's data). An exception there is the
        plugin's error: the section says so, the rest of the page is drawn,
        and the command then ends with the error naming the plugin (exit 3).
    :param order: its place among the sections (:data:`SECTION_ORDER`: summary
        10, comparison 20, trend 30, sweeps 40, benchmarks 50, dispatches 60,
        metrics 70, inputs 90); after the report's own sections of the same order.
    :param anchor: the name of its ``id`` (from the title when empty); the page
        makes it unique.
    """

    title: str
    render: Callable
    order: float = DEFAULT_SECTION_ORDER
    anchor: str = ""
