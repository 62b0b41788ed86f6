"""The report's frontiers: a Server sweep's throughput against its latency, with its
knee, and the LLM kind's tokens/s per device against tokens/s per user (Pareto).

Two sections of ``ireebench report`` (``ireebench_report_sections``, the
report plugin's hook, hence ``optionalhook``), drawn from the latest
report's rows as docs/serving.md defines them:

* **Serving frontier**: the Server rows of a sweep (``params`` with
  ``scenario: server`` and a ``target_qps``; two rates or more per family
  and other axes; or the loads a ``--search`` tried, the rows under its
  benchmark): completed queries per second (``qps``) against the p50
  and the tail latency (the p99, else the highest percentile every point
  has), one point per rate, INVALID points hollow, the knee (:func:`knee`)
  ringed and said in the caption; goodput against throughput beside it
  when the rows have it.
* **LLM frontier**: every row of the ``llm`` kind (``output_tokens_per_second``
  and ``tpot_ms``; each batch size, each point of a sweep): tokens/s of the
  device against tokens/s per user (1 / TPOT), the Pareto frontier
  (:func:`pareto`) joined, the dominated points faint.

Nothing here imports matplotlib: the figures are the page's (``out.figure()``).
docs/report.md, "What is drawn"; docs/serving.md, "The throughput-latency frontier".
"""

from __future__ import annotations

import math
import re

from ireebench import hookimpl
from ireebench.reporting import SECTION_ORDER, ReportSection

# The knee: the last rate whose tail latency is within KNEE_FACTOR times the
# sweep's lowest (its low-load value).
KNEE_FACTOR = 2.0
RATE_AXIS = "target_qps"
# The tail percentiles a Server row may have, highest first (early stopping
# leaves out those its queries cannot vouch for).
TAILS = ("p99", "p97", "p95", "p90")
MAX_FRONTIERS = 12  # drawn per page, as the report bounds its sweeps' charts
INVALID_COLOR = "#c62828"
FRONTIER_COLOR = "#1f77b4"
_BATCH = re.compile(r"decode_bs(\d+)")


def knee(latencies: list[float], factor: float = KNEE_FACTOR) -> int | None:
    """The knee of a latency curve given in order of rising load: the index of the
    last point whose latency is at most ``factor`` times the lowest one.

    The lowest latency is the low-load value (queueing adds nothing there);
    a minimum, so one slow point at low load does not raise the limit, and
    the *last* point within it, so one stall at a middle rate does not end
    the curve early. ``None`` with fewer than two points or no positive
    latency. The knee is the last point when latency never rose past the
    limit (the caller says so: the knee lies beyond the sweep).
    """
    positive = [value for value in latencies if value > 0]
    if len(latencies) < 2 or not positive:
        return None
    limit = factor * min(positive)
    within = [i for i, value in enumerate(latencies) if 0 < value <= limit]
    return within[-1]


def pareto(points: list[tuple[float, float]]) -> list[bool]:
    """For each ``(x, y)`` (both better when larger), whether it is on the Pareto
    frontier: no other point is at least as good in both and better in one."""
    return [not any(ox >= x and oy >= y and (ox > x or oy > y) for ox, oy in points)
            for x, y in points]


def _number(value: float) -> str:
    """At most 4 significant digits, never an exponent (13130, 0.1234, 250)."""
    if not value or not math.isfinite(value):
        return f"{value:g}"
    text = f"{value:.{max(0, 3 - math.floor(math.log10(abs(value))))}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _median(benchmark, metric: str) -> float | None:
    """The median of a row's repetitions (stdlib ``statistics`` stays out of startup)."""
    values = sorted(benchmark.metric(metric))
    middle = len(values) // 2
    return None if not values else values[middle] if len(values) % 2 else \
        (values[middle - 1] + values[middle]) / 2


# --- the Server's frontier -----------------------------------------------------


def server_sweeps(report) -> list[tuple[str, list]]:
    """``(title, points)`` per family and other axes: the Server rows of two rates or
    more, each point a benchmark, by rate."""
    groups: dict[tuple, list] = {}
    for benchmark in report.drawable:
        params = benchmark.params
        if params.get("scenario") != "server" or _median(benchmark, RATE_AXIS) is None:
            continue
        others = tuple((k, str(v)) for k, v in params.items() if k not in (RATE_AXIS, "scenario"))
        groups.setdefault((benchmark.family, others), []).append(benchmark)
    found = [(" ".join([family, *(f"{k}={v}" for k, v in others)]), points)
             for (family, others), points in groups.items()]
    for benchmark in report.drawable:  # a --search: the loads it tried, rows under it
        found.append((f"{benchmark.display}: the loads --search tried",
                      [SearchLoad(row) for row in benchmark.extra_rows
                       if RATE_AXIS in row.metrics]))
    found = [(title, points) for title, points in found if len(points) >= 2]
    for _, points in found:
        points.sort(key=lambda b: _median(b, RATE_AXIS))
    return found


class SearchLoad:
    """A load a ``--search`` tried (an extra row under its benchmark), read as a point."""

    def __init__(self, row):
        self.metrics = row.metrics

    def metric(self, name: str) -> list[float]:
        return [self.metrics[name]] if name in self.metrics else []


def _tail(points) -> str:
    """The highest percentile every point has ("" when they share none)."""
    return next((p for p in TAILS if all(_median(b, f"{p}_ms") is not None for b in points)), "")


def _throughput(benchmark) -> float:
    value = _median(benchmark, "qps")
    return value if value is not None else _median(benchmark, "items_per_second") or 0.0


def _valid(benchmark) -> bool:
    value = _median(benchmark, "valid")
    return value is None or value >= 0.5


def _log_when_wide(out, axes, values: list[float], which: str) -> None:
    positive = [v for v in values if v > 0]
    if positive and max(positive) / min(positive) > 10:
        (axes.set_xscale if which == "x" else axes.set_yscale)("log")
        axis = axes.xaxis if which == "x" else axes.yaxis
        out.charts.log_axis(axis, min(positive), max(positive), 3.0, which == "x")


def _scatter(axes, xs, ys, valid, color, marker, label):
    """Points joined in order; the INVALID ones hollow, edged red."""
    axes.plot(xs, ys, color=color, linewidth=1, zorder=1)
    axes.scatter([x for x, ok in zip(xs, valid) if ok], [y for y, ok in zip(ys, valid) if ok],
                 color=color, marker=marker, s=22, zorder=2, label=label)
    bad = [(x, y) for x, y, ok in zip(xs, ys, valid) if not ok]
    if bad:
        axes.scatter(*zip(*bad), facecolors="white", edgecolors=INVALID_COLOR, marker=marker,
                     s=28, linewidths=1.2, zorder=3, label=f"{label}, INVALID")


def knee_caption(points, tail: str, index: int, rates: list[float],
                 latencies: list[float], time) -> str:
    """The knee in one line: its rate, throughput and latency."""
    point, low = points[index], min(v for v in latencies if v > 0)
    where = (f"knee at {_number(rates[index])} queries/s asked "
             f"({_number(_throughput(point))} completed): {tail} {time.text(latencies[index])}")
    lowest = f"the sweep's lowest {tail}, {time.text(low)}"
    if index == len(points) - 1:
        return (f"No knee within the sweep: {tail} stayed within {KNEE_FACTOR:g}× {lowest}, "
                f"up to {_number(rates[index])} queries/s asked; the last point, "
                f"{where.removeprefix('knee at ')}")
    return (f"The {where}, within {KNEE_FACTOR:g}× {lowest}; at "
            f"{_number(rates[index + 1])} queries/s it is {time.text(latencies[index + 1])}"
            + ("" if _valid(point) else " (the knee's run is INVALID)"))


def serving_frontier(report, out) -> None:
    time = report.units.time
    out.paragraph(f"Completed queries per second against latency, one point per "
                  f"--target_qps; INVALID runs hollow and red. The knee: the highest rate "
                  f"whose tail latency is within {KNEE_FACTOR:g}× the sweep's lowest "
                  f"(docs/serving.md).", "meta")
    sweeps = server_sweeps(report.latest)
    if len(sweeps) > MAX_FRONTIERS:
        out.paragraph(f"{MAX_FRONTIERS} of {len(sweeps)} frontiers drawn (the first); the "
                      "Benchmarks table lists every point.", "meta")
    for title, points in sweeps[:MAX_FRONTIERS]:
        tail = _tail(points) or "p50"
        rates = [_median(b, RATE_AXIS) for b in points]
        done = [_throughput(b) for b in points]
        valid = [_valid(b) for b in points]
        series = {p: [(_median(b, f"{p}_ms") or 0.0) / 1e3 for b in points]
                  for p in dict.fromkeys(("p50", tail))}
        found = knee(series[tail])
        caption = knee_caption(points, tail, found, rates, series[tail], time) \
            if found is not None else f"{title}: no latency to find a knee in"
        out.heading(title)
        out.paragraph(caption, "note")
        figure = out.figure(height=3.0)
        axes = figure.add_subplot()
        for (name, seconds), color, marker in zip(series.items(), (FRONTIER_COLOR, "#ff7f0e"),
                                                  ("o", "s")):
            _scatter(axes, done, [s * time.factor for s in seconds], valid, color, marker,
                     f"{name} latency")
        if found is not None:
            at = (done[found], series[tail][found] * time.factor)
            axes.scatter(*at, s=160, facecolors="none", edgecolors="black", linewidths=1.5,
                         zorder=4)
            axes.annotate(f"knee ({tail})", at, xytext=(8, -12), textcoords="offset points")
        _log_when_wide(out, axes, [s * time.factor for v in series.values() for s in v], "y")
        axes.set_xlabel("completed queries per second")
        axes.set_ylabel(f"latency ({time.unit})")
        axes.legend()
        out.chart(figure, f"{title}: throughput against latency", name=title)
        goodput = [_median(b, "goodput") for b in points]
        has_goodput = all(g is not None for g in goodput)
        if has_goodput:
            figure = out.figure(height=3.0)
            axes = figure.add_subplot()
            _scatter(axes, done, goodput, valid, "#2ca02c", "o", "goodput")
            axes.plot([0, max(done)], [0, max(done)], color="#757575", linestyle="--",
                      linewidth=0.8, label="every query good")
            axes.set_xlabel("completed queries per second")
            axes.set_ylabel("goodput (queries per second)")
            axes.legend(loc="upper left")
            out.chart(figure, f"{title}: goodput against throughput", name=f"{title}-goodput")
        numbers = ["target qps", "completed qps", *(f"{p} latency" for p in series)]
        numbers += ["goodput"] if has_goodput else []
        out.table([*numbers, "verdict", ""],
                  [[_number(rate), _number(d), *(time.text(v[i]) for v in series.values()),
                    *([_number(goodput[i])] if has_goodput else []),
                    "VALID" if valid[i] else "INVALID", "knee" if i == found else ""]
                   for i, (rate, d) in enumerate(zip(rates, done))],
                  numeric=set(range(len(numbers))))


# --- the LLM's Pareto frontier ------------------------------------------------------


def llm_points(report) -> list:
    """The rows of the llm kind: those with tokens/s and a TPOT."""
    return [b for b in report.drawable
            if _median(b, "output_tokens_per_second") and _median(b, "tpot_ms")]


def point_label(benchmark) -> str:
    """``bs4 llm_prompt_length:20``: the batch size and the point's other axes."""
    batch = _BATCH.search(benchmark.family)
    axes = [f"{k}:{v}" for k, v in benchmark.params.items() if k not in ("function", "bs")]
    return " ".join(([f"bs{batch.group(1)}"] if batch else []) + axes)


def llm_frontier(report, out) -> None:
    points = llm_points(report.latest)
    device = [_median(b, "output_tokens_per_second") for b in points]
    user = [1e3 / _median(b, "tpot_ms") for b in points]
    on = pareto(list(zip(device, user)))
    out.paragraph("Each row of the llm kind (a batch size, a point of a sweep): output tokens "
                  "per second of its device against tokens per second of one user (1 / TPOT). "
                  "The Pareto frontier (no point better in both) is joined; the dominated "
                  "points are faint. The kind runs one generation at a time: no concurrency "
                  "axis yet.", "meta")
    figure = out.figure(height=3.0)
    axes = figure.add_subplot()
    front = sorted((x, y) for x, y, keep in zip(device, user, on) if keep)
    axes.plot(*zip(*front), color=FRONTIER_COLOR, marker="o", linewidth=1.2,
              label="Pareto frontier")
    faint = [(x, y) for x, y, keep in zip(device, user, on) if not keep]
    if faint:
        axes.scatter(*zip(*faint), color=FRONTIER_COLOR, alpha=0.3, s=18, label="dominated")
    for benchmark, x, y in zip(points, device, user):
        axes.annotate(point_label(benchmark), (x, y), fontsize=7, xytext=(3, 3),
                      textcoords="offset points")
    _log_when_wide(out, axes, device, "x")
    _log_when_wide(out, axes, user, "y")
    axes.set_xlabel("output tokens per second (device)")
    axes.set_ylabel("tokens per second per user")
    axes.legend()
    out.chart(figure, "tokens/s per device against tokens/s per user", name="pareto")
    out.table(["benchmark", "tokens/s (device)", "tokens/s per user", "TPOT", "frontier"],
              [[b.display, _number(x), _number(y),
                report.units.time.text(_median(b, "tpot_ms") / 1e3), "yes" if keep else ""]
               for b, x, y, keep in zip(points, device, user, on)],
              numeric={1, 2, 3}, names={0})


@hookimpl(optionalhook=True)
def ireebench_report_sections(report):
    latest = report.latest
    found = []
    if server_sweeps(latest):
        found.append(ReportSection("Serving frontier", serving_frontier,
                                   order=SECTION_ORDER["sweeps"] - 5, anchor="serving-frontier"))
    if len(llm_points(latest)) >= 2:
        found.append(ReportSection("LLM frontier", llm_frontier,
                                   order=SECTION_ORDER["sweeps"] - 4, anchor="llm-frontier"))
    return found or None
