"""The reporters of ``ireebench compare``: ``console``, ``markdown`` and ``json``.

* ``console`` (the default display): a fixed-width table, then the summary
  (geometric mean, verdict counts), the notes and the outcome;
* ``markdown``: the same as a GitHub-flavoured Markdown table, for a pull
  request comment or a CI job summary;
* ``json``: :meth:`ireebench.comparison.Comparison.to_dict`, times in
  seconds per iteration (the default of ``--out``).

Text from the files (benchmark names, paths, error messages) reaches a
terminal or a pull request: control characters and bidirectional overrides
are written as escapes (``\\x1b``, ``\\u202e``), so a name can neither
colour, move the cursor nor reorder a line (:func:`printable`). The tables
are laid out as tabulate's ``simple`` and ``github`` formats lay them out,
in one pass over the rows (tabulate infers a type for every cell: a report of
200,000 benchmarks spent most of its reporting time there).
"""

from __future__ import annotations

import json
import re

from ireebench.comparison import INCONCLUSIVE, SLOWER, CompareReporter
from ireebench.results import TIME_UNIT_MULTIPLIER

HEADERS = ["Benchmark", "Old", "New", "Change", "CI", "p-value", "Reps", "Verdict"]
# C0 and C1 controls, DEL, and the bidirectional embeddings, overrides and
# isolates (the "Trojan Source" characters).
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e"
                          "\u2066-\u2069]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match) -> str:
    char = match.group()
    return _NAMED.get(char) or (f"\\x{ord(char):02x}" if ord(char) < 0x100
                                else f"\\u{ord(char):04x}")


def printable(text) -> str:
    """``text`` with control and bidi characters escaped (one line, no terminal codes)."""
    return _UNPRINTABLE.sub(_escape, str(text))


def layout(headers: list[str], rows: list[list[str]], style: str) -> str:
    """A table of strings as tabulate lays out ``simple`` or ``github``
    (``disable_numparse``): left-aligned, each column as wide as its widest
    cell or its header and 2; cells stripped of surrounding whitespace."""
    rows = [[cell.strip() for cell in row] for row in rows]
    widths = [len(header) + 2 for header in headers]
    for index, column in enumerate(zip(*rows)):
        widths[index] = max(widths[index], *map(len, column))
    if style == "github":
        def line(cells):
            return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"
        rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    else:
        def line(cells):
            return "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()
        rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), rule, *map(line, rows)])


def format_time(seconds: float | None, unit: str) -> str:
    if seconds is None:
        return "-"
    value = seconds * TIME_UNIT_MULTIPLIER.get(unit, 1.0)
    text = f"{value:.0f}" if abs(value) >= 1e4 else f"{value:.4g}"
    return f"{text} {unit}"


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
    if benchmark.regression:
        return f"{benchmark.verdict}: REGRESSION (> {format_percent(benchmark.threshold)})"
    if benchmark.verdict == SLOWER:
        return f"{benchmark.verdict} (within {format_percent(benchmark.threshold)})"
    return benchmark.verdict


def table_rows(comparison) -> list[list[str]]:
    rows = []
    for b in comparison.benchmarks:
        rows.append([printable(b.name), format_time(b.old, b.time_unit),
                     format_time(b.new, b.time_unit),
                     format_change(b.change), format_interval(b), format_pvalue(b.pvalue),
                     f"{b.n_old} vs {b.n_new}", format_verdict(b)])
    return rows


def headers(comparison) -> list[str]:
    level = f"{comparison.options.confidence * 100:g}% CI"
    return [level if header == "CI" else header for header in HEADERS]


def describe(comparison) -> str:
    options = comparison.options
    return (f"{options.metric}, median of the repetitions; two-sided Mann-Whitney U test at "
            f"alpha {options.alpha:g} ({options.min_repetitions}+ repetitions a side for a "
            f"verdict); change: Hodges-Lehmann ratio new/old with its "
            f"{options.confidence * 100:g}% interval")


def summary_lines(comparison) -> list[str]:
    """The lines under the table: summary, notes, outcome."""
    lines = []
    if comparison.geomean_change is not None:
        lines.append(f"Geometric mean of the changes over {comparison.geomean_count} "
                     f"benchmark(s): {format_change(comparison.geomean_change)}")
    counts = {}
    for b in comparison.benchmarks:
        counts[b.verdict] = counts.get(b.verdict, 0) + 1
    lines.append("Verdicts: " + ", ".join(f"{count} {verdict}"
                                          for verdict, count in counts.items()))
    for b in comparison.benchmarks:
        for note in b.notes:
            lines.append(f"Note: {b.name}: {note}")
    if comparison.count(INCONCLUSIVE):
        lines.append(f"Note: a verdict needs {comparison.options.min_repetitions} repetitions "
                     f"or more a side: run both with --benchmark_repetitions="
                     f"{comparison.options.min_repetitions} (or more)")
    if comparison.only_old:
        lines.append(f"Only in old ({comparison.old_path}): {', '.join(comparison.only_old)}")
    if comparison.only_new:
        lines.append(f"Only in new ({comparison.new_path}): {', '.join(comparison.only_new)}")
    for note in comparison.notes:
        lines.append(f"Note: {note}")
    regressions = comparison.regressions
    if regressions:
        listed = ", ".join(f"{b.name} ({format_change(b.change)} > "
                           f"{format_percent(b.threshold)})" for b in regressions)
        lines.append(f"FAILED: {len(regressions)} significant regression(s) beyond the "
                     f"threshold: {listed}")
    else:
        lines.append("OK: no significant regression beyond the thresholds")
    return lines


class ConsoleCompareReporter(CompareReporter):
    """A plain table, as Google Benchmark's compare.py prints one."""

    def report(self, comparison) -> None:
        table = layout(headers(comparison), table_rows(comparison), "simple")
        title = (f"Comparing {printable(comparison.old_path)} (old) with "
                 f"{printable(comparison.new_path)} (new)")
        text = [title, describe(comparison), "", table, ""]
        text += map(printable, summary_lines(comparison))
        self.stream.write("\n".join(text) + "\n")
        self.stream.flush()


def _cell(text: str) -> str:
    return printable(text).replace("|", "\\|")


def _code(text: str) -> str:
    """A Markdown code span that holds ``text``, backticks included."""
    text = _cell(text)
    fence = "`" * (max(map(len, re.findall("`+", text)), default=0) + 1)
    padding = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{padding}{text}{padding}{fence}"


class MarkdownCompareReporter(CompareReporter):
    """A GitHub-flavoured Markdown table and a bullet list."""

    def report(self, comparison) -> None:
        rows = [[_code(row[0]), *map(_cell, row[1:])] for row in table_rows(comparison)]
        if comparison.regressions:
            for row, benchmark in zip(rows, comparison.benchmarks):
                if benchmark.regression:
                    row[-1] = f"**{row[-1]}**"
        table = layout(headers(comparison), rows, "github")
        title = (f"**ireebench compare**: {_code(comparison.old_path)} (old) → "
                 f"{_code(comparison.new_path)} (new)")
        text = [title, "", f"_{describe(comparison)}_", "", table, ""]
        text += [f"- {_cell(line)}" for line in summary_lines(comparison)]
        self.stream.write("\n".join(text) + "\n")
        self.stream.flush()


class JSONCompareReporter(CompareReporter):
    """The comparison as JSON (times in seconds per iteration)."""

    def report(self, comparison) -> None:
        self.stream.write(json.dumps(comparison.to_dict(), indent=2) + "\n")
        self.stream.flush()
