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
import textwrap

from ireebench.comparison.reporter import CompareReporter
from ireebench.comparison.verdicts import AUTO_METRIC, INCONCLUSIVE
from ireebench.errors import printable
from ireebench.lib.comparison_format import (
    CORRECTION_NAMES,
    CORRECTION_SHORT,
    VALUE_VERDICTS,
    adjusted,
    format_change,
    format_interval,
    format_percent,
    format_pvalue,
    format_verdict,
)
from ireebench.results import TIME_UNIT_MULTIPLIER

HEADERS = ["Benchmark", "Old", "New", "Change", "CI", "p-value", "Detectable", "Reps",
           "Verdict"]
# The console's verdict column wraps at this width (its advice runs to 190 characters).
VERDICT_WIDTH = 60
# The mark of a change whose sign differs from the medians' (a footnote says why).
SIGN_MARK = "*"


def layout(headers: list[str], rows: list[list[str]], style: str, wrap: int = 0) -> str:
    """A table of strings as tabulate lays out ``simple`` or ``github``
    (``disable_numparse``): left-aligned, each column as wide as its widest
    cell or its header and 2; cells stripped of surrounding whitespace. With
    ``wrap`` (``simple`` only), the last column (the verdict and its advice, up
    to 190 characters) wraps at that width onto lines under it, so a terminal
    does not fold the table."""
    rows = [[cell.strip() for cell in row] for row in rows]
    if wrap:
        rows = [row[:-1] + [line] if not index else [""] * (len(row) - 1) + [line]
                for row in rows
                for index, line in enumerate(textwrap.wrap(row[-1], wrap, break_long_words=False, break_on_hyphens=False) or [""])]
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
HISTORY_HEADERS = ["Benchmark", "Baseline", "Band", "New", "Change", "CI", "p-value",
                   "Detectable", "Reps", "Runs", "Verdict"]


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


def format_detectable(benchmark) -> str:
    """The smallest worsening the benchmark could have shown: ``4.1%``, ``exact``, ``none``."""
    if benchmark.method == "equal values":
        return "exact"
    if getattr(benchmark, "additive", False) and not benchmark.old:
        return "-"  # a difference from 0: no relative size
    if benchmark.detectable is None:
        return "none" if benchmark.pvalue is not None and benchmark.verdict != INCONCLUSIVE \
            else "-"
    percent = benchmark.detectable * 100
    return f"{percent:.0f}%" if percent >= 100 else f"{percent:.3g}%"


def signs_differ(benchmark) -> bool:
    """The Hodges-Lehmann change and the medians' ratio point different ways."""
    change, medians = benchmark.change, benchmark.median_change
    return change is not None and medians is not None and change * medians < 0


def format_estimate(benchmark) -> str:
    """The change, marked when its sign differs from the medians' (see the footnote)."""
    text = format_change(benchmark.change)
    return f"{text} {SIGN_MARK}" if signs_differ(benchmark) else text


def format_test_pvalue(benchmark) -> str:
    """The p-value the verdict used: adjusted over the suite when it was."""
    adjusted = benchmark.adjusted_pvalue
    return format_pvalue(benchmark.pvalue if adjusted is None else adjusted)


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
        row = [printable(b.name), *old, format_time(b.new, b.time_unit), format_estimate(b),
               format_interval(b), format_test_pvalue(b), format_detectable(b),
               f"{b.n_old} vs {b.n_new}"]
        if comparison.history is not None:
            row.append(str(len(b.baseline_runs)))
        rows.append(row + [format_verdict(b)])
    return rows


def headers(comparison) -> list[str]:
    level = f"{comparison.options.confidence * 100:g}% CI"
    pvalue = (f"p ({CORRECTION_SHORT[comparison.options.correction]})" if adjusted(comparison)
              else "p-value")
    names = HEADERS if comparison.history is None else HISTORY_HEADERS
    renamed = {"CI": level, "p-value": pvalue}
    if getattr(comparison, "paired", 0):
        renamed["Reps"] = "Rounds"
    return [renamed.get(header, header) for header in names]


def _judging(comparison) -> str:
    """What the description adds about the correction and the detectable change."""
    options = comparison.options
    parts = []
    if adjusted(comparison):
        parts.append(f"p-values adjusted over {comparison.tested} benchmarks "
                     f"({CORRECTION_NAMES[options.correction]})")
    if options.detectable is not None and getattr(comparison, "paired", 0):
        parts.append(f"'cannot judge' where not significant and the interval reaches beyond "
                     f"±{format_percent(options.detectable)} (or the threshold)")
    elif options.detectable is not None:
        parts.append(f"'cannot judge' where no change of {format_percent(options.detectable)} "
                     f"(or the threshold) could have been seen")
    return "; " + "; ".join(parts) if parts else ""


def metric_text(comparison) -> str:
    """The metric compared; with ``--metric=auto`` the one it chose, and why."""
    metric = comparison.options.metric
    if metric != AUTO_METRIC:
        return metric
    used = list(dict.fromkeys(b.metric for b in comparison.benchmarks if b.metric))
    if used == ["cpu_time"]:
        return "cpu_time (auto: on local-sync the CPU time is the work)"
    if "cpu_time" in used:
        return "cpu_time on local-sync, real_time elsewhere (auto)"
    return f"{used[0] if used else 'real_time'} (auto)"


def describe(comparison) -> str:
    options = comparison.options
    direction = " (higher is better)" if comparison.higher_is_better else ""
    metric = metric_text(comparison)
    if getattr(comparison, "paired", 0):
        return (f"{metric}{direction}, paired by round; two-sided Wilcoxon "
                f"signed-rank test of the rounds' log ratios new/old at alpha "
                f"{options.alpha:g}; change: Hodges-Lehmann estimate of the ratio with its "
                f"{options.confidence * 100:g}% interval{_judging(comparison)}")
    if comparison.history is not None:
        return (f"{metric}{direction}; slower or faster: a significant two-sided "
                f"Mann-Whitney U test against the stored runs' pooled repetitions at alpha "
                f"{options.alpha:g} ({options.min_repetitions}+ new repetitions), confirmed "
                f"from 3 stored runs by the run-level test of their medians' spread, or a "
                f"new median interval beyond every stored repetition; within the band of the "
                f"runs' median {options.confidence * 100:g}% intervals no change; a "
                f"regression is slower beyond the threshold{_judging(comparison)}")
    return (f"{metric}{direction}, median of the repetitions; two-sided "
            f"Mann-Whitney U test at "
            f"alpha {options.alpha:g} ({options.min_repetitions}+ repetitions a side for a "
            f"verdict); change: Hodges-Lehmann ratio new/old with its "
            f"{options.confidence * 100:g}% interval{_judging(comparison)}")


def title(comparison) -> str:
    """What is compared with what (the runs of a history, newest first)."""
    if getattr(comparison, "paired", 0):
        return (f"Comparing {comparison.old_path} (old) with {comparison.new_path} (new), "
                f"measured together: {comparison.paired} rounds")
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
        if b.left_out:
            lines.append(f"Note: {b.name}: disturbed stored run(s) left out of its baseline: "
                         f"{', '.join(b.left_out)}")
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
    lines += disturbance_lines(comparison)
    lines += sign_lines(comparison)
    lines.append(outcome(comparison))
    return lines


def disturbance_lines(comparison) -> list[str]:
    """The disturbed runs by name: the new run's (a re-run advised where a benchmark's
    metric counted what disturbed it), the old ones'."""
    lines = []
    runs = comparison.disturbed_runs
    new_run = runs.get(comparison.new_path, "")
    if new_run:
        advised = any(b.advice for b in comparison.benchmarks) or not comparison.benchmarks
        lines.append(f"Disturbed: {comparison.new_path} (new): {new_run}"
                     + (": re-run advised" if advised else
                        " (not what the CPU times compared count: no re-run needed)"))
    for b in comparison.benchmarks:
        own = [text for text in b.disturbances if text not in new_run]
        if own:
            lines.append(f"Disturbed: {b.name} in {comparison.new_path} (new): "
                         f"{'; '.join(own)}: re-run advised")
    for label, text in runs.items():
        if label != comparison.new_path:
            where = "stored run" if comparison.history is not None else "old"
            lines.append(f"Disturbed: {label} ({where}): {text}")
    return lines


def sign_lines(comparison) -> list[str]:
    """The footnote of the changes whose sign differs from the medians' ratio."""
    marked = [b for b in comparison.benchmarks if signs_differ(b)]
    if not marked:
        return []
    shown = ", ".join(f"{b.name} {format_change(b.median_change)}" for b in marked[:5])
    more = f" and {len(marked) - 5} more" if len(marked) > 5 else ""
    return [(f"{SIGN_MARK} Change is the Hodges-Lehmann estimate (the median of the new/old "
             f"ratios of all pairs of repetitions), not the ratio of the medians shown; where "
             f"marked the two differ in sign (the medians' change: {shown}{more}): the "
             f"repetitions overlap, so the change is uncertain; its interval says how much")]


def outcome(comparison) -> str:
    """The last line: FAILED, CANNOT JUDGE or OK, and why."""
    regressions = comparison.regressions
    if regressions:
        listed = ", ".join(f"{b.name} ({format_change(b.change)} > "
                           f"{format_percent(b.threshold)})" for b in regressions)
        return (f"FAILED: {len(regressions)} significant regression(s) beyond the "
                f"threshold: {listed}")
    unjudged = comparison.cannot_judge
    if unjudged:
        listed = ", ".join(b.name for b in unjudged[:5])
        more = f" and {len(unjudged) - 5} more" if len(unjudged) > 5 else ""
        if comparison.options.accept_cannot_judge:
            return (f"OK (accepted): no significant regression, but {len(unjudged)} "
                    f"benchmark(s) cannot be judged: {listed}{more}")
        return (f"CANNOT JUDGE: {len(unjudged)} benchmark(s) could not be judged: "
                f"{listed}{more} (see the verdicts; exit {comparison.exit_status}, "
                f"--accept_cannot_judge passes)")
    return "OK: no significant regression beyond the thresholds"


class ConsoleCompareReporter(CompareReporter):
    """A plain table, as Google Benchmark's compare.py prints one."""

    def report(self, comparison) -> None:
        table = layout(headers(comparison), table_rows(comparison), "simple", VERDICT_WIDTH)
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
