"""How ``ireebench report`` scales with the number of benchmarks: time, memory, page size.

One real run (a tiny module, 9 repetitions, measured by ireebench) gives
the shape of a benchmark's rows (its 9 iteration rows and its aggregates,
every field as ireebench writes them); each report of N benchmarks is
those rows renamed N times, their times drawn from a log-normal around a
median that differs per benchmark (cv 3 %, seeded: the same files every
time). Three inputs per N:

* **one report**;
* **two reports**, the second with every 20th benchmark 1.5x slower (the
  comparison: ``ireebench compare``'s engine on every benchmark);
* **a history of five**, every 20th benchmark 1.5x slower from the fourth
  (the gate's comparison of the latest and every benchmark's trend and
  change points).

Each is drawn by ``ireebench report ... -o page.html`` as a process of its
own: its wall time, its CPU time (user + system) and its peak resident
memory (``wait4``), and the page's size. The target (issue 25.7): 10,000
benchmarks in under 30 s and 1 GB. ``--write`` puts the table into
docs/performance.md (between the ``report_scale`` markers).

    python benchmarks/report_scale.py [--sizes 100,1000,10000] [--write]

Needs iree-base-compiler (pip install ".[compiler]") and matplotlib (the
``report`` extra).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import statistics
import sys
import tempfile
from pathlib import Path

from compare_native import TRIVIAL, compile_source, machine, run_process, write_section

BEGIN, END = "<!-- report_scale: begin -->", "<!-- report_scale: end -->"
NAME = "BM_layer_{index:05d}_fused_attention_block/process_time/real_time"
SLOWER = 1.5  # every 20th benchmark, from the changed report on
CV = 0.03


def base_rows(scratch: Path) -> dict:
    """A real report of one benchmark with 9 repetitions (ireebench's JSON)."""
    module = compile_source(TRIVIAL, scratch / "trivial.vmfb")
    out = scratch / "base.json"
    run_process([sys.executable, "-m", "ireebench", f"--module={module}",
                 "--device=local-sync", "--benchmark_repetitions=9",
                 "--benchmark_min_time=5x", f"--benchmark_out={out}"])
    return json.loads(out.read_text())


def synthetic(base: dict, count: int, number: int, changed_from: int | None) -> dict:
    """``count`` benchmarks shaped like ``base``'s one; report ``number`` of a series
    (its date and commit), every 20th benchmark slower from ``changed_from`` on."""
    template = [row for row in base["benchmarks"] if row["run_type"] == "iteration"]
    aggregates = [row for row in base["benchmarks"] if row["run_type"] == "aggregate"]
    unit_rows = []
    draw = random.Random(1000 * number + count)
    for index in range(count):
        run = NAME.format(index=index)
        median = 0.02 * 1.07 ** (index % 97)  # ms
        if changed_from is not None and number >= changed_from and index % 20 == 0:
            median *= SLOWER
        times = [median * draw.lognormvariate(0.0, CV) for _ in template]
        for row, value in zip(template, times):
            unit_rows.append({**row, "name": run, "run_name": run, "family_index": index,
                              "real_time": value, "cpu_time": value, "time_unit": "ms"})
        stdev = statistics.stdev(times)
        values = {"mean": statistics.fmean(times), "median": statistics.median(times),
                  "stddev": stdev, "cv": stdev / statistics.fmean(times)}
        for row in aggregates:
            value = values.get(row["aggregate_name"], values["median"])
            unit_rows.append({**row, "name": f"{run}_{row['aggregate_name']}", "run_name": run,
                              "family_index": index, "real_time": value, "cpu_time": value,
                              "time_unit": "ms"})
    context = dict(base["context"], date=f"2026-01-0{number + 1}T12:00:00+00:00",
                   git_commit=f"c0ffee{number}")
    return {"context": context, "benchmarks": unit_rows}


def measure(label: str, inputs: list[Path], page: Path) -> dict:
    process = run_process([sys.executable, "-m", "ireebench", "report", *map(str, inputs),
                           "-o", str(page)])
    return {"input": label, "wall": process.wall, "cpu": process.cpu,
            "rss": process.peak_rss_mib, "page": page.stat().st_size / 2 ** 20}


def table(results: list[dict]) -> str:
    lines = ["| benchmarks | input | wall (s) | CPU (s) | peak memory (MiB) | page (MiB) |",
             "| --- | --- | --- | --- | --- | --- |"]
    for result in results:
        lines.append(f"| {result['count']:,} | {result['input']} | {result['wall']:.1f} | "
                     f"{result['cpu']:.1f} | {result['rss']:.0f} | {result['page']:.1f} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,1000,10000",
                        help="the numbers of benchmarks (comma-separated)")
    parser.add_argument("--write", action="store_true", help="write docs/performance.md")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    before = os.getloadavg()[0]
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        base = base_rows(folder)
        for count in sizes:
            files = []
            for number in range(5):
                path = folder / f"n{count}_{number}.json"
                path.write_text(json.dumps(synthetic(base, count, number, changed_from=3)))
                files.append(path)
            two = folder / f"n{count}_new.json"
            two.write_text(json.dumps(synthetic(base, count, 1, changed_from=1)))
            for label, inputs in (("one report", files[:1]), ("two reports", [files[0], two]),
                                  ("a history of five", files)):
                result = measure(label, inputs, folder / "page.html")
                result["count"] = count
                results.append(result)
                print(f"{count:>6} {label:<18} wall {result['wall']:6.1f} s  cpu "
                      f"{result['cpu']:6.1f} s  peak {result['rss']:6.0f} MiB  page "
                      f"{result['page']:5.1f} MiB", file=sys.stderr)
    after = os.getloadavg()[0]
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    section = (f"Run on {now}: {machine()}\nLoad average {before:.2f} before, {after:.2f} "
               f"after. Each input drawn by `ireebench report INPUTS -o page.html` as a "
               f"process of its own.\n\n{table(results)}")
    print(section)
    if args.write:
        write_section(BEGIN, END, section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
