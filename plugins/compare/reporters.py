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
colour, move the cursor nor reorder a line (:func:`ireebench.errors.printable`). The tables
are laid out as tabulate's ``simple`` and ``github`` formats lay them out,
in one pass over the rows (tabulate infers a type for every cell: a report of
200,000 benchmarks spent most of its reporting time there).
"""

from __future__ import annotations

import json
import re

from ireebench.comparison import INCONCLUSIVE, SLOWER, CompareReporter
from ireebench.errors import printable
from ireebench.results import TIME_UNIT_MULTIPLIER

HEADERS = ["Benchmark", "Old", "New", "Change", "CI", "p-value", "Reps", "Verdict"]


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


# Against a history: the pooled baseline, the stored runs' band, how many runs.
HISTORY_HEADERS = ["Benchmark", "Baseline", "Band", "New", "Change", "CI", "p-value", "Reps",
                   "Runs", "Verdict"]


def format_time(seconds: float | None, unit: str) -> str:
    """A time in ``unit``; a metric that is not a time (``unit`` "") as it is."""
    if seconds is None:
        return "-"
    if not unit:
        return format_value(seconds)
    value = seconds * TIME_UNIT_MULTIPLIER.get(unit, 1.0)
    text = f"{value:.0f}" if abs(value) >= 1e4 else f"{value:.4g}"
    return f"{text} {unit}"


def format_value(value: float) -> str:
    """A number of the rows: whole numbers (bytes) in full, others with 4 digits."""
    if float(value).is_integer() and abs(value) < 1e18:
        return str(int(value))
    return f"{value:.0f}" if abs(value) >= 1e4 else f"{value:.4g}"


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
    verdict = benchmark.verdict
    if not benchmark.time_unit:
        verdict = VALUE_VERDICTS.get(verdict, verdict)
    if benchmark.regression:
        return f"{verdict}: REGRESSION (> {format_percent(benchmark.threshold)})"
    if benchmark.verdict == SLOWER:
        return f"{verdict} (within {format_percent(benchmark.threshold)})"
    return verdict


def format_band(benchmark) -> str:
    if benchmark.band_low is None:
        return "-"
    return (f"[{format_time(benchmark.band_low, benchmark.time_unit)}, "
            f"{format_time(benchmark.band_high, benchmark.time_unit)}]")


def table_rows(comparison) -> list[list[str]]:
    rows = []
    for b in comparison.benchmarks:
        old = [format_time(b.old, b.time_unit)]
        if comparison.history is not None:
            old.append(format_band(b))
        row = [printable(b.name), *old, format_time(b.new, b.time_unit), format_change(b.change),
               format_interval(b), format_pvalue(b.pvalue), f"{b.n_old} vs {b.n_new}"]
        if comparison.history is not None:
            row.append(str(len(b.baseline_runs)))
        rows.append(row + [format_verdict(b)])
    return rows


def headers(comparison) -> list[str]:
    level = f"{comparison.options.confidence * 100:g}% CI"
    names = HEADERS if comparison.history is None else HISTORY_HEADERS
    return [level if header == "CI" else header for header in names]


def describe(comparison) -> str:
    options = comparison.options
    direction = " (higher is better)" if comparison.higher_is_better else ""
    if comparison.history is not None:
        return (f"{options.metric}{direction}; a regression is a new median above the band of "
                f"the stored runs' median {options.confidence * 100:g}% intervals, a "
                f"significant two-sided Mann-Whitney U test against their pooled repetitions at "
                f"alpha {options.alpha:g} ({options.min_repetitions}+ new repetitions) and a "
                f"Hodges-Lehmann change beyond the threshold")
    return (f"{options.metric}{direction}, median of the repetitions; two-sided "
            f"Mann-Whitney U test at "
            f"alpha {options.alpha:g} ({options.min_repetitions}+ repetitions a side for a "
            f"verdict); change: Hodges-Lehmann ratio new/old with its "
            f"{options.confidence * 100:g}% interval")


def title(comparison) -> str:
    """What is compared with what (the runs of a history, newest first)."""
    if comparison.history is None:
        return f"Comparing {comparison.old_path} (old) with {comparison.new_path} (new)"
    runs = comparison.history
    used = f": {', '.join(runs)}" if runs else ""
    return (f"Comparing {comparison.new_path} (new) with {comparison.old_path}, "
            f"{len(runs)} stored run(s), newest first{used}")


def history_lines(comparison) -> list[str]:
    """A benchmark whose baseline is not every run of the history says which runs it used."""
    if comparison.history is None:
        return []
    return [f"Note: {b.name}: baseline of {len(b.baseline_runs)} run(s): "
            f"{', '.join(b.baseline_runs)}"
            for b in comparison.benchmarks if b.baseline_runs != comparison.history]


def summary_lines(comparison) -> list[str]:
    """The lines under the table: summary, notes, outcome."""
    lines = []
    if comparison.geomean_change is not None:
        lines.append(f"Geometric mean of the changes over {comparison.geomean_count} "
                     f"benchmark(s): {format_change(comparison.geomean_change)}")
    counts = {}
    for b in comparison.benchmarks:
        counts[b.verdict] = counts.get(b.verdict, 0) + 1
    words = {} if comparison.options.is_time else VALUE_VERDICTS
    lines.append("Verdicts: " + (", ".join(f"{count} {words.get(verdict, verdict)}"
                                           for verdict, count in counts.items()) or "none"))
    lines += history_lines(comparison)
    for b in comparison.benchmarks:
        for note in b.notes:
            lines.append(f"Note: {b.name}: {note}")
    if comparison.count(INCONCLUSIVE):
        lines.append(f"Note: a verdict needs {comparison.options.min_repetitions} repetitions "
                     f"or more a side: run both with --benchmark_repetitions="
                     f"{comparison.options.min_repetitions} (or more)")
    if comparison.only_old:
        lines.append(f"Only in old ({comparison.old_path}): {', '.join(comparison.only_old)}")
    if comparison.only_new and comparison.history is not None:
        lines.append(f"No stored run (no baseline, not compared): "
                     f"{', '.join(comparison.only_new)}")
    elif comparison.only_new:
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
        text = [printable(title(comparison)), describe(comparison), "", table, ""]
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
        heading = (f"**ireebench compare**: {_code(comparison.old_path)} (old) → "
                   f"{_code(comparison.new_path)} (new)")
        if comparison.history is not None:
            heading = f"**ireebench compare**: {_cell(title(comparison))}"
        text = [heading, "", f"_{describe(comparison)}_", "", table, ""]
        text += [f"- {_cell(line)}" for line in summary_lines(comparison)]
        self.stream.write("\n".join(text) + "\n")
        self.stream.flush()


class JSONCompareReporter(CompareReporter):
    """The comparison as JSON (times in seconds per iteration)."""

    def report(self, comparison) -> None:
        self.stream.write(json.dumps(comparison.to_dict(), indent=2) + "\n")
        self.stream.flush()
