"""The report's charts, drawn with matplotlib (the ``report`` extra).

Imported only when a report is made (:func:`ireebench.plugins.report.load_renderer`):
matplotlib is not a dependency of a run. Figures are made with
:class:`matplotlib.figure.Figure` directly (no pyplot: no global state, no
GUI backend) and written as SVG with the text as paths
(``svg.fonttype = "path"``): an SVG names no font, so it looks the same in
every browser, offline, with no web font. Every axis that carries numbers
says its unit; long names are shortened in the middle (the tables hold the
full ones).
"""

from __future__ import annotations

import functools
import io
import re
import statistics
from dataclasses import dataclass

import matplotlib
from ireebench.comparison import (
    CANNOT_JUDGE,
    FASTER,
    INCONCLUSIVE,
    NO_CHANGE,
    NOT_COMPARED,
    SLOWER,
)
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, NullFormatter, NullLocator

from .analysis import (
    CONFIDENCE,
    Distribution,
    Quantity,
    Sweep,
    Trend,
    distribution,
    is_geometric,
    is_numeric,
    quantity,
    time_scale,
)
from .data import Benchmark, display_name

WIDTH = 6.2  # inches: 595 px at 96 dpi, two charts side by side on a 1280 px screen
PNG_DPI = 150
MAX_LABEL = 52  # characters of a name on an axis
MAX_DISPATCHES = 14  # bars of a dispatch chart; the rest is one "others" bar
VERDICT_COLORS = {FASTER: "#2e7d32", SLOWER: "#c62828", NO_CHANGE: "#757575",
                  INCONCLUSIVE: "#e69500", NOT_COMPARED: "#bdbdbd", CANNOT_JUDGE: "#8e24aa"}
SERIES_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                 "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
STYLE = {
    "svg.fonttype": "path",  # text as paths: no font reference in the SVG
    "svg.hashsalt": "ireebench",  # the same report, the same bytes
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.35,
    "legend.fontsize": 8,
    "legend.frameon": False,
}


@dataclass
class Chart:
    """A drawn chart: ``slug`` names its file (``--output_dir``), ``title`` its caption."""

    slug: str
    title: str
    figure: Figure

    def svg(self) -> str:
        with matplotlib.rc_context(STYLE):
            buffer = io.StringIO()
            self.figure.savefig(buffer, format="svg", metadata={"Date": None})
        return buffer.getvalue()

    def png(self) -> bytes:
        buffer = io.BytesIO()
        with matplotlib.rc_context(STYLE):
            self.figure.savefig(buffer, format="png", dpi=PNG_DPI,
                                metadata={"Software": None})
        return buffer.getvalue()


# Numbers on a log axis as numbers (100, not 10^2).
PLAIN = FuncFormatter(lambda value, _: f"{value:g}")
_SVG_START = re.compile(r"^.*?(?=<svg\b)", re.DOTALL)
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.DOTALL)
_PATH_DATA = re.compile(r'\bd="([^"]*)"')
_LONG_DECIMAL = re.compile(r"(\d\.\d{2})\d+")


_GLYPH = re.compile(r'<path id="([^"]+)"(?: d="[^"]*")? transform="scale\([^)]*\)"/>\s*')
_EMPTY_DEFS = re.compile(r"<defs>\s*</defs>\s*")


def inline_svg(svg: str, prefix: str, glyphs: dict[str, str]) -> str:
    """An SVG file's text as an element of an HTML page.

    No XML prolog or metadata; path coordinates to 0.01 pt (matplotlib
    writes 6 decimals); the glyphs of the text (one ``<path>`` per
    character shape, drawn with ``<use>``) moved into ``glyphs`` (id ->
    element), which the page defines once for all its charts; every other id
    prefixed with ``prefix``, so that two charts of one page never share one.
    """
    body = _METADATA.sub("", _SVG_START.sub("", svg, count=1), count=1)
    body = _PATH_DATA.sub(lambda m: 'd="' + _LONG_DECIMAL.sub(r"\1", m.group(1)) + '"', body)

    def keep_glyph(match):
        glyphs.setdefault(match.group(1), match.group(0).strip())
        return ""

    body = _EMPTY_DEFS.sub("", _GLYPH.sub(keep_glyph, body))

    def local(match):
        name = match.group(2)
        return match.group(1) + (name if name in glyphs else prefix + name)

    body = re.sub(r'(\bid=")([^"]+)', local, body)
    body = re.sub(r'(href="#)([^"]+)', local, body)
    return re.sub(r"(url\(#)([^)]+)", local, body)


def glyph_definitions(glyphs: dict[str, str]) -> str:
    """The shared glyphs of a page's charts, as one hidden SVG element."""
    return ('<svg xmlns="http://www.w3.org/2000/svg" width="0" height="0" '
            'style="position:absolute" aria-hidden="true"><defs>'
            + "".join(glyphs.values()) + "</defs></svg>")


def short(text: str, limit: int = MAX_LABEL) -> str:
    """``text`` within ``limit`` characters, cut in the middle."""
    if len(text) <= limit:
        return text
    keep = limit - 1
    return text[: keep // 2] + "…" + text[len(text) - (keep - keep // 2):]


def styled(draw):
    """Draws under the report's style (matplotlib reads rcParams as it draws)."""

    @functools.wraps(draw)
    def wrapper(*args, **kwargs):
        with matplotlib.rc_context(STYLE):
            return draw(*args, **kwargs)

    return wrapper


def _figure(height: float) -> Figure:
    return Figure(figsize=(WIDTH, max(height, 1.6)))


# Margins are computed, not found by a layout engine (constrained layout
# draws every figure twice): from the longest label, at the width of a
# 9 pt DejaVu Sans digit (0.636 em; names are narrower on average).
CHAR = 0.08  # inches per character of a tick label
LEGEND_CHAR = 0.07  # of an 8 pt legend entry
LEGEND_HANDLE = 0.5  # a legend entry's line and gap


def _place(figure: Figure, left_chars: int, *, ylabel: bool = False, legend_above: bool = False,
           legend_right_chars: int = 0, bottom_chars: int = 0) -> None:
    width, height = figure.get_size_inches()
    left = 0.12 + CHAR * left_chars + (0.25 if ylabel else 0.0)
    right = 0.15 + (LEGEND_HANDLE + LEGEND_CHAR * legend_right_chars
                    if legend_right_chars else 0.0)
    top = 0.12 + (0.3 if legend_above else 0.0)
    bottom = 0.5 + 0.55 * CHAR * bottom_chars  # tick labels turned 30-45 degrees
    figure.subplots_adjust(left=left / width, right=1 - right / width, top=1 - top / height,
                           bottom=bottom / height)


def _longest(labels) -> int:
    return max((len(str(label)) for label in labels), default=0)


def _axes(figure: Figure):
    return figure.add_subplot()


def _scaled(values, factor: float) -> list[float]:
    return [v * factor for v in values]


# --- each benchmark: the distribution of its repetitions ---------------------------


@styled
def distribution_chart(slug: str, name: str, rows: list[tuple[str, Distribution]]) -> Chart:
    """A box plot over a strip plot per report: the repetitions, the median and
    its interval (the thick bar), Tukey's whiskers and the outliers (red)."""
    figure = _figure(0.95 + 0.5 * len(rows))
    axes = _axes(figure)
    every = [v for _, d in rows for v in (d.samples or [d.median])]
    factor, unit = time_scale(every)
    for y, (_, shape) in enumerate(reversed(rows)):
        samples = _scaled(shape.samples, factor)
        if samples:
            axes.hlines(y, shape.low_whisker * factor, shape.q1 * factor, color="#555",
                        linewidth=1, zorder=1)
            axes.hlines(y, shape.q3 * factor, shape.high_whisker * factor, color="#555",
                        linewidth=1, zorder=1)
            axes.vlines([shape.low_whisker * factor, shape.high_whisker * factor],
                        y - 0.08, y + 0.08, color="#555", linewidth=1, zorder=1)
            axes.broken_barh([(shape.q1 * factor, (shape.q3 - shape.q1) * factor)],
                             (y - 0.2, 0.4), facecolors="#eef3f8", edgecolors="#555",
                             linewidth=1, zorder=1)
            jitter = [y + 0.3 * (((i * 0.618034) % 1.0) - 0.5) for i in range(len(samples))]
            axes.scatter(samples, jitter, s=14, color="#1f77b4", alpha=0.7, zorder=3,
                         linewidths=0)
            if shape.outliers:
                axes.scatter(_scaled(shape.outliers, factor), [y] * len(shape.outliers),
                             marker="x", s=28, color="#c62828", zorder=4, linewidths=1.3)
        if shape.interval is not None:
            low, high = shape.interval
            axes.errorbar([shape.median * factor], [y - 0.32],
                          xerr=[[(shape.median - low) * factor], [(high - shape.median) * factor]],
                          fmt="none", ecolor="#e69500", elinewidth=2.5, capsize=3, zorder=3)
        axes.vlines(shape.median * factor, y - 0.26, y + 0.26, color="#111", linewidth=2,
                    zorder=5)
    axes.set_yticks(range(len(rows)))
    axes.set_yticklabels([short(label, 28) for label, _ in reversed(rows)])
    axes.set_ylim(-0.55, len(rows) - 0.5)
    axes.grid(axis="y", visible=False)
    positive = [v for v in every if v > 0]
    log = bool(positive) and max(positive) / min(positive) > 10
    if log:  # reports far apart, or outliers far out: every box stays readable
        axes.set_xscale("log")
        axes.xaxis.set_major_formatter(PLAIN)
        axes.xaxis.set_minor_formatter(NullFormatter())
    axes.set_xlabel(f"wall time per iteration ({unit}{', log scale' if log else ''})")
    handles = [Line2D([], [], color="#111", linewidth=2, label="median"),
               Line2D([], [], color="#e69500", linewidth=2.5,
                      label=f"{CONFIDENCE * 100:g}% interval of the median"),
               Line2D([], [], marker="o", linestyle="", color="#1f77b4", alpha=0.55,
                      markersize=4, label="repetitions"),
               Line2D([], [], marker="x", linestyle="", color="#c62828", markersize=5,
                      label="outliers (Tukey)")]
    axes.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=4,
                borderaxespad=0.2, handlelength=1.5, columnspacing=1.2)
    _place(figure, _longest(short(label, 28) for label, _ in rows), legend_above=True)
    return Chart(slug, short(name, 90), figure)


# --- sweeps ---------------------------------------------------------------------------


def _point_value(point: Benchmark, metric: str) -> tuple[float, float | None, float | None]:
    """The median of a metric at a point and its interval (None without one)."""
    shape = distribution(point, metric)
    if shape.interval is None:
        return shape.median, None, None
    return shape.median, shape.interval[0], shape.interval[1]


@styled
def sweep_chart(slug: str, sweep: Sweep, axis: str, metric: str, kind: Quantity) -> Chart:
    """A metric against one axis; one line per combination of the other axes."""
    lines = sweep.lines(axis)
    values = sweep.values(axis)
    numeric = is_numeric(values)
    legend_rows = len(lines) if len(lines) > 1 else 0
    figure = _figure(3.0 + 0.12 * max(0, legend_rows - 6))
    axes = _axes(figure)
    every = [v for p in sweep.points for v in p.metric(metric)]
    factor, unit = kind.scale(every)
    for number, line in enumerate(lines):
        xs, ys, errors_low, errors_high = [], [], [], []
        for value, point in line.points:
            middle, low, high = _point_value(point, metric)
            xs.append(value if numeric else values.index(value))
            ys.append(middle * factor)
            errors_low.append((middle - low) * factor if low is not None else 0.0)
            errors_high.append((high - middle) * factor if high is not None else 0.0)
        color = SERIES_COLORS[number % len(SERIES_COLORS)]
        axes.errorbar(xs, ys, yerr=[errors_low, errors_high], marker="o", markersize=4,
                      linewidth=1.5, capsize=3, color=color, label=short(line.label, 40))
    if numeric and is_geometric(values):
        axes.set_xscale("log", base=2 if all(float(v).is_integer() for v in values) else 10)
        axes.xaxis.set_minor_locator(NullLocator())
    if numeric:
        axes.set_xticks(values)
        axes.set_xticklabels([f"{v:g}" for v in values])
    else:
        axes.set_xticks(range(len(values)))
        axes.set_xticklabels([short(str(v), 16) for v in values])
    positive = [v for v in every if v > 0]
    if positive and max(positive) / min(positive) > 30:
        axes.set_yscale("log")
        axes.yaxis.set_major_formatter(PLAIN)
        axes.yaxis.set_minor_formatter(NullFormatter())
    axes.set_xlabel(f"{axis} (sweep axis{', log scale' if axes.get_xscale() == 'log' else ''})")
    axes.set_ylabel(kind.label(unit))
    if legend_rows:
        axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    turned = len(values) > 8
    if turned:
        for label in axes.get_xticklabels():
            label.set_rotation(45)
            label.set_horizontalalignment("right")
    _place(figure, 6, ylabel=True,
           legend_right_chars=_longest(short(line.label, 40) for line in lines)
           if legend_rows else 0,
           bottom_chars=_longest(label.get_text() for label in axes.get_xticklabels())
           if turned else 0)
    return Chart(slug, f"{sweep.family}: {kind.what} against {axis}", figure)


# --- two or more inputs: the change of each benchmark --------------------------------


@styled
def comparison_chart(slug: str, title: str, comparison) -> Chart:
    """Each benchmark's change (new/old - 1) with its interval, colored by verdict;
    the geometric mean of the changes dashed."""
    shown = [b for b in comparison.benchmarks if b.change is not None]
    figure = _figure(1.2 + 0.26 * max(len(shown), 1))
    axes = _axes(figure)
    for position, result in enumerate(reversed(shown)):
        color = VERDICT_COLORS[result.verdict]
        change = result.change * 100
        if result.low is not None:
            axes.hlines(position, result.low * 100, result.high * 100, color=color,
                        linewidth=2.2, alpha=0.75)
        axes.plot([change], [position], marker="D" if result.regression else "o",
                  markersize=6 if result.regression else 5, color=color, zorder=3)
    axes.axvline(0, color="#333", linewidth=0.8)
    if comparison.geomean_change is not None:
        axes.axvline(comparison.geomean_change * 100, color="#1f77b4", linestyle="--",
                     linewidth=1.2)
    axes.set_yticks(range(len(shown)))
    axes.set_yticklabels([short(display_name(b.name)) for b in reversed(shown)])
    axes.set_ylim(-0.7, max(len(shown), 1) - 0.3)
    axes.grid(axis="y", visible=False)
    axes.set_xlabel(f"change of the {comparison.options.metric.replace('_', ' ')}, "
                    f"new / old − 1 (%), with its "
                    f"{comparison.options.confidence * 100:g}% interval")
    axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:+g}"))
    present = [v for v in VERDICT_COLORS if any(b.verdict == v for b in shown)]
    handles = [Patch(color=VERDICT_COLORS[v], label=v) for v in present]
    if comparison.geomean_change is not None:
        handles.append(Line2D([], [], color="#1f77b4", linestyle="--",
                              label=f"geometric mean {comparison.geomean_change * 100:+.2f}%"))
    if any(b.regression for b in shown):
        handles.append(Line2D([], [], marker="D", linestyle="", color=VERDICT_COLORS[SLOWER],
                              label="regression (beyond its threshold)"))
    axes.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.0),
                ncol=min(len(handles), 3), borderaxespad=0.2)
    rows = (len(handles) + 2) // 3
    figure.set_figheight(figure.get_figheight() + 0.2 * (rows - 1))
    _place(figure, _longest(short(display_name(b.name)) for b in shown), legend_above=True)
    if rows > 1:
        height = figure.get_figheight()
        figure.subplots_adjust(top=1 - (0.42 + 0.2 * (rows - 1)) / height)
    return Chart(slug, title, figure)


# --- a history: the trend of each benchmark ------------------------------------------


@styled
def trend_chart(slug: str, trend: Trend, ticks: list[str], commits: list[str]) -> Chart:
    """The median of each report with its interval, and the change points (each
    with the commit of the first report of the new level)."""
    figure = _figure(2.7)
    axes = _axes(figure)
    medians = [d.median for d in trend.distributions]
    factor, unit = time_scale(medians)
    xs = list(range(len(trend.indexes)))
    low = [(d.median - d.interval[0]) * factor if d.interval else 0.0
           for d in trend.distributions]
    high = [(d.interval[1] - d.median) * factor if d.interval else 0.0
            for d in trend.distributions]
    axes.errorbar(xs, _scaled(medians, factor), yerr=[low, high], marker="o", markersize=4,
                  capsize=3, linewidth=1.3, color="#1f77b4", label="median, 95% interval")
    position = {index: x for x, index in enumerate(trend.indexes)}
    for number, change in enumerate(trend.changes):
        x = position[change.index] - 0.5
        color = VERDICT_COLORS[change.verdict]
        axes.axvline(x, color=color, linestyle="--", linewidth=1.2)
        commit = commits[change.index][:8]
        text = f"{change.change * 100:+.0f}%" + (f" {commit}" if commit else "")
        right = x > (len(xs) - 1) * 0.6  # near the right edge: the text goes left
        axes.annotate(text, xy=(x, 1.0 - 0.1 * (number % 3)),
                      xycoords=("data", "axes fraction"), xytext=(-3 if right else 3, -2),
                      textcoords="offset points", va="top", ha="right" if right else "left",
                      color=color, fontsize=8,
                      bbox={"boxstyle": "square,pad=0.1", "facecolor": "white",
                            "edgecolor": "none", "alpha": 0.8})
    labels = [ticks[index] for index in trend.indexes]
    step = max(1, len(labels) // 12)
    axes.set_xticks(xs[::step])
    axes.set_xticklabels(labels[::step], rotation=30, ha="right")
    axes.set_xlim(-0.5, len(xs) - 0.5)
    axes.set_xlabel("run (oldest first)")
    axes.set_ylabel(f"wall time per iteration ({unit})")
    if max(medians) / min(medians) > 10:
        axes.set_yscale("log")
        axes.yaxis.set_major_formatter(PLAIN)
        axes.yaxis.set_minor_formatter(NullFormatter())
    else:
        axes.set_ylim(bottom=0)
    if trend.changes:
        axes.legend(handles=[Line2D([], [], color="#555", linestyle="--",
                                    label="change point")], loc="lower right")
    _place(figure, 6, ylabel=True, bottom_chars=_longest(labels))
    return Chart(slug, short(display_name(trend.name), 90), figure)


# --- dispatch statistics ----------------------------------------------------------------


def dispatch_label(benchmark: Benchmark, dispatch: str) -> str:
    """A dispatch function's name without its module function's prefix."""
    function = benchmark.family.removeprefix("BM_").split("/", 1)[0]
    return dispatch.removeprefix(function + "_") if function else dispatch


@styled
def dispatch_chart(slug: str, benchmark: Benchmark) -> Chart:
    """The device time per iteration of each dispatch function (its share annotated)."""
    rows = sorted(benchmark.dispatches, key=lambda row: row.real, reverse=True)
    shown = rows[:MAX_DISPATCHES]
    rest = rows[MAX_DISPATCHES:]
    labels = [short(dispatch_label(benchmark, row.name), 40) for row in shown]
    times = [row.real for row in shown]
    shares = [row.metrics.get("percent", 0.0) for row in shown]
    if rest:
        labels.append(f"{len(rest)} others")
        times.append(sum(row.real for row in rest))
        shares.append(sum(row.metrics.get("percent", 0.0) for row in rest))
    figure = _figure(0.9 + 0.3 * len(labels))
    axes = _axes(figure)
    factor, unit = time_scale(times)
    positions = list(range(len(labels)))[::-1]
    axes.barh(positions, _scaled(times, factor), color="#1f77b4", height=0.6)
    for y, value, share in zip(positions, times, shares):
        axes.annotate(f"{share:.1f}%", xy=(value * factor, y), xytext=(3, 0),
                      textcoords="offset points", va="center", fontsize=8)
    axes.set_yticks(positions)
    axes.set_yticklabels(labels)
    axes.grid(axis="y", visible=False)
    axes.margins(x=0.12)
    axes.set_xlabel(f"device time per iteration ({unit})")
    _place(figure, _longest(labels))
    return Chart(slug, short(benchmark.display, 90), figure)


# --- device time and memory -------------------------------------------------------------


@styled
def device_time_chart(slug: str, benchmarks: list[Benchmark]) -> Chart:
    """Per benchmark, its wall time split into device time and the rest (host overhead)."""
    figure = _figure(1.1 + 0.28 * len(benchmarks))
    axes = _axes(figure)
    positions = list(range(len(benchmarks)))[::-1]
    device, host = [], []
    for benchmark in benchmarks:
        real = _median(benchmark.metric("real_time"))
        busy = min(_median(benchmark.metric("device_time")), real)
        device.append(100.0 * busy / real if real else 0.0)
        host.append(100.0 - device[-1])
    axes.barh(positions, device, color="#2ca02c", height=0.6, label="device time")
    axes.barh(positions, host, left=device, color="#bdbdbd", height=0.6,
              label="host overhead (wall − device)")
    axes.set_yticks(positions)
    axes.set_yticklabels([short(b.display) for b in benchmarks])
    axes.set_xlim(0, 100)
    axes.grid(axis="y", visible=False)
    axes.set_xlabel("share of the wall time per iteration (%)")
    axes.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, borderaxespad=0.2)
    _place(figure, _longest(short(b.display) for b in benchmarks), legend_above=True)
    return Chart(slug, "device time against wall time", figure)


@styled
def metric_chart(slug: str, metric: str, benchmarks: list[Benchmark], report) -> Chart:
    """One metric (memory, a counter) of every benchmark that has it."""
    kind = quantity(metric, report)
    values = [_median(b.metric(metric)) for b in benchmarks]
    factor, unit = kind.scale(values)
    figure = _figure(0.9 + 0.28 * len(benchmarks))
    axes = _axes(figure)
    positions = list(range(len(benchmarks)))[::-1]
    axes.barh(positions, _scaled(values, factor), color="#9467bd", height=0.6)
    axes.set_yticks(positions)
    axes.set_yticklabels([short(b.display) for b in benchmarks])
    axes.grid(axis="y", visible=False)
    axes.set_xlabel(kind.label(unit))
    _place(figure, _longest(short(b.display) for b in benchmarks))
    return Chart(slug, kind.what, figure)


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0
