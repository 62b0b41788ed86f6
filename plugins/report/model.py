"""What a report's sections draw from: :class:`ReportData`, worked out once.

Every section, the built-in ones and a plugin's
(``ireebench_report_sections``), receives the same object: the reports
(**oldest first**: the last one is the latest), the comparisons of the
latest against its baseline, the history's trends and change points, the
findings of the verdict and the page's units. Nothing here draws (no
matplotlib): a plugin can read it without the report's chart code.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ireebench.comparison import CompareOptions

from . import verdict
from .analysis import MAX_PAIRWISE, Pair, Trend, Units, commit_of, comparisons, trends
from .data import Report


def date_text(context: dict) -> str:
    """A report's date to the second, as ``2026-01-05 14:03:27`` ("" without one)."""
    date = str(context.get("date", "") or "")
    return date[:19].replace("T", " ")


@dataclass
class ReportData:
    """A report's data: what the page says, in the order the reports were measured.

    ``reports``: every input, oldest first (a results store's history is
    turned round when it is read; files keep the command line's order);
    ``latest`` is the last with something to draw. ``as_history``: the
    inputs read as a history (a ``stored:history``, or more than
    :data:`~.analysis.MAX_PAIRWISE` reports). ``comparisons``: the latest
    against the reports before it, as ``ireebench compare`` judges it (one
    :class:`~.analysis.Pair`); ``trends``: each benchmark over the reports
    and its change points; ``findings``: what changed, worst first, and
    ``headline``: the gate's verdict in one line (:mod:`.verdict`);
    ``units``: the one unit of each quantity on the page.
    """

    reports: list[Report]
    options: CompareOptions
    as_history: bool
    comparisons: list[Pair]
    trends: list[Trend]
    units: Units
    findings: list[verdict.Finding] = field(default_factory=list)
    headline: verdict.Headline | None = None  # the gate's verdict of the latest

    @property
    def latest(self) -> Report:
        return next((r for r in reversed(self.reports) if r.drawable), self.reports[-1])

    @property
    def latest_index(self) -> int:
        return self.reports.index(self.latest)

    def tag(self, index: int) -> str:
        """``#4 stored:f85cdcfb1e29``: a report by its place and label."""
        return f"#{index + 1} {self.reports[index].label}"

    def describe_report(self, index: int) -> str:
        """``#4 stored:f85c (commit c0ffee4, 2026-01-05 14:03:27)``."""
        report = self.reports[index]
        details = [text for text in (f"commit {commit_of(report)[:12]}"
                                     if commit_of(report) else "",
                                     date_text(report.context)) if text]
        return self.tag(index) + (f" ({', '.join(details)})" if details else "")

    def changes(self) -> dict[str, float]:
        """Per benchmark, how far it moved in the comparisons and the history (the
        largest log ratio): what ranks the most changed first."""
        moved: dict[str, float] = {}
        for pair in self.comparisons:
            if pair.comparison is None:
                continue
            for result in pair.comparison.benchmarks:
                if result.ratio is not None and result.ratio > 0:
                    size = abs(math.log(result.ratio))
                    moved[result.name] = max(moved.get(result.name, 0.0), size)
        for trend in self.trends:
            if trend.shift > -1:
                moved[trend.name] = max(moved.get(trend.name, 0.0),
                                        abs(math.log1p(trend.shift)))
        return moved


def analyse(reports: list[Report], options: CompareOptions,
            as_history: bool = False) -> ReportData:
    """Everything the sections draw from (see :class:`ReportData`)."""
    pairs = comparisons(reports, options, as_history)
    data = ReportData(list(reports), options,
                      as_history or len([r for r in reports if r.drawable]) > MAX_PAIRWISE,
                      pairs, trends(reports, options), Units(reports))
    data.findings = verdict.findings(data)
    data.headline = verdict.headline(data)
    return data
