"""A library for the text of a comparison, as ``ireebench compare`` prints it: a
change, its interval, a p-value, a verdict (with its threshold and advice), and
the names of the p-value corrections; ``compare``'s reporters and ``ireebench
report``'s sections write the same words.
"""

from __future__ import annotations

from ireebench.comparison.verdicts import SLOWER

CORRECTION_NAMES = {"bh": "Benjamini-Hochberg", "holm": "Holm"}
CORRECTION_SHORT = {"bh": "BH", "holm": "Holm"}
# How the verdicts read for a metric that is not a time.
VALUE_VERDICTS = {"faster": "better", "slower": "worse"}


def format_change(change: float | None) -> str:
    return "-" if change is None else f"{change * 100:+.2f}%"


def format_percent(fraction: float) -> str:
    return f"{fraction * 100:g}%"


def format_interval(benchmark) -> str:
    if benchmark.low is None:
        return "n/a"
    return f"[{format_change(benchmark.low)}, {format_change(benchmark.high)}]"


def format_pvalue(pvalue: float | None) -> str:
    if pvalue is None:
        return "n/a"
    return "<0.0001" if pvalue < 1e-4 else f"{pvalue:.4f}"


def format_verdict(benchmark) -> str:
    """The verdict, its threshold, why it is what it is, and the advice."""
    verdict = benchmark.verdict
    if not benchmark.time_unit:
        verdict = VALUE_VERDICTS.get(verdict, verdict)
    if benchmark.regression:
        verdict = f"{verdict}: REGRESSION (> {format_percent(benchmark.threshold)})"
    elif benchmark.verdict == SLOWER:
        verdict = f"{verdict} (within {format_percent(benchmark.threshold)})"
    reason = getattr(benchmark, "reason", "")
    if reason:
        verdict = f"{verdict} ({reason})"
    advice = getattr(benchmark, "advice", "")
    return f"{verdict}; {advice}" if advice else verdict


def adjusted(comparison) -> bool:
    """Whether the p-values were adjusted over the suite (two or more tested)."""
    return comparison.options.correction in CORRECTION_NAMES and comparison.tested > 1


__all__ = ["CORRECTION_NAMES", "CORRECTION_SHORT", "VALUE_VERDICTS", "adjusted", "format_change",
           "format_interval", "format_percent", "format_pvalue", "format_verdict"]
