"""The answer first: the gate's verdict, by name, with its size and confidence.

The top of a report is the verdict of ``ireebench compare`` for the
latest report against the reports before it (as asv's and conbench's
summaries lead with theirs): the same inputs give the same verdicts, on
the page and in a gate's exit status (:func:`.analysis.comparisons`: two
reports as ``compare OLD NEW``, more as ``compare stored:history NEW``).

* :func:`headline`: one line: the worst benchmark with its change, its
  interval and its verdict (``BM_work: 7.6× slower, +662 % [+445 %,
  +926 %] — regression, from commit 4e76784c``: the commit of the first
  report of its new level), then how many others are slower, faster or
  could not be judged; no change: how many benchmarks, and the smallest
  change the history could have shown; cannot judge: why;
* :func:`findings`: every benchmark the gate finds slower or faster, and
  every change point of the history (where a level shifted, judged by its
  own test between the two levels, labelled as such): each
  :class:`Finding` with its change (Hodges-Lehmann, new / old - 1), its
  interval and **the p-value its verdict used** (:func:`verdict_pvalue`:
  adjusted over the suite; against a history the larger of the U test and
  the run-level test), worst first;
* :func:`pvalue_text`: what a p-value column shows: that p-value, or,
  where another rule decided the verdict (the history's band, a CPU share
  that fell), the verdict's own reason, never a p that contradicts it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ireebench.comparison import (
    CANNOT_JUDGE,
    FASTER,
    INCONCLUSIVE,
    NO_CHANGE,
    NOT_COMPARED,
    SLOWER,
)
from ireebench.lib.comparison_format import VALUE_VERDICTS, format_pvalue

from .analysis import commit_of
from .data import display_name

LATEST = "latest"  # a finding of the latest report against its baseline
CHANGE_POINT = "change point"  # a shift of level in the history
# The order of the verdicts, worst first: what fails a gate (a regression, exit 1;
# cannot judge, exit 4) before what passes it.
_RANK = {SLOWER: 1, CANNOT_JUDGE: 2, INCONCLUSIVE: 3, FASTER: 4, NO_CHANGE: 5,
         NOT_COMPARED: 6}


@dataclass(frozen=True)
class Finding:
    """One benchmark that changed: the latest against its baseline, or a change point."""

    name: str  # the benchmark's run_name
    kind: str  # LATEST or CHANGE_POINT
    verdict: str  # FASTER or SLOWER
    change: float | None  # new / old - 1 (None: from 0, no ratio)
    low: float | None  # its interval (None: unbounded, or no test)
    high: float | None
    pvalue: float | None  # the p-value the verdict used (a change point: its own U test)
    where: str  # which reports: "#5 x against #1 y", "from #4 x (commit c0ffee4)"
    regression: bool = False  # slower beyond its threshold

    @property
    def size(self) -> float:
        """How far, as a log ratio (a halving as far as a doubling)."""
        if self.change is None:
            return math.inf
        return abs(math.log1p(self.change)) if self.change > -1 else math.inf


def verdict_pvalue(result) -> float | None:
    """The p-value a benchmark's verdict used: adjusted over the suite (against a
    history, of the larger of the U test and the run-level test); None when no
    test decided it."""
    return result.adjusted_pvalue


def _but(reason: str) -> str:
    """The rule of a reason that overrode its test: ``slower than the pooled runs
    (p=0.001) but within the band: ...`` -> ``within the band: ...``."""
    for clause in reason.split("; "):
        if " but " in clause:
            return clause.split(" but ", 1)[1].strip()
    return reason


def pvalue_text(result, alpha: float) -> str:
    """The p-value column of a benchmark: the p its verdict used, or the verdict's
    own reason where that p says otherwise (a significant test that the band or
    a fallen CPU share overruled); ``n/a`` without a test."""
    pvalue = verdict_pvalue(result)
    if pvalue is None:
        return "exact" if result.method == "equal values" else "n/a"
    if (result.verdict in (FASTER, SLOWER)) == (pvalue < alpha):
        return format_pvalue(pvalue)
    return _but(result.reason) or result.verdict


def rank(result) -> tuple:
    """A benchmark's place, worst first: regressions, slower, cannot judge,
    inconclusive, faster, no change, not compared; each by size."""
    size = abs(math.log1p(result.change)) if result.change is not None and \
        result.change > -1 else (math.inf if result.change is not None else -1.0)
    return (0 if result.regression else _RANK.get(result.verdict, 7), -size, result.name)


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
                                     result.low, result.high, verdict_pvalue(result),
                                     pair.title, bool(result.regression)))
    for trend in data.trends:
        threshold = data.options.threshold_for(trend.name)
        for change in trend.changes:
            beyond = change.change > (threshold.fraction if threshold is not None else 0.0)
            found.append(Finding(trend.name, CHANGE_POINT, change.verdict, change.change,
                                 change.low, change.high, change.pvalue,
                                 f"from {data.describe_report(change.index)}",
                                 change.verdict == SLOWER and beyond))
    return sorted(found, key=_severity)


# --- the headline ------------------------------------------------------------------------


@dataclass(frozen=True)
class Headline:
    """The page's first line: the gate's verdict (``verdict``: the worst one, its
    color), and the count of the other benchmarks (``count``, may be "")."""

    text: str
    verdict: str
    count: str = ""


def percent(fraction: float | None) -> str:
    """``+662 %``, ``-4.12 %``, ``+0.31 %``: a change in 3 significant digits."""
    if fraction is None:
        return "n/a"
    value = fraction * 100
    if abs(value) >= 100:
        return f"{value:+.0f} %"
    return f"{value:+.3g} %" if abs(value) >= 1 else f"{value:+.2f} %"


def _factor(ratio: float) -> str:
    """``7.6×``, ``512×``, ``1.04×``: how many times."""
    if ratio >= 10:
        return f"{ratio:.0f}×"
    return f"{ratio:.1f}×" if ratio >= 1.1 else f"{ratio:.2f}×"


def _words(result) -> tuple[str, str]:
    """How the verdict reads: ``slower``/``faster`` for a time, ``worse``/``better``
    for another metric."""
    if result.time_unit:
        return SLOWER, FASTER
    return VALUE_VERDICTS[SLOWER], VALUE_VERDICTS[FASTER]


def _magnitude(result) -> str:
    """``7.6× slower, +662 % [+445 %, +926 %]``."""
    worse, better = _words(result)
    interval = "" if result.low is None else f" [{percent(result.low)}, {percent(result.high)}]"
    if result.change is None:
        return f"{result.verdict}{interval}"
    ratio = 1.0 + result.change
    if ratio <= 0:
        return f"{percent(result.change)}{interval}"
    word = worse if result.verdict == SLOWER else better
    factor = ratio if ratio >= 1 else 1.0 / ratio
    return f"{_factor(factor)} {word}, {percent(result.change)}{interval}"


def level_start(data, name: str, verdict: str) -> int:
    """The first report of the latest's level for a benchmark the gate finds
    ``verdict``: the last change point of its trend when the latest is on that
    level and it shifted the same way, else the latest itself."""
    latest = data.latest_index
    for trend in data.trends:
        if trend.name != name or not trend.changes:
            continue
        last = trend.changes[-1]
        same_way = (last.change > 0) == (verdict == SLOWER)
        if last.verdict == verdict and same_way and last.index <= latest:
            return last.index
    return latest


def _since(data, name: str, verdict: str) -> str:
    """``, from commit 4e76784c`` (``, from #4`` without a commit; "" when the
    latest itself has none)."""
    index = level_start(data, name, verdict)
    commit = commit_of(data.reports[index])
    if commit:
        return f", from commit {commit[:8]}"
    return "" if index == data.latest_index else f", from #{index + 1}"


def _others(results: list, what) -> str:
    """``and 3 more: 2 slower (1 regression), 1 faster; 8 benchmarks within their
    history``: the verdicts of the benchmarks after the worst."""
    counts: dict[str, int] = {}
    for result in results:
        counts[result.verdict] = counts.get(result.verdict, 0) + 1
    if not counts:
        return ""
    parts = []
    for verdict in sorted(counts, key=lambda v: _RANK.get(v, 7)):
        if verdict == NO_CHANGE:
            continue
        text = f"{counts[verdict]:,} {verdict}"
        regressions = sum(1 for r in results if r.regression and r.verdict == verdict)
        if regressions:
            text += f" ({regressions:,} regression{'s' if regressions > 1 else ''})"
        parts.append(text)
    moved = sum(count for verdict, count in counts.items() if verdict != NO_CHANGE)
    changed = f"and {moved:,} more: " + ", ".join(parts) if parts else ""
    same = counts.get(NO_CHANGE, 0)
    within = f"{same:,} {'benchmark' if same == 1 else 'benchmarks'} {what(same)}" if same \
        else ""
    return "; ".join(part for part in (changed, within) if part)


def _latest_shift(data) -> Headline | None:
    """The history's level shift the latest report stands on, worst first: a gate that
    finds the latest within its history (the shift is stored already) still leads
    the page with the change a reader of the history wants to see."""
    shifts = []
    for trend in data.trends:
        if not trend.changes:
            continue
        last = trend.changes[-1]
        if last.verdict in (FASTER, SLOWER) and last.index <= data.latest_index:
            shifts.append((trend, last))
    if not shifts:
        return None
    trend, point = max(shifts, key=lambda item: (item[1].verdict == SLOWER,
                                                  abs(math.log1p(item[1].change))))
    threshold = data.options.threshold_for(trend.name)
    beyond = point.change > (threshold.fraction if threshold is not None else 0.0)
    word = "slower" if point.verdict == SLOWER else "faster"
    ratio = 1.0 + point.change
    factor = _factor(ratio if ratio >= 1 else 1.0 / ratio) if ratio > 0 else ""
    interval = "" if point.low is None else f" [{percent(point.low)}, {percent(point.high)}]"
    kind = ("regression" if point.verdict == SLOWER and beyond else
            "improvement" if point.verdict == FASTER else "slower, within its threshold")
    commit = commit_of(data.reports[point.index])
    since = f"commit {commit[:8]}" if commit else f"#{point.index + 1}"
    text = (f"{display_name(trend.name)}: {factor} {word} since #{point.index + 1}, "
            f"{percent(point.change)}{interval} — {kind}, from {since} (a shift of the "
            f"history's level; the latest is on the new level, which the gate counts as "
            f"its history)")
    return Headline(text, point.verdict)


def headline(data) -> Headline | None:
    """The gate's verdict for the latest report (see the module doc); None when
    nothing is compared (one report)."""
    if not data.comparisons:
        return None
    pair = data.comparisons[-1]
    if pair.comparison is None:
        return Headline(f"Cannot judge: {pair.problem}", CANNOT_JUDGE)
    comparison = pair.comparison
    results = sorted(comparison.benchmarks, key=rank)
    history = comparison.history is not None

    def what(count: int) -> str:
        if history:
            return f"within {'its' if count == 1 else 'their'} history"
        return f"without a significant change against {data.tag(pair.baseline[0])}"

    if not results:
        return Headline(f"Nothing compared: no report before the latest has its "
                        f"{len(comparison.only_new):,} benchmark(s)", NOT_COMPARED)
    worst, rest = results[0], results[1:]
    name = display_name(worst.name)
    if worst.verdict in (FASTER, SLOWER):
        kind = ("regression" if worst.regression else
                f"{worst.verdict}, within its {percent(worst.threshold)[1:]} threshold"
                if worst.verdict == SLOWER else "improvement")
        text = (f"{name}: {_magnitude(worst)} — {kind}"
                f"{_since(data, worst.name, worst.verdict)}")
        return Headline(text, worst.verdict, _others(rest, what))
    # A gate that cannot judge the latest against a history holding a level shift
    # (the latest on the new level, the history mixed) still leads with the shift.
    shift = _latest_shift(data) if history else None
    if worst.verdict in (NO_CHANGE, CANNOT_JUDGE) and shift is not None:
        gate = ("the gate finds the latest within its history" if worst.verdict == NO_CHANGE
                else f"the gate cannot judge the latest against its history ({worst.reason})")
        return Headline(shift.text, shift.verdict, gate)
    if worst.verdict in (CANNOT_JUDGE, INCONCLUSIVE):
        reason = worst.reason or (
            f"fewer than {comparison.options.min_repetitions} repetitions a side "
            f"({worst.n_old} vs {worst.n_new})" if worst.verdict == INCONCLUSIVE else "")
        change = "" if worst.change is None else (
            f" {percent(worst.change)}" + ("" if worst.low is None else
                                           f" [{percent(worst.low)}, {percent(worst.high)}]"))
        lead = "Cannot judge" if worst.verdict == CANNOT_JUDGE else "Inconclusive"
        return Headline(f"{lead}: {name}{change}: {reason}", worst.verdict,
                        _others(rest, what))
    if worst.verdict == NO_CHANGE:
        same = [r for r in results if r.verdict == NO_CHANGE]
        shown = [r.detectable for r in same if r.detectable is not None]
        could = ""
        if shown:
            source = "this history" if history else "these two reports"
            could = f" (smallest change {source} could show: {percent(max(shown))[1:]})"
        count = f"{len(same):,} {'benchmark' if len(same) == 1 else 'benchmarks'}"
        text = f"No significant change: {count} {what(len(same))}{could}"
        others = len(results) - len(same)
        return Headline(text, NO_CHANGE, f"and {others:,} not compared" if others else "")
    reasons = "; ".join(dict.fromkeys(note for r in results for note in r.notes)) or \
        "no time to compare"
    return Headline(f"Nothing compared: {reasons}", NOT_COMPARED)
