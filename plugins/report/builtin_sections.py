"""The report's own sections: built-ins on the hook a plugin's sections use.

This module is the plugin ``report.sections``: :mod:`.build` registers it when
a report is drawn, and it answers ``ireebench_report_sections`` like any
plugin, with the sections its data allows (Summary, Comparison, Trend,
Sweeps, Benchmarks, Dispatches, Device time, memory and counters, Inputs:
docs/report.md, "What is drawn"). Past a few dozen benchmarks the charts
show a summary view (:data:`MAX_CHART_BENCHMARKS`, :data:`MAX_TRENDS`,
:data:`MAX_SWEEP_CHARTS`, :data:`MAX_DISPATCH_CHARTS`) and the page says so;
every table holds every benchmark, the first :data:`MAX_TABLE_ROWS` rows
open. Charts come from ``out.charts`` (:mod:`.charts`), the units from
``report.units`` (one per quantity on the page).
"""

from __future__ import annotations

import statistics
from pathlib import Path

from ireebench import hookimpl
from ireebench.comparison import CANNOT_JUDGE, FASTER, INCONCLUSIVE, NO_CHANGE, SLOWER
from ireebench.lib.comparison_format import (
    CORRECTION_SHORT,
    adjusted,
    format_change,
    format_interval,
    format_pvalue,
    format_verdict,
)
from ireebench.reporting import SECTION_ORDER, ReportSection

from . import page
from .analysis import (
    CONFIDENCE,
    MAX_PAIRWISE,
    commit_of,
    distribution,
    significant,
    sweep_metrics,
    sweeps,
)
from .data import DISPATCH_COUNTERS, MEMORY_METRICS, TIME_METRICS, Benchmark, display_name
from .model import ReportData, date_text
from .page import Raw
from .sections import SectionWriter
from .verdict import CHANGE_POINT, pvalue_text
from .verdict import rank as verdict_rank

NAME = "report.sections"  # this plugin's registration name
MAX_CHART_BENCHMARKS = 40  # benchmarks a chart shows; more: the most changed (heaviest)
MAX_CHART_ROWS = 40  # rows of one distribution chart (benchmarks x reports beside)
MAX_TRENDS = 12
MAX_SWEEP_CHARTS = 24
MAX_DISPATCH_CHARTS = 12
MAX_TABLE_ROWS = 100  # rows of a table shown open; the rest in a <details>
MAX_SUMMARY_ROWS = 20  # the summary's changes shown open: the worst
# Counters a column of their own would only repeat: Google Benchmark's
# iterations per second (one over the time) and a dispatch row's own.
REDUNDANT_COUNTERS = ("items_per_second", *DISPATCH_COUNTERS)


@hookimpl
def ireebench_report_sections(report: ReportData) -> list[ReportSection]:
    """The built-in sections the data allows (see the module docstring)."""
    latest = report.latest
    found = [ReportSection("Summary", summary, SECTION_ORDER["summary"], "summary")]
    if report.comparisons:
        found.append(ReportSection("Comparison", comparison, SECTION_ORDER["comparison"], "comparison"))
    if report.trends:
        found.append(ReportSection("Trend", trend, SECTION_ORDER["trend"], "trend"))
    if sweeps(latest):
        found.append(ReportSection("Sweeps", sweep, SECTION_ORDER["sweeps"], "sweeps"))
    if any(r.drawable for r in report.reports):
        found.append(ReportSection("Benchmarks", benchmarks, SECTION_ORDER["benchmarks"], "benchmarks"))
    if any(b.dispatches for b in latest.drawable):
        found.append(ReportSection("Dispatches", dispatches, SECTION_ORDER["dispatches"], "dispatches"))
    if _with_device(latest) or _metric_names(latest):
        found.append(ReportSection("Device time, memory and counters", metrics,
                                   SECTION_ORDER["metrics"], "metrics"))
    found.append(ReportSection("Inputs", inputs, SECTION_ORDER["inputs"], "inputs"))
    return found


# --- helpers ---------------------------------------------------------------------------


def _name(run_name: str) -> str:
    return display_name(run_name)


def _verdict_cell(verdict: str, text: str) -> Raw:
    css = f"verdict-{verdict.split()[0]}" if verdict else ""
    return Raw(f"<span class=\"{css}\">{page.escape(text)}</span>")


def long_table(out: SectionWriter, headers: list[str], rows: list[list], what: str,
               numeric=frozenset(), names=frozenset(), shown: int = 0) -> None:
    """A table whose rows past ``shown`` (:data:`MAX_TABLE_ROWS`) are in a closed
    ``<details>``."""
    shown = shown or MAX_TABLE_ROWS
    out.table(headers, rows[:shown], numeric, names)
    rest = rows[shown:]
    if rest:
        out.details(f"the other {len(rest):,} {what}",
                    page.table(headers, rest, set(numeric), set(names)))


def ranked(report: ReportData, names: list[str]) -> list[str]:
    """The names, the most changed first when reports are compared, else the
    heaviest (largest median wall time in the latest report) first."""
    moved = report.changes()
    if moved:
        return sorted(names, key=lambda name: -moved.get(name, -1.0))
    latest = report.latest.benchmarks

    def weight(name):
        benchmark = latest.get(name)
        times = benchmark.metric("real_time") if benchmark is not None else []
        return -statistics.median(times) if times else 0.0

    return sorted(names, key=weight)


def _cut_note(out: SectionWriter, shown: int, total: int, what: str, how: str) -> None:
    if total > shown:
        out.paragraph(f"The chart shows {shown:,} of {total:,} {what} ({how}); the table "
                      "lists them all.", "meta")


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def _counts(comparison) -> str:
    counted = {}
    for result in comparison.benchmarks:
        counted[result.verdict] = counted.get(result.verdict, 0) + 1
    regressions = len(comparison.regressions)
    parts = []
    for verdict, count in sorted(counted.items(), key=lambda item: (
            item[0] != SLOWER, item[0] != FASTER, item[0])):
        text = f"{count:,} {verdict}"
        if verdict == SLOWER and regressions:
            text += f" ({regressions} beyond the threshold: a regression)"
        parts.append(text)
    return ", ".join(parts) or "nothing compared"


# --- 1. summary: the verdict ------------------------------------------------------------


HEADLINE_CSS = {SLOWER: "verdict-slower", FASTER: "verdict-faster",
                CANNOT_JUDGE: "verdict-cannot", INCONCLUSIVE: "verdict-cannot"}


def _pvalue_header(comparison) -> str:
    """``p (BH)`` when the p-values were adjusted over the suite, else ``p-value``."""
    return (f"p ({CORRECTION_SHORT[comparison.options.correction]})"
            if adjusted(comparison) else "p-value")


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def summary(report: ReportData, out: SectionWriter) -> None:
    head = report.headline
    if head is not None:
        css = HEADLINE_CSS.get(head.verdict, "")
        css = f"headline {css}".strip()
        out.html(f"<p class=\"{css}\">{page.escape(_sentence(head.text))}</p>")
        if head.count:
            out.paragraph(_sentence(head.count), "lead")
    for pair in report.comparisons:
        if pair.comparison is None:
            out.paragraph(f"{pair.title}: not compared ({pair.problem}).", "meta")
            continue
        out.paragraph(f"{pair.title} ({pair.command}): {_counts(pair.comparison)}.", "meta")
    if report.trends:
        points = sum(len(t.changes) for t in report.trends)
        having = sum(1 for t in report.trends if t.changes)
        out.paragraph(f"History of {len(report.reports)} reports, oldest first: "
                      + (f"{points} change point(s) in {having} benchmark(s), below."
                         if points else "no change point."), "meta")
    for pair in report.comparisons:
        if pair.comparison is None:
            continue
        judged = [b for b in sorted(pair.comparison.benchmarks, key=verdict_rank)
                  if b.verdict != NO_CHANGE]
        if not judged:
            continue
        alpha = pair.comparison.options.alpha
        rows = [[_verdict_cell(b.verdict, format_verdict(b)), _name(b.name),
                 format_change(b.change), format_interval(b), pvalue_text(b, alpha)]
                for b in judged]
        long_table(out, ["verdict", "benchmark", "change",
                         f"{CONFIDENCE * 100:g}% interval", _pvalue_header(pair.comparison)],
                   rows, "benchmarks", numeric={2, 3}, names={1}, shown=MAX_SUMMARY_ROWS)
        out.paragraph("change: the Hodges-Lehmann estimate of new / old − 1 with its "
                      "interval; p: the p-value the verdict used (the two-sided Mann-Whitney "
                      "U test of the repetitions, adjusted over the benchmarks; against a "
                      "history the larger of it and the run-level test), or the rule that "
                      "decided the verdict instead.", "meta")
    points = [f for f in report.findings if f.kind == CHANGE_POINT]
    if points:
        rows = [[_verdict_cell(f.verdict, f"change point: {f.verdict}"), _name(f.name),
                 format_change(f.change), format_interval(f), format_pvalue(f.pvalue),
                 f.where] for f in points]
        long_table(out, ["change point", "benchmark", "change",
                         f"{CONFIDENCE * 100:g}% interval", "p (its own U test)",
                         "where the level shifted"], rows, "change points",
                   numeric={2, 3, 4}, names={1, 5}, shown=MAX_SUMMARY_ROWS)
        out.paragraph("A change point is where a benchmark's level shifted in the history "
                      "(as ireebench history --changes finds it), from the first report of "
                      "the new level; its change and p-value are its own test between the "
                      "two levels' pooled repetitions, not the verdict of the latest.",
                      "meta")
    latest = report.latest
    failed = [b for b in latest.benchmarks.values() if b.errors]
    if not report.comparisons:
        out.html("<p class=\"headline\">"
                 f"{_count(len(latest.benchmarks), 'benchmark')} measured in "
                 f"{page.escape(latest.label)}" + (f", {len(failed):,} failed" if failed else "")
                 + ".</p>")
        if len(report.reports) > 1:
            out.paragraph("Nothing to compare: only one input has benchmarks to draw.", "meta")
    if failed:
        long_table(out, ["failed benchmark", "error"],
                   [[b.display, "; ".join(b.errors)] for b in failed], "failed benchmarks",
                   names={0, 1})
    notes = [note for pair in report.comparisons if pair.comparison is not None
             for note in pair.comparison.notes]
    for note in dict.fromkeys(notes):
        out.paragraph(f"Note: {note}.", "note")


# --- 2. comparison --------------------------------------------------------------------------


def comparison(report: ReportData, out: SectionWriter) -> None:
    options = report.options
    out.paragraph(
        "As ireebench compare: per benchmark the Hodges-Lehmann change new / old − 1 and "
        f"its {options.confidence * 100:g}% interval, a two-sided Mann-Whitney U test of "
        f"the repetitions at alpha {options.alpha:g} ({options.min_repetitions} or more a "
        "side for a verdict), and the geometric mean of the changes. Against a history "
        "(the gate), old is the pooled repetitions of the reports before the latest, and a "
        "change within the band of their medians' intervals is no significant change.",
        "meta")
    time = report.units.time
    for number, pair in enumerate(report.comparisons, 1):
        out.heading(pair.title)
        if pair.comparison is None:
            out.paragraph(pair.problem)
            continue
        result = pair.comparison
        changed = [b for b in result.benchmarks if b.change is not None]
        if changed:
            order = {name: i for i, name in enumerate(ranked(report, [b.name for b in changed]))}
            shown = sorted(changed, key=lambda b: order[b.name])[:MAX_CHART_BENCHMARKS]
            shown.sort(key=lambda b: b.change, reverse=True)  # the slowest at the top
            out.add_chart(out.charts.comparison_chart(
                out.slug("comparison", str(number)),
                f"change of each benchmark, colored by verdict: {pair.title}", result, shown))
            _cut_note(out, len(shown), len(changed), "benchmarks", "the most changed")
        history = pair.is_history
        rows = []
        for b in sorted(result.benchmarks, key=verdict_rank):
            is_time = bool(b.time_unit)
            value = time.text if is_time else (lambda v: "-" if v is None else f"{v:g}")
            row = [_name(b.name), value(b.old)]
            if history:
                row.append("-" if b.band_low is None
                           else f"[{value(b.band_low)}, {value(b.band_high)}]")
            row += [value(b.new), format_change(b.change), format_interval(b),
                    pvalue_text(b, options.alpha), f"{b.n_old}/{b.n_new}",
                    _verdict_cell(b.verdict, format_verdict(b))]
            rows.append(row)
        headers = ["benchmark", "old" if not history else "baseline (pooled)"]
        if history:
            headers.append("band of the medians")
        headers += ["new", "change", "interval", _pvalue_header(result), "reps", "verdict"]
        columns = len(headers)
        long_table(out, headers, rows, "benchmarks", numeric=set(range(1, columns - 1)),
                   names={0})
        geomean = ("-" if result.geomean_change is None
                   else format_change(result.geomean_change))
        out.paragraph(f"Geometric mean of the changes: {geomean} over {result.geomean_count} "
                      f"benchmark(s); {_counts(result)}.", "meta")
        notes = list(result.notes)
        if result.only_old:
            notes.append(f"only in the baseline: {', '.join(map(_name, result.only_old))}")
        if result.only_new:
            notes.append(f"only in {report.tag(pair.new)}: "
                         f"{', '.join(map(_name, result.only_new))}")
        notes += [f"{_name(b.name)}: {note}" for b in result.benchmarks for note in b.notes]
        if notes:
            out.details(f"{len(notes)} note(s)", "".join(page.paragraph(n) for n in notes))


# --- 3. trend ---------------------------------------------------------------------------------


def report_ticks(report: ReportData) -> list[str]:
    """Each report's tick on a history axis: its number (distinct) over its short
    commit, else its time to the second."""
    ticks = []
    for number, item in enumerate(report.reports, 1):
        commit = commit_of(item)[:8]
        date = date_text(item.context)
        ticks.append(f"#{number}\n{commit}" if commit else
                     f"#{number}\n{date[11:]}" if date else f"#{number}")
    return ticks


def trend(report: ReportData, out: SectionWriter) -> None:
    found = report.trends
    out.paragraph(
        f"Each benchmark over the {len(report.reports)} reports, oldest first (#1 the "
        "oldest): the median and its 95% interval per report. A dashed line is a change "
        "point: a shift of level the results store finds too (ireebench history --changes: "
        "PELT on the reports' medians, a level of two reports or more), which ireebench "
        "compare's engine finds faster or slower between the two levels' pooled "
        "repetitions (the change and its interval are its Hodges-Lehmann estimate).", "meta")
    commits = [commit_of(item) for item in report.reports]
    rows = []
    for item in found:
        for change in item.changes:
            rows.append([_verdict_cell(change.verdict, f"change point: {change.verdict}"),
                         _name(item.name),
                         report.describe_report(change.index), format_change(change.change),
                         "n/a" if change.low is None else
                         f"[{format_change(change.low)}, {format_change(change.high)}]",
                         format_pvalue(change.pvalue)])
    if rows:
        long_table(out, ["change point", "benchmark", "first report of the new level",
                         "change", "interval", "p (its own U test)"], rows, "change points",
                   numeric={3, 4, 5}, names={1, 2})
    else:
        out.paragraph("No change point.")
    order = {name: i for i, name in enumerate(ranked(report, [t.name for t in found]))}
    shown = sorted(found, key=lambda t: (not t.changes, order[t.name]))[:MAX_TRENDS]
    ticks = report_ticks(report)
    for item in shown:
        out.add_chart(out.charts.trend_chart(
            out.slug("trend", item.name), item, ticks, commits, report.units.time))
    _cut_note(out, len(shown), len(found), "benchmarks",
              "those with a change point, then the most changed")
    if len(found) > len(shown):
        time = report.units.time
        long_table(out, ["benchmark", "reports", "first median", "latest median", "change",
                         "change points"],
                   [[_name(t.name), len(t.indexes), time.text(t.distributions[0].median),
                     time.text(t.distributions[-1].median),
                     format_change(t.distributions[-1].median / t.distributions[0].median - 1),
                     len(t.changes)] for t in sorted(found, key=lambda t: order[t.name])],
                   "benchmarks", numeric={1, 2, 3, 4, 5}, names={0})


# --- 4. sweeps ----------------------------------------------------------------------------------


def sweep(report: ReportData, out: SectionWriter) -> None:
    drawn, wanted = 0, 0
    for found in sweeps(report.latest):
        out.heading(f"{found.family}: {len(found.points)} points over {', '.join(found.axes)}")
        for axis in found.axes:
            if len(found.values(axis)) < 2:
                continue
            for metric in sweep_metrics(found):
                wanted += 1
                if drawn >= MAX_SWEEP_CHARTS:
                    continue
                kind, scale = report.units.metric(metric)
                out.add_chart(out.charts.sweep_chart(
                    out.slug("sweep", found.family, axis, metric), found, axis, metric, kind,
                    scale))
                drawn += 1
    if wanted > drawn:
        out.paragraph(f"{drawn} of {wanted} sweep charts drawn (the first); the Benchmarks "
                      "table lists every point.", "meta")


# --- 5. benchmarks ------------------------------------------------------------------------------


def _beside(report: ReportData) -> list[int]:
    """The reports drawn beside each other: every one compared (up to
    MAX_PAIRWISE, not a history), else the latest."""
    drawable = [i for i, item in enumerate(report.reports) if item.drawable]
    if not report.as_history and len(drawable) <= MAX_PAIRWISE:
        return drawable
    return [report.latest_index]


def _summary_row(report: ReportData, benchmark: Benchmark, tag: str) -> list:
    time = report.units.time
    shape = distribution(benchmark)
    if shape is None:
        return [benchmark.display, tag, 0, "-", "-", "-", "-", "-", "-", "-",
                "; ".join(benchmark.errors) or "no time"]
    cold = benchmark.cold_start
    cv = shape.cv
    samples = shape.samples or [shape.median]
    interval = "-" if shape.interval is None else \
        f"[{time.text(shape.interval[0])}, {time.text(shape.interval[1])}]"
    return [benchmark.display, tag, len(shape.samples) or shape.source, time.text(shape.median),
            interval, "-" if cv is None else f"{cv * 100:.2f}%", time.text(min(samples)),
            time.text(max(samples)), len(shape.outliers), time.text(cold.real) if cold else "-",
            "; ".join(benchmark.errors)]


def benchmarks(report: ReportData, out: SectionWriter) -> None:
    beside = _beside(report)
    tags = {index: report.tag(index) for index in beside}
    names: dict[str, None] = {}  # the latest report's benchmarks first, then the others'
    for index in reversed(beside):
        names.update(dict.fromkeys(report.reports[index].benchmarks))
    order = ranked(report, list(names))
    out.paragraph(
        "Wall time per iteration: the median of the repetitions, its distribution-free "
        f"{CONFIDENCE * 100:g}% interval (order statistics; 6 or more repetitions), the "
        "coefficient of variation, the outliers beyond Tukey's fences (1.5 IQR) and the "
        "first call (--benchmark_cold_start). The chart puts every benchmark on one axis, "
        "so they compare by eye.", "meta")
    chosen = [name for name in order
              if any(name in report.reports[i].benchmarks
                     and distribution(report.reports[i].benchmarks[name]) is not None
                     for i in beside)][:MAX_CHART_BENCHMARKS]
    colors = {index: out.charts.SERIES_COLORS[n % len(out.charts.SERIES_COLORS)]
              for n, index in enumerate(beside)}
    groups, every = [], []
    for name in chosen:
        items = []
        for index in beside:
            benchmark = report.reports[index].benchmarks.get(name)
            shape = distribution(benchmark) if benchmark is not None else None
            if shape is not None:
                items.append((tags[index], colors[index], shape))
                every += shape.samples or [shape.median]
                if shape.interval:
                    every += list(shape.interval)
        groups.append((display_name(name), items))
    if groups:
        positive = [v for v in every if v > 0]
        limits = (min(every), max(every))
        log = bool(positive) and max(positive) / min(positive) > 10 and min(every) > 0
        per_chart = max(1, MAX_CHART_ROWS // max(len(beside), 1))
        chunks = [groups[i:i + per_chart] for i in range(0, len(groups), per_chart)]
        legend = [(tags[index], colors[index]) for index in beside]
        for number, chunk in enumerate(chunks, 1):
            title = "wall time per iteration of each benchmark" + (
                f" ({number} of {len(chunks)}, one axis)" if len(chunks) > 1 else "")
            out.add_chart(out.charts.distribution_chart(
                out.slug("distribution", str(number)), title, chunk, report.units.time,
                limits, log, legend))
        how = "the most changed" if report.changes() else "the heaviest"
        _cut_note(out, len(chosen), len(names), "benchmarks", how)
    rows = [_summary_row(report, report.reports[index].benchmarks[name], tags[index])
            for name in order for index in beside if name in report.reports[index].benchmarks]
    long_table(out, ["benchmark", "report", "reps", "median", "95% interval", "cv", "min",
                     "max", "outliers", "cold start", "errors"], rows, "rows",
               numeric={2, 3, 4, 5, 6, 7, 8, 9}, names={0, 1})


# --- 6. dispatches ------------------------------------------------------------------------------


def dispatches(report: ReportData, out: SectionWriter) -> None:
    time = report.units.time
    having = [b for b in report.latest.drawable if b.dispatches]
    out.paragraph(
        "From --dispatch_statistics: the device time per iteration of each dispatch "
        "function in the untimed profiling pass and its share of all dispatch time "
        f"({report.tag(report.latest_index)}).", "meta")
    several = sorted((b for b in having if len(b.dispatches) > 1),
                     key=lambda b: -sum(row.real for row in b.dispatches))
    for benchmark in several[:MAX_DISPATCH_CHARTS]:
        out.add_chart(out.charts.dispatch_chart(
            out.slug("dispatch", benchmark.name), benchmark, time))
    _cut_note(out, min(len(several), MAX_DISPATCH_CHARTS), len(several),
              "benchmarks of several dispatches", "the most dispatch time")
    single = len(having) - len(several)
    if single:
        out.paragraph(f"{single} benchmark(s) run one dispatch each (100% of their dispatch "
                      "time): in the table only.", "meta")
    rows = []
    for benchmark in having:
        for row in sorted(benchmark.dispatches, key=lambda row: -row.real):
            rows.append([benchmark.display, out.charts.dispatch_label(benchmark, row.name),
                         time.text(row.real), f"{row.metrics.get('percent', 0.0):.1f}%",
                         f"{row.metrics.get('calls', 0.0):g}"])
    long_table(out, ["benchmark", "dispatch", "device time per iteration", "share",
                     "calls per iteration"], rows, "dispatches", numeric={2, 3, 4},
               names={0, 1})


# --- 7. device time, memory and counters --------------------------------------------------------


def _with_device(report) -> list[Benchmark]:
    return [b for b in report.drawable if b.metric("device_time")]


def _metric_names(report) -> list[str]:
    found: dict[str, None] = {}
    for benchmark in report.drawable:
        found.update(dict.fromkeys(name for name in benchmark.metric_names()
                                   if name not in TIME_METRICS
                                   and name not in REDUNDANT_COUNTERS))
    memory = [name for name in MEMORY_METRICS if name in found]
    return memory + [name for name in found if name not in MEMORY_METRICS]


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0


def metrics(report: ReportData, out: SectionWriter) -> None:
    latest = report.latest
    time = report.units.time
    out.paragraph(f"The medians of the repetitions of {report.tag(report.latest_index)}.",
                  "meta")
    with_device = _with_device(latest)
    if with_device:
        if len(with_device) > 1:
            shown = sorted(with_device, key=lambda b: -_median(b.metric("real_time")))
            out.add_chart(out.charts.device_time_chart(
                out.slug("device_time"), shown[:MAX_CHART_BENCHMARKS]))
        rows = []
        for b in with_device:
            real = _median(b.metric("real_time"))
            device = _median(b.metric("device_time"))
            cpu = b.metric("cpu_time")
            rows.append([b.display, time.text(real), time.text(_median(cpu)) if cpu else "-",
                         time.text(device), time.text(max(real - device, 0.0)),
                         f"{100.0 * min(device / real, 1.0):.1f}%" if real else "-"])
        long_table(out, ["benchmark", "wall", "CPU", "device", "host overhead (wall − device)",
                         "device share"], rows, "benchmarks", numeric={1, 2, 3, 4, 5},
                   names={0})
    names = _metric_names(latest)
    if not names:
        return
    scales = {name: report.units.metric(name) for name in names}
    for name in names:
        having = [b for b in latest.drawable if b.metric(name)]
        values = [_median(b.metric(name)) for b in having]
        if len(having) < 2 or len(set(values)) < 2:
            continue  # one bar, or bars all alike: the table says it
        kind, scale = scales[name]
        pairs = sorted(zip(having, values), key=lambda item: -abs(item[1]))
        pairs = pairs[:MAX_CHART_BENCHMARKS]
        out.add_chart(out.charts.metric_chart(
            out.slug("metric", name), kind, scale, [b.display for b, _ in pairs],
            [value for _, value in pairs]))
    headers = ["benchmark"] + [f"{name} ({scales[name][1].unit})" if scales[name][1].unit
                               else name for name in names]
    rows = []
    for b in latest.drawable:
        row = [b.display]
        for name in names:
            values = b.metric(name)
            row.append(significant(_median(values) * scales[name][1].factor)
                       if values else "-")
        rows.append(row)
    long_table(out, headers, rows, "benchmarks", numeric=set(range(1, len(headers))),
               names={0})


# --- 8. inputs ----------------------------------------------------------------------------------


def _text(value) -> str:
    if isinstance(value, list):
        return ", ".join(_text(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_text(v)}" for k, v in value.items())
    return str(value)


def _tool(context: dict) -> str:
    if "ireebench_version" in context:
        return f"ireebench {context['ireebench_version']}"
    return Path(str(context.get("executable", "") or "?")).name


def _modules(item, shown: int = 3) -> str:
    """``matmul.vmfb (sha256 1a6b2303)``: the modules its rows ran (a sweep's or a
    suite's every one), the first few, then how many more."""
    texts = []
    for entry in item.modules:
        entry = entry if isinstance(entry, dict) else {"path": entry}
        name = Path(str(entry.get("path", "") or "")).name
        sha = str(entry.get("sha256", "") or "")
        if name or sha:
            texts.append(name + (f" (sha256 {sha[:8]})" if sha else ""))
    more = len(texts) - shown
    return (", ".join(texts[:shown]) + (f" and {more} more" if more > 0 else "")) or "-"


# What the Inputs table says once when every report has the same, else as a column;
# what its rows ran on is each row's own (Report.devices, .modules, .hosts).
_SHARED = (("host", lambda r: ", ".join(r.hosts) or str(r.context.get("host_name", "-"))),
           ("CPUs", lambda r: str(r.context.get("num_cpus", "-"))),
           ("tool", lambda r: _tool(r.context)),
           ("IREE runtime", lambda r: str(r.context.get("iree_runtime_version", "-"))),
           ("devices", lambda r: ", ".join(r.devices) or "-"),
           ("module", _modules))


def inputs(report: ReportData, out: SectionWriter) -> None:
    shared, varying = [], []
    for title, read in _SHARED:
        values = [read(item) for item in report.reports]
        (shared if len(set(values)) == 1 else varying).append((title, read, values[0]))
    if shared:
        out.paragraph("What every input shares:" if len(report.reports) > 1 else
                      "What it was measured on and with:", "meta")
        out.html(page.fields([(title, value) for title, _, value in shared]))
    has_commit = any(commit_of(item) for item in report.reports)
    headers = ["#", "input", "date"] + (["commit"] if has_commit else []) + \
        [title for title, _, _ in varying] + ["benchmarks", "failed"]
    rows = []
    for number, item in enumerate(report.reports, 1):
        failed = sum(1 for b in item.benchmarks.values() if b.errors)
        row = [number, item.label, date_text(item.context) or "-"]
        if has_commit:
            row.append(commit_of(item)[:10] or "-")
        row += [read(item) for _, read, _ in varying]
        rows.append(row + [len(item.benchmarks), failed])
    columns = len(headers)
    out.table(headers, rows, numeric={0, columns - 2, columns - 1},
              names=set(range(1, columns - 2)), css="narrow")
    for number, item in enumerate(report.reports, 1):
        reason = item.nothing_to_draw()
        if reason:
            out.paragraph(f"{item.label}: nothing to draw ({reason}).")
    for number, item in enumerate(report.reports, 1):
        entries = [[key, _text(value)] for key, value in item.context.items()
                   if key != "caches"]
        out.details(f"context of #{number} {item.label}",
                    page.table(["key", "value"], entries, names={0, 1}))
