"""The report's charts, drawn with matplotlib (the ``report`` extra).

Imported only when a report is made (:func:`ireebench.plugins.report.load_renderer`):
matplotlib is not a dependency of a run. Figures are made with
:class:`matplotlib.figure.Figure` directly (no pyplot: no global state, no
GUI backend) and written as SVG with the text as paths
(``svg.fonttype = "path"``): an SVG names no font, so it looks the same in
every browser, offline, with no web font. Every axis that carries numbers
says its unit, one unit per quantity on the page (the callers pass the
page's :class:`~.analysis.Scale`); log axes label a tick at 1, 2 and 5 of
each decade when they span few; categories (devices, dtypes) are dots,
never joined by lines; long names are shortened in the middle (the tables
hold the full ones). Each chart is saved with its tight bounding box, so
no label is ever clipped.
"""

from __future__ import annotations

import functools
import io
import math
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
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter, NullLocator

from .analysis import (
    CONFIDENCE,
    Distribution,
    Quantity,
    Scale,
    Sweep,
    Trend,
    distribution,
    is_geometric,
    is_numeric,
    significant,
)
from .data import Benchmark, display_name

WIDTH = 6.2  # inches: 595 px at 96 dpi, two charts side by side on a 1280 px screen
PNG_DPI = 150
MAX_LABEL = 52  # characters of a name on an axis
MAX_DISPATCHES = 14  # bars of a dispatch chart; the rest is one "others" bar
VERDICT_COLORS = {FASTER: "#2e7d32", SLOWER: "#c62828", NO_CHANGE: "#757575",
                  INCONCLUSIVE: "#e69500", NOT_COMPARED: "#bdbdbd", CANNOT_JUDGE: "#8e24aa"}
OTHER_VERDICT = "#9e9e9e"  # a verdict this report does not know (a later engine's)
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
PAD = 0.06  # inches around a chart's tight bounding box


def verdict_color(verdict: str) -> str:
    return VERDICT_COLORS.get(verdict, OTHER_VERDICT)


@dataclass
class Chart:
    """A drawn chart: ``slug`` names its file (``--output_dir``), ``title`` its caption."""

    slug: str
    title: str
    figure: Figure

    def svg(self) -> str:
        with matplotlib.rc_context(STYLE):
            buffer = io.StringIO()
            self.figure.savefig(buffer, format="svg", metadata={"Date": None},
                                bbox_inches="tight", pad_inches=PAD)
        return buffer.getvalue()

    def png(self) -> bytes:
        buffer = io.BytesIO()
        with matplotlib.rc_context(STYLE):
            self.figure.savefig(buffer, format="png", dpi=PNG_DPI,
                                metadata={"Software": None}, bbox_inches="tight",
                                pad_inches=PAD)
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


def new_figure(height: float, width: float | None = None) -> Figure:
    """A figure of the page's chart width (inches)."""
    return Figure(figsize=(width or WIDTH, max(height, 1.6)))


# Margins are computed, not found by a layout engine (constrained layout
# draws every figure twice): from the longest label, at the width of a
# 9 pt DejaVu Sans digit (0.636 em; names are narrower on average). The
# tight bounding box the chart is saved with keeps what still sticks out.
CHAR = 0.08  # inches per character of a tick label
LEGEND_CHAR = 0.07  # of an 8 pt legend entry
LEGEND_HANDLE = 0.5  # a legend entry's line and gap


def _place(figure: Figure, left_chars: int, *, ylabel: bool = False, legend_above: bool = False,
           legend_right_chars: int = 0, bottom_chars: int = 0, bottom_lines: int = 1) -> None:
    width, height = figure.get_size_inches()
    left = 0.12 + CHAR * left_chars + (0.25 if ylabel else 0.0)
    right = 0.15 + (LEGEND_HANDLE + LEGEND_CHAR * legend_right_chars
                    if legend_right_chars else 0.0)
    top = 0.12 + (0.3 if legend_above else 0.0)
    bottom = 0.35 + 0.15 * bottom_lines + 0.55 * CHAR * bottom_chars
    figure.subplots_adjust(left=min(left / width, 0.6), right=1 - right / width,
                           top=1 - top / height, bottom=min(bottom / height, 0.6))


def _longest(labels) -> int:
    return max((len(str(label)) for label in labels), default=0)


def _axes(figure: Figure):
    return figure.add_subplot()


def _scaled(values, factor: float) -> list[float]:
    return [v * factor for v in values]


def log_axis(axis, low: float, high: float, inches: float = 4.0,
             horizontal: bool = True) -> None:
    """The ticks of a log-scaled ``axis`` (``axes.xaxis``/``yaxis``), labelled enough
    to read a value without the labels running into each other: as many of
    1-2-3-5-7, 1-2-5, 1-3 or 1 per decade as ``inches`` of axis hold."""
    decades = max(math.log10(high / low), 0.3) if low > 0 and high > low else 1.0
    room = inches / decades / (0.42 if horizontal else 0.2)  # labels a decade holds
    subs = (1.0, 2.0, 3.0, 5.0, 7.0) if room >= 5 else (1.0, 2.0, 5.0) if room >= 3 else \
        (1.0, 3.0) if room >= 2 else (1.0,)
    axis.set_major_locator(LogLocator(base=10, subs=subs))
    axis.set_major_formatter(PLAIN)
    axis.set_minor_locator(LogLocator(base=10, subs=tuple(range(1, 10))))
    axis.set_minor_formatter(NullFormatter())


def _length(axes, which: str) -> float:
    """The length of an axis in inches (as the figure's margins leave it)."""
    width, height = axes.figure.get_size_inches()
    box = axes.get_position()
    return box.width * width if which == "x" else box.height * height


def _set_log(axes, which: str, values: list[float]) -> bool:
    """A log scale on ``which`` ("x"/"y") when the positive values span over 10x."""
    positive = [v for v in values if v > 0]
    if not positive or max(positive) / min(positive) <= 10:
        return False
    (axes.set_xscale if which == "x" else axes.set_yscale)("log")
    log_axis(axes.xaxis if which == "x" else axes.yaxis, min(positive), max(positive),
             _length(axes, which), which == "x")
    return True


# --- the benchmarks: their repetitions on one shared axis ---------------------------


DistributionRow = tuple  # (tag, color, Distribution)


@styled
def distribution_chart(slug: str, title: str, groups: list[tuple[str, list]], scale: Scale,
                       limits: tuple[float, float], log: bool, tags: list[tuple[str, str]]
                       ) -> Chart:
    """The repetitions of many benchmarks on one axis, so they compare by eye.

    ``groups``: top to bottom, ``(benchmark label, [(tag, color, Distribution)])``
    (one row per report drawn beside the others); ``limits`` and ``log``: the
    axis, the same for every such chart of the page. Each row: the box
    (quartiles), Tukey's whiskers, the repetitions as dots, the median (black)
    and its interval (orange), the outliers (red x).
    """
    rows = sum(len(items) for _, items in groups)
    figure = new_figure(1.0 + 0.22 * rows + 0.12 * len(groups))
    axes = _axes(figure)
    factor = scale.factor
    y, ticks, labels = 0.0, [], []
    for label, items in groups:
        top = y
        for _, color, shape in items:
            _draw_box(axes, y, shape, factor, color)
            y -= 1.0
        ticks.append((top + y + 1.0) / 2.0)
        labels.append(short(label, 40))
        y -= 0.4  # a gap between benchmarks
    axes.set_yticks(ticks)
    axes.set_yticklabels(labels)
    axes.set_ylim(y + 0.4 - 0.6, 0.6)
    axes.grid(axis="y", visible=False)
    low, high = limits[0] * factor, limits[1] * factor
    if log:
        axes.set_xscale("log")
        axes.set_xlim(low / 1.15, high * 1.15)
    else:
        margin = (high - low) * 0.04 or abs(high) * 0.05 or 1.0
        axes.set_xlim(low - margin, high + margin)
    axes.set_xlabel(f"wall time per iteration ({scale.unit}{', log scale' if log else ''})")
    handles = [Patch(facecolor="white", edgecolor=color, label=short(tag, 30))
               for tag, color in tags] if len(tags) > 1 else []
    handles += [Line2D([], [], color="#111", linewidth=2, label="median"),
                Line2D([], [], color="#e69500", linewidth=2.5,
                       label=f"{CONFIDENCE * 100:g}% interval of the median"),
                Line2D([], [], marker="x", linestyle="", color="#c62828", markersize=5,
                       label="outliers (Tukey)")]
    columns = 3 if len(handles) > 4 else len(handles)
    axes.legend(handles=handles, loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=columns,
                borderaxespad=0.2, handlelength=1.5, columnspacing=1.2)
    _place(figure, _longest(labels), legend_above=True)
    if log:  # once the margins are known: the axis' length sets the ticks
        log_axis(axes.xaxis, low, high, _length(axes, "x"))
    return Chart(slug, title, figure)


def _draw_box(axes, y: float, shape: Distribution, factor: float, color: str) -> None:
    samples = _scaled(shape.samples, factor)
    if samples:
        axes.hlines(y, shape.low_whisker * factor, shape.q1 * factor, color="#555",
                    linewidth=0.8, zorder=1)
        axes.hlines(y, shape.q3 * factor, shape.high_whisker * factor, color="#555",
                    linewidth=0.8, zorder=1)
        axes.broken_barh([(shape.q1 * factor, max((shape.q3 - shape.q1) * factor, 1e-300))],
                         (y - 0.24, 0.48), facecolors="#f3f6fa", edgecolors=color,
                         linewidth=1, zorder=1)
        jitter = [y + 0.36 * (((i * 0.618034) % 1.0) - 0.5) for i in range(len(samples))]
        axes.scatter(samples, jitter, s=7, color=color, alpha=0.6, zorder=3, linewidths=0)
        if shape.outliers:
            axes.scatter(_scaled(shape.outliers, factor), [y] * len(shape.outliers),
                         marker="x", s=20, color="#c62828", zorder=4, linewidths=1.1)
    if shape.interval is not None:
        low, high = shape.interval
        axes.hlines(y - 0.34, low * factor, high * factor, color="#e69500", linewidth=2.0,
                    zorder=3)
    axes.vlines(shape.median * factor, y - 0.3, y + 0.3, color="#111", linewidth=1.8,
                zorder=5)


# --- sweeps ---------------------------------------------------------------------------


def _point_value(point: Benchmark, metric: str) -> tuple[float, float | None, float | None]:
    """The median of a metric at a point and its interval (None without one)."""
    shape = distribution(point, metric)
    if shape.interval is None:
        return shape.median, None, None
    return shape.median, shape.interval[0], shape.interval[1]


@styled
def sweep_chart(slug: str, sweep: Sweep, axis: str, metric: str, kind: Quantity,
                scale: Scale) -> Chart:
    """A metric against one axis; one series per combination of the other axes.

    A numeric axis draws lines (the points are ordered); a categorical one
    (devices, dtypes) draws dots side by side for each category, never a
    line between categories.
    """
    lines = sweep.lines(axis)
    values = sweep.values(axis)
    numeric = is_numeric(values)
    legend_rows = len(lines) if len(lines) > 1 else 0
    figure = new_figure(3.0 + 0.12 * max(0, legend_rows - 6))
    axes = _axes(figure)
    every = [v for p in sweep.points for v in p.metric(metric)]
    factor = scale.factor
    width = 0.6 / max(len(lines), 1)
    handles = []
    for number, line in enumerate(lines):
        xs, ys, errors_low, errors_high = [], [], [], []
        for value, point in line.points:
            middle, low, high = _point_value(point, metric)
            offset = (number - (len(lines) - 1) / 2.0) * width
            xs.append(value if numeric else values.index(value) + offset)
            ys.append(middle * factor)
            errors_low.append((middle - low) * factor if low is not None else 0.0)
            errors_high.append((high - middle) * factor if high is not None else 0.0)
        color = SERIES_COLORS[number % len(SERIES_COLORS)]
        handles.append(axes.errorbar(xs, ys, yerr=[errors_low, errors_high], marker="o",
                                     markersize=4, linewidth=1.5, elinewidth=1.2,
                                     linestyle="-" if numeric else "none", capsize=3,
                                     color=color))
    if numeric and is_geometric(values):
        axes.set_xscale("log", base=2 if all(float(v).is_integer() for v in values) else 10)
        axes.xaxis.set_minor_locator(NullLocator())
    if numeric:
        axes.set_xticks(values)
        axes.set_xticklabels([f"{v:g}" for v in values])
    else:
        axes.set_xticks(range(len(values)))
        axes.set_xticklabels([short(str(v), 16) for v in values])
        axes.set_xlim(-0.6, len(values) - 0.4)
        axes.grid(axis="x", visible=False)
    if not _set_log(axes, "y", _scaled(every, factor)):
        axes.set_ylim(bottom=0)
    axes.set_xlabel(f"{axis} (sweep axis{', log scale' if axes.get_xscale() == 'log' else ''})")
    axes.set_ylabel(kind.label(scale.unit))
    if legend_rows:  # labels given: one of "_x=1" is shown too (matplotlib hides "_...")
        axes.legend(handles, [short(line.label, 40) for line in lines], loc="upper left",
                    bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
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
def comparison_chart(slug: str, title: str, comparison, shown: list) -> Chart:
    """Each shown benchmark's change (new/old - 1) with its interval, colored by
    verdict; the geometric mean of all the changes dashed."""
    figure = new_figure(1.2 + 0.24 * max(len(shown), 1))
    axes = _axes(figure)
    for position, result in enumerate(reversed(shown)):
        color = verdict_color(result.verdict)
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
    names = [short(display_name(b.name)) for b in reversed(shown)]
    axes.set_yticks(range(len(shown)))
    axes.set_yticklabels(names)
    axes.set_ylim(-0.7, max(len(shown), 1) - 0.3)
    axes.grid(axis="y", visible=False)
    used = list(dict.fromkeys(b.metric for b in shown if b.metric)) or ["real_time"]
    axes.set_xlabel(f"change of the {' / '.join(used).replace('_', ' ')}, "
                    f"new / old − 1 (%), with its "
                    f"{comparison.options.confidence * 100:g}% interval")
    axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:+g}"))
    present = list(dict.fromkeys(b.verdict for b in shown))
    handles = [Patch(color=verdict_color(v), label=v) for v in present]
    if comparison.geomean_change is not None:
        handles.append(Line2D([], [], color="#1f77b4", linestyle="--",
                              label=f"geometric mean {comparison.geomean_change * 100:+.2f}%"))
    if any(b.regression for b in shown):
        handles.append(Line2D([], [], marker="D", linestyle="", color=VERDICT_COLORS[SLOWER],
                              label="regression (beyond its threshold)"))
    axes.legend(handles=handles, loc="lower left", bbox_to_anchor=(0.0, 1.0),
                ncol=min(len(handles), 3), borderaxespad=0.2)
    rows = (len(handles) + 2) // 3
    figure.set_figheight(figure.get_figheight() + 0.2 * (rows - 1))
    _place(figure, _longest(names), legend_above=True)
    return Chart(slug, title, figure)


# --- a history: the trend of each benchmark ------------------------------------------


@styled
def trend_chart(slug: str, trend: Trend, ticks: list[str], commits: list[str],
                scale: Scale) -> Chart:
    """The median of each report with its interval, oldest first, and the change
    points (each with its size and the commit of the first report of the new
    level). ``ticks``: each report's label (distinct: its number, then its commit
    or time)."""
    figure = new_figure(2.9)
    axes = _axes(figure)
    medians = [d.median for d in trend.distributions]
    factor = scale.factor
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
        color = verdict_color(change.verdict)
        axes.axvline(x, color=color, linestyle="--", linewidth=1.2)
        commit = commits[change.index][:8]
        text = f"{change.verdict} {change.change * 100:+.0f}%" + (f" {commit}" if commit else "")
        right = x > (len(xs) - 1) * 0.6  # near the right edge: the text goes left
        axes.annotate(text, xy=(x, 1.0 - 0.1 * (number % 3)),
                      xycoords=("data", "axes fraction"), xytext=(-3 if right else 3, -2),
                      textcoords="offset points", va="top", ha="right" if right else "left",
                      color=color, fontsize=8,
                      bbox={"boxstyle": "square,pad=0.1", "facecolor": "white",
                            "edgecolor": "none", "alpha": 0.8})
    labels = [ticks[index] for index in trend.indexes]
    step = max(1, math.ceil(len(labels) / 12))
    axes.set_xticks(xs[::step])
    axes.set_xticklabels(labels[::step])
    axes.set_xlim(-0.5, len(xs) - 0.5)
    axes.grid(axis="x", visible=False)
    axes.set_xlabel("report (oldest first)")
    axes.set_ylabel(f"wall time per iteration ({scale.unit})")
    every = [m * factor for m in medians]
    tops = [m + h for m, h in zip(every, high)]
    _place(figure, 6, ylabel=True, bottom_lines=max(t.count("\n") + 1 for t in labels))
    if _set_log(axes, "y", every + tops):  # room above the data for the change points' text
        bottoms = [m - lo for m, lo in zip(every, low) if m - lo > 0] or every
        axes.set_ylim(min(bottoms) / 1.2, max(tops) * (max(tops) / min(bottoms)) ** 0.3)
    else:
        axes.set_ylim(bottom=0, top=max(tops) * 1.3)
    if trend.changes:
        axes.legend(handles=[Line2D([], [], color="#555", linestyle="--",
                                    label="change point")], loc="lower right")
    return Chart(slug, short(display_name(trend.name), 90), figure)


# --- dispatch statistics ----------------------------------------------------------------


def dispatch_label(benchmark: Benchmark, dispatch: str) -> str:
    """A dispatch function's name without its module function's prefix."""
    function = benchmark.family.removeprefix("BM_").split("/", 1)[0]
    return dispatch.removeprefix(function + "_") if function else dispatch


@styled
def dispatch_chart(slug: str, benchmark: Benchmark, scale: Scale) -> Chart:
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
    figure = new_figure(0.9 + 0.3 * len(labels))
    axes = _axes(figure)
    positions = list(range(len(labels)))[::-1]
    axes.barh(positions, _scaled(times, scale.factor), color="#1f77b4", height=0.6)
    for y, value, share in zip(positions, times, shares):
        axes.annotate(f"{share:.1f}%", xy=(value * scale.factor, y), xytext=(3, 0),
                      textcoords="offset points", va="center", fontsize=8)
    axes.set_yticks(positions)
    axes.set_yticklabels(labels)
    axes.grid(axis="y", visible=False)
    axes.margins(x=0.12)
    axes.set_xlabel(f"device time per iteration ({scale.unit})")
    _place(figure, _longest(labels))
    return Chart(slug, short(benchmark.display, 90), figure)


# --- device time and memory -------------------------------------------------------------


@styled
def device_time_chart(slug: str, benchmarks: list[Benchmark]) -> Chart:
    """Per benchmark, its wall time split into device time and the rest (host overhead)."""
    figure = new_figure(1.1 + 0.28 * len(benchmarks))
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
    names = [short(b.display) for b in benchmarks]
    axes.set_yticks(positions)
    axes.set_yticklabels(names)
    axes.set_xlim(0, 100)
    axes.grid(axis="y", visible=False)
    axes.set_xlabel("share of the wall time per iteration (%)")
    axes.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=2, borderaxespad=0.2)
    _place(figure, _longest(names), legend_above=True)
    return Chart(slug, "device time against wall time", figure)


@styled
def metric_chart(slug: str, kind: Quantity, scale: Scale, names: list[str],
                 values: list[float]) -> Chart:
    """One metric (memory, a counter) of several benchmarks, each bar with its value."""
    figure = new_figure(0.9 + 0.28 * len(names))
    axes = _axes(figure)
    positions = list(range(len(names)))[::-1]
    scaled = _scaled(values, scale.factor)
    axes.barh(positions, scaled, color="#9467bd", height=0.6)
    for y, value in zip(positions, scaled):
        axes.annotate(significant(value), xy=(value, y), xytext=(3, 0),
                      textcoords="offset points", va="center", fontsize=8)
    labels = [short(name) for name in names]
    axes.set_yticks(positions)
    axes.set_yticklabels(labels)
    axes.grid(axis="y", visible=False)
    axes.margins(x=0.14)
    axes.set_xlim(left=0)
    axes.set_xlabel(kind.label(scale.unit))
    _place(figure, _longest(labels))
    return Chart(slug, kind.what, figure)


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0
