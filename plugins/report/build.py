"""The report made: sections where the data allows, each chart drawn once.

Imported only when a report is made (it imports matplotlib through
:mod:`.charts`). :func:`build` turns the reports into sections of HTML
blocks and a list of charts; :func:`write` writes the page (one
self-contained HTML file) and/or each chart as a file of its own. Every
file is complete or absent (:class:`~ireebench.outfiles.OutputFile`).

The sections, in order, each only where its data is:

1. **Inputs**: each report's context (date, machine, tool and versions,
   devices, modules and their sha256: every point's in a sweep or suite),
   and the reports with nothing to draw;
2. **Comparison** (two or more reports): per pair, each benchmark's change
   with its interval colored by the verdict of ``ireebench compare`` (the
   same engine and options), the geometric mean, the table;
3. **Trend** (three or more reports, such as a store's history): per
   benchmark its median and interval in each report, the change points and
   the commit at each;
4. **Sweeps** (points with ``params``): each metric against each axis;
5. **Benchmarks**: the table, and per benchmark the distribution of its
   repetitions (one row per report compared);
6. **Dispatches** (``--dispatch_statistics`` rows): the device time split by
   dispatch;
7. **Device time, memory and counters** (where rows carry them).
"""

from __future__ import annotations

import re
import statistics
from datetime import datetime, timezone
from pathlib import Path

from ireebench import __version__
from ireebench.comparison import CompareOptions
from ireebench.errors import UsageError
from ireebench.outfiles import write_to
from ireebench.plugins.compare.reporters import (
    format_change,
    format_interval,
    format_pvalue,
    format_time,
    format_verdict,
)

from . import charts as draw
from . import page
from .analysis import (
    CONFIDENCE,
    MAX_PAIRWISE,
    commit_of,
    distribution,
    pairs,
    quantity,
    sweep_metrics,
    sweeps,
    time_scale,
    trends,
)
from .data import DISPATCH_COUNTERS, MEMORY_METRICS, TIME_METRICS, Report, display_name
from .page import Raw, Section

CHART_FORMATS = ("svg", "png")
# Counters a chart of their own would only repeat: Google Benchmark's
# iterations per second (one over the time) and a dispatch row's own.
REDUNDANT_COUNTERS = ("items_per_second", *DISPATCH_COUNTERS)


class Document:
    """The sections of the page and the charts they hold, in order."""

    def __init__(self, title: str, subtitle: str, inline: bool = True):
        self.inline = inline
        self.title = title
        self.subtitle = subtitle
        self.sections: list[Section] = []
        self.charts: list[draw.Chart] = []
        self._slugs: set[str] = set()
        self._svg_count = 0
        self.glyphs: dict[str, str] = {}  # the charts' text shapes, defined once

    def slug(self, *parts: str) -> str:
        text = "-".join(re.sub(r"[^A-Za-z0-9_.]+", "_", part).strip("_.") or "x"
                        for part in parts)[:120]
        slug, number = text, 2
        while slug in self._slugs:
            slug, number = f"{text}-{number}", number + 1
        self._slugs.add(slug)
        return slug

    def add(self, chart: draw.Chart) -> draw.Chart:
        self.charts.append(chart)
        return chart

    def figure(self, chart: draw.Chart) -> str:
        """The chart as an HTML figure, its SVG inline ("" for files only)."""
        if not self.inline:
            return ""
        self._svg_count += 1
        svg = draw.inline_svg(chart.svg(), f"c{self._svg_count}-", self.glyphs)
        return page.figure(svg, chart.title)


# --- formatting -------------------------------------------------------------------


def _time(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    factor, unit = time_scale([seconds])
    return f"{seconds * factor:.4g} {unit}"


def _interval(interval) -> str:
    return "-" if interval is None else f"[{_time(interval[0])}, {_time(interval[1])}]"


def _text(value) -> str:
    if isinstance(value, list):
        return ", ".join(_text(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_text(v)}" for k, v in value.items())
    return str(value)


def _modules(context: dict, shown: int = 3) -> str:
    """``matmul.vmfb (1a6b23038c37)``: the module(s) of a report; a sweep's or suite's
    every module (``iree_modules``), the first few, then how many more."""
    listed = context.get("iree_modules")
    if not isinstance(listed, list) or not listed:
        listed = [{"path": context.get("iree_module", ""),
                   "sha256": context.get("iree_module_sha256", "")}]
    texts = []
    for entry in listed:
        entry = entry if isinstance(entry, dict) else {"path": entry}
        name = Path(str(entry.get("path", "") or "")).name
        sha = str(entry.get("sha256", "") or "")
        if name or sha:
            texts.append(name + (f" ({sha[:12]})" if sha else ""))
    more = len(texts) - shown
    return (", ".join(texts[:shown]) + (f" and {more} more" if more > 0 else "")) or "-"


def _tool(context: dict) -> str:
    if "ireebench_version" in context:
        return f"ireebench {context['ireebench_version']}"
    return Path(str(context.get("executable", "") or "?")).name


# --- sections ---------------------------------------------------------------------


def _inputs(reports: list[Report]) -> Section:
    section = Section("inputs", "Inputs")
    rows = []
    for number, report in enumerate(reports, 1):
        context = report.context
        failed = sum(1 for b in report.benchmarks.values() if b.errors)
        rows.append([number, report.label, context.get("date", "-"),
                     context.get("host_name", "-"), _tool(context),
                     _text(context.get("iree_devices", "-")),
                     context.get("iree_runtime_version", "-"),
                     _modules(context),
                     commit_of(report)[:12] or "-", len(report.benchmarks), failed])
    section.blocks.append(page.table(
        ["#", "input", "date", "host", "tool", "devices", "IREE runtime", "module (sha256)",
         "commit", "benchmarks", "failed"], rows, numeric={0, 9, 10}, names={1}))
    for number, report in enumerate(reports, 1):
        reason = report.nothing_to_draw()
        if reason:
            section.blocks.append(page.paragraph(f"{report.label}: nothing to draw ({reason})."))
        entries = [[key, _text(value)] for key, value in report.context.items()
                   if key != "caches"]
        section.blocks.append(page.details(f"context of #{number} {report.label}",
                                           page.table(["key", "value"], entries,
                                                      names={1})))
    return section


def _comparison(document: Document, reports: list[Report], options: CompareOptions,
                found) -> Section | None:
    if not found:
        return None
    section = Section("comparison", "Comparison")
    section.blocks.append(page.paragraph(
        "As ireebench compare: per benchmark the Hodges-Lehmann change new / old − 1 and "
        f"its {options.confidence * 100:g}% interval, a two-sided Mann-Whitney U test of "
        f"the repetitions at alpha {options.alpha:g} ({options.min_repetitions} or more a "
        "side for a verdict), and the geometric mean of the changes.", "meta"))
    for pair in found:
        old, new = reports[pair.old], reports[pair.new]
        title = f"#{pair.new + 1} {new.label} against #{pair.old + 1} {old.label}"
        section.blocks.append(page.heading(title))
        if pair.comparison is None:
            section.blocks.append(page.paragraph(pair.problem))
            continue
        comparison = pair.comparison
        if any(b.change is not None for b in comparison.benchmarks):
            chart = document.add(draw.comparison_chart(
                document.slug("comparison", str(pair.old + 1), str(pair.new + 1)),
                f"change of each benchmark, colored by verdict: {title}", comparison))
            section.blocks.append(page.charts([document.figure(chart)]))
        rows = []
        for b in comparison.benchmarks:
            verdict = format_verdict(b)
            css = f"verdict-{b.verdict.split()[0]}"
            rows.append([b.name.removesuffix("/process_time/real_time"),
                         format_time(b.old, b.time_unit), format_time(b.new, b.time_unit),
                         format_change(b.change), format_interval(b), format_pvalue(b.pvalue),
                         f"{b.n_old}/{b.n_new}",
                         Raw(f"<span class=\"{css}\">{page.escape(verdict)}</span>")])
        section.blocks.append(page.table(
            ["benchmark", "old", "new", "change", "interval", "p-value", "reps", "verdict"],
            rows, numeric={1, 2, 3, 4, 5, 6}, names={0}))
        counts = ", ".join(f"{comparison.count(v)} {v}" for v in
                           ("faster", "slower", "no significant change", "inconclusive",
                            "not compared") if comparison.count(v))
        geomean = ("-" if comparison.geomean_change is None
                   else format_change(comparison.geomean_change))
        section.blocks.append(page.paragraph(
            f"Geometric mean of the changes: {geomean} over {comparison.geomean_count} "
            f"benchmark(s); {counts}.", "meta"))
        notes = list(comparison.notes)
        if comparison.only_old:
            notes.append(f"only in #{pair.old + 1}: {', '.join(comparison.only_old)}")
        if comparison.only_new:
            notes.append(f"only in #{pair.new + 1}: {', '.join(comparison.only_new)}")
        notes += [f"{b.name}: {note}" for b in comparison.benchmarks for note in b.notes]
        if notes:
            section.blocks.append(page.details(
                f"{len(notes)} note(s)", "".join(page.paragraph(n) for n in notes)))
    return section


def _ticks(reports: list[Report]) -> list[str]:
    ticks = []
    for number, report in enumerate(reports, 1):
        commit = commit_of(report)
        date = str(report.context.get("date", ""))[:16].replace("T", " ")
        ticks.append(commit[:10] if commit else (date or f"#{number}"))
    return ticks


def _trend(document: Document, reports: list[Report], options: CompareOptions) -> Section | None:
    found = trends(reports, options)
    if not found:
        return None
    section = Section("trend", "Trend")
    section.blocks.append(page.paragraph(
        f"Each benchmark over the {len(reports)} reports, in the order given (a store's "
        "history oldest first): the median and its 95% interval per report. A dashed line "
        "is a change point: a shift of level the results store finds too (ireebench history "
        "--changes: PELT on the reports' medians, a level of two reports or more), which "
        "ireebench compare's engine finds faster or slower between the two levels' pooled "
        "repetitions (the change and its interval are its Hodges-Lehmann estimate).",
        "meta"))
    ticks = _ticks(reports)
    commits = [commit_of(report) for report in reports]
    rows = []
    for trend in found:
        for change in trend.changes:
            report = reports[change.index]
            rows.append([trend.name.removesuffix("/process_time/real_time"),
                         f"#{change.index + 1} {report.label}",
                         commits[change.index] or "-",
                         str(report.context.get("date", "-")), format_change(change.change),
                         "n/a" if change.low is None else
                         f"[{format_change(change.low)}, {format_change(change.high)}]",
                         change.verdict])
    if rows:
        section.blocks.append(page.table(
            ["benchmark", "first report of the new level", "commit", "date", "change",
             "interval", "verdict"], rows, numeric={4, 5}, names={0}))
    else:
        section.blocks.append(page.paragraph("No change point."))
    figures = []
    for trend in found:
        chart = document.add(draw.trend_chart(document.slug("trend", trend.name), trend,
                                              ticks, commits))
        figures.append(document.figure(chart))
    section.blocks.append(page.charts(figures))
    return section


def _sweeps(document: Document, report: Report) -> Section | None:
    found = sweeps(report)
    if not found:
        return None
    section = Section("sweeps", "Sweeps")
    for sweep in found:
        section.blocks.append(page.heading(
            f"{sweep.family}: {len(sweep.points)} points over {', '.join(sweep.axes)}"))
        figures = []
        for axis in sweep.axes:
            if len(sweep.values(axis)) < 2:
                continue
            for metric in sweep_metrics(sweep):
                chart = document.add(draw.sweep_chart(
                    document.slug("sweep", sweep.family, axis, metric), sweep, axis, metric,
                    quantity(metric, report)))
                figures.append(document.figure(chart))
        section.blocks.append(page.charts(figures))
    return section


def _summary_row(benchmark, tag: str) -> list:
    shape = distribution(benchmark)
    if shape is None:
        return [benchmark.display, tag, 0, "-", "-", "-", "-", "-", "-", "-",
                "; ".join(benchmark.errors) or "no time"]
    cold = benchmark.cold_start
    cv = shape.cv
    samples = shape.samples or [shape.median]
    return [benchmark.display, tag, len(shape.samples) or shape.source, _time(shape.median),
            _interval(shape.interval), "-" if cv is None else f"{cv * 100:.2f}%",
            _time(min(samples)), _time(max(samples)), len(shape.outliers),
            _time(cold.real) if cold else "-", "; ".join(benchmark.errors)]


def _benchmarks(document: Document, reports: list[Report]) -> Section | None:
    shown = [r for r in reports if r.drawable]
    if not shown:
        return None
    beside = shown if len(shown) <= MAX_PAIRWISE else [shown[-1]]
    tags = {id(r): f"#{reports.index(r) + 1} {r.label}" for r in beside}
    names = []  # the latest report's benchmarks first, then the others'
    for report in reversed(beside):
        names += [name for name in report.benchmarks if name not in names]
    section = Section("benchmarks", "Benchmarks")
    section.blocks.append(page.paragraph(
        "Wall time per iteration: the median of the repetitions, its distribution-free "
        f"{CONFIDENCE * 100:g}% interval (order statistics; 6 or more repetitions), the "
        "coefficient of variation, the outliers beyond Tukey's fences (1.5 IQR) and the "
        "first call (--benchmark_cold_start).", "meta"))
    rows = [_summary_row(report.benchmarks[name], tags[id(report)])
            for name in names for report in beside if name in report.benchmarks]
    section.blocks.append(page.table(
        ["benchmark", "report", "reps", "median", "95% interval", "cv", "min", "max",
         "outliers", "cold start", "errors"], rows, numeric={2, 3, 4, 5, 6, 7, 8, 9},
        names={0, 1}))
    figures = []
    for name in names:
        lines = []
        for report in beside:
            benchmark = report.benchmarks.get(name)
            shape = distribution(benchmark) if benchmark is not None else None
            if shape is not None:
                lines.append((tags[id(report)], shape))
        if lines:
            chart = document.add(draw.distribution_chart(
                document.slug("distribution", name), display_name(name), lines))
            figures.append(document.figure(chart))
    section.blocks.append(page.charts(figures))
    return section


def _dispatches(document: Document, report: Report) -> Section | None:
    having = [b for b in report.drawable if b.dispatches]
    if not having:
        return None
    section = Section("dispatches", "Dispatches")
    section.blocks.append(page.paragraph(
        "From --dispatch_statistics: the device time per iteration of each dispatch "
        "function in the untimed profiling pass, annotated with its share of all dispatch "
        "time.",
        "meta"))
    figures = []
    for benchmark in having:
        chart = document.add(draw.dispatch_chart(document.slug("dispatch", benchmark.name),
                                                 benchmark))
        figures.append(document.figure(chart))
    section.blocks.append(page.charts(figures))
    return section


def _metrics(document: Document, report: Report) -> Section | None:
    benchmarks = report.drawable
    with_device = [b for b in benchmarks if b.metric("device_time")]
    others = []
    for benchmark in benchmarks:
        others += [name for name in benchmark.metric_names()
                   if name not in others and name not in TIME_METRICS
                   and name not in REDUNDANT_COUNTERS]
    memory = [name for name in MEMORY_METRICS if name in others]
    counters = [name for name in others if name not in MEMORY_METRICS]
    if not with_device and not memory and not counters:
        return None
    section = Section("metrics", "Device time, memory and counters")
    figures = []
    if with_device:
        chart = document.add(draw.device_time_chart(document.slug("device_time"), with_device))
        figures.append(document.figure(chart))
        rows = []
        for b in with_device:
            real = statistics.median(b.metric("real_time"))
            device = statistics.median(b.metric("device_time"))
            cpu = b.metric("cpu_time")
            rows.append([b.display, _time(real), _time(statistics.median(cpu)) if cpu else "-",
                         _time(device), _time(max(real - device, 0.0))])
        section.blocks.append(page.table(
            ["benchmark", "wall", "CPU", "device", "host overhead (wall − device)"], rows,
            numeric={1, 2, 3, 4}, names={0}))
    for metric in memory + counters:
        having = [b for b in benchmarks if b.metric(metric)]
        chart = document.add(draw.metric_chart(document.slug("metric", metric), metric,
                                               having, report))
        figures.append(document.figure(chart))
    section.blocks.append(page.charts(figures))
    return section


def build(reports: list[Report], options: CompareOptions, inline: bool = True) -> Document:
    """Every section the reports allow, their charts drawn (see the module docstring);
    ``inline``: each chart's SVG goes into the page as it is drawn."""
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    labels = ", ".join(r.label for r in reports)
    document = Document("ireebench report",
                        f"{len(reports)} report(s): {labels}. Made {now} by ireebench "
                        f"{__version__}.", inline)
    latest = next((r for r in reversed(reports) if r.drawable), reports[-1])
    parts = [_inputs(reports),
             _comparison(document, reports, options, pairs(reports, options)),
             _trend(document, reports, options),
             _sweeps(document, latest),
             _benchmarks(document, reports),
             _dispatches(document, latest),
             _metrics(document, latest)]
    document.sections = [part for part in parts if part is not None]
    return document


def write(reports: list[Report], options: CompareOptions, html_path: str = "",
          output_dir: str = "", chart_format: str = "svg", flag: str = "o") -> Document:
    """Builds the report, then writes each chart to ``output_dir`` (``chart_format``:
    svg or png) and/or the page to ``html_path``; each chart is drawn once."""
    document = build(reports, options, inline=bool(html_path))
    try:
        if output_dir:
            _write_charts(document, Path(output_dir), chart_format)
        if html_path:
            text = page.page(document.title, document.subtitle, document.sections,
                             draw.glyph_definitions(document.glyphs))
            write_to(html_path, flag, text.encode())
    finally:
        for chart in document.charts:
            chart.figure.clear()  # the memory goes back
    return document


def _write_charts(document: Document, directory: Path, chart_format: str) -> None:
    try:
        directory.mkdir(exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--output_dir={directory}: cannot create: "
                         f"{exc.strerror or exc}") from None
    for chart in document.charts:
        data = chart.svg().encode() if chart_format == "svg" else chart.png()
        write_to(directory / f"{chart.slug}.{chart_format}", "output_dir", data)
