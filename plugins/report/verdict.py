"""The answer first: what changed, by name, with its size and confidence.

The top of a report is its verdict (as asv's and conbench's summaries, and
``ireebench compare``'s exit status): every benchmark the comparison finds
slower or faster, the latest report against its baseline (the first
report, or the history before it), and every change point of the history
(where a level shifted, and by how much). Each :class:`Finding` has the
change (Hodges-Lehmann, new / old - 1), its interval and the U test's
p-value, so its size and confidence read in one row. Regressions (slower
beyond ``--threshold``) come first, then the other slowdowns, then the
improvements, each by size.

Any other verdict (no significant change, inconclusive, not compared, or
one a later engine adds) is counted, not listed: the page's Comparison
section holds every benchmark.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ireebench.comparison import FASTER, SLOWER

LATEST = "latest"  # a finding of the latest report against its baseline
CHANGE_POINT = "change point"  # a shift of level in the history


@dataclass(frozen=True)
class Finding:
    """One benchmark that changed."""

    name: str  # the benchmark's run_name
    kind: str  # LATEST or CHANGE_POINT
    verdict: str  # FASTER or SLOWER
    change: float | None  # new / old - 1 (None: from 0, no ratio)
    low: float | None  # its interval (None: unbounded, or no test)
    high: float | None
    pvalue: float | None
    where: str  # which reports: "#5 x against #1 y", "from #4 x (commit c0ffee4)"
    regression: bool = False  # slower beyond its threshold

    @property
    def size(self) -> float:
        """How far, as a log ratio (a halving as far as a doubling)."""
        if self.change is None:
            return math.inf
        return abs(math.log1p(self.change)) if self.change > -1 else math.inf


def _severity(finding: Finding) -> tuple:
    return (not finding.regression, finding.verdict != SLOWER, -finding.size, finding.name)


def findings(data) -> list[Finding]:
    """Every change of ``data`` (a :class:`~.model.ReportData`), worst first."""
    found = []
    for pair in data.comparisons:
        if pair.comparison is None:
            continue
        for result in pair.comparison.benchmarks:
            if result.verdict in (FASTER, SLOWER):
                found.append(Finding(result.name, LATEST, result.verdict, result.change,
                                     result.low, result.high, result.pvalue, pair.title,
                                     bool(result.regression)))
    for trend in data.trends:
        threshold = data.options.threshold_for(trend.name)
        for change in trend.changes:
            beyond = change.change > (threshold.fraction if threshold is not None else 0.0)
            found.append(Finding(trend.name, CHANGE_POINT, change.verdict, change.change,
                                 change.low, change.high, change.pvalue,
                                 f"from {data.describe_report(change.index)}",
                                 change.verdict == SLOWER and beyond))
    return sorted(found, key=_severity)
