"""Example report section: where the time of the latest report goes.

    ireebench report run.json -o report.html --plugin ireebench_report_slowest.py

Install it (``pip install examples/plugins/report_slowest``: entry point
``report_slowest``) and every ``ireebench report`` and ``--benchmark_report``
page gets the section, right after the summary.

Shows the report's hook ``ireebench_report_sections`` (declared by the
built-in ``report`` plugin, so implemented with ``optionalhook=True``: with
``-p no:report`` nobody calls it): a :class:`ReportSection` with its title
and place (``order``), whose ``render(report, out)`` reads the report's
data (``report.latest``: the newest input; ``report.units``: the page's
units) and writes a table and a chart (a matplotlib figure from
``out.figure()``, inlined by ``out.chart()`` with ids no other chart uses).
"""

import statistics

from ireebench import hookimpl
from ireebench.reporting import SECTION_ORDER, ReportSection

SHOWN = 5  # benchmarks named; the rest is one "others" bar


def where_the_time_goes(report, out):
    """The share of each benchmark in the sum of the latest report's median wall times."""
    medians = {b.display: statistics.median(b.metric("real_time"))
               for b in report.latest.drawable}
    total = sum(medians.values())
    ranked = sorted(medians.items(), key=lambda item: -item[1])
    shown = ranked[:SHOWN]
    if len(ranked) > SHOWN:
        shown.append((f"{len(ranked) - SHOWN} others", sum(t for _, t in ranked[SHOWN:])))
    time = report.units.time  # the page's one unit of time
    out.paragraph(f"{report.latest.label}: the median wall times of its {len(medians)} "
                  f"benchmarks add up to {time.text(total)}.", "meta")
    out.table(["benchmark", "median wall time", "share"],
              [[name, time.text(seconds), f"{100 * seconds / total:.1f}%"]
               for name, seconds in shown], numeric={1, 2}, names={0})
    figure = out.figure(height=0.8 + 0.3 * len(shown))
    axes = figure.add_subplot()
    axes.barh(range(len(shown))[::-1], [100 * seconds / total for _, seconds in shown],
              color="#1f77b4")
    axes.set_yticks(range(len(shown))[::-1], [name for name, _ in shown])
    axes.set_xlabel("share of the total median wall time (%)")
    figure.subplots_adjust(left=0.35, bottom=0.3)
    out.chart(figure, "share of the time per benchmark", name="share")


@hookimpl(optionalhook=True)
def ireebench_report_sections(report):
    if not report.latest.drawable:
        return None
    return ReportSection("Where the time goes", where_the_time_goes,
                         order=SECTION_ORDER["summary"] + 5)
