"""Repetitions in one process against the same repetitions in three: do runs agree?

pyperf's lesson is that part of a benchmark's variance lives between
processes (heap layout, address space randomization, page placement, the
core), so one process's repetitions understate it and two runs of the same
code disagree beyond their intervals. This script measures that on this
machine: one module holding the MLP of benchmarks/mlp.mlir (about 1 ms on
``--device=local-sync``) and a trivial function (a few µs), run K times
with ``--benchmark_processes=1`` and K times with ``--benchmark_processes=3``,
the same ``--benchmark_repetitions`` each (``--benchmark_statistics=ci``:
the 95 % interval of the median), the two alternating (ABBA, so drift hits
both alike). Per function and N it reports:

* **overlap**: the share of the K(K-1)/2 pairs of runs whose intervals of
  the median overlap (a gate comparing two runs of the same code should
  find them compatible);
* **contains**: the share of ordered pairs (i, j) where run j's median lies
  in run i's interval;
* **spread / width**: the standard deviation of the K run medians divided by
  the mean width of a run's interval (how far runs wander, in units of what
  each run claims), and the range of the medians relative to their median;
* **wall**: the median wall time of a whole run (process start to exit).

Each for the real times and for the CPU times (which other processes taking
the CPU inflate less, on a loaded machine).

``--write`` puts the table into docs/statistics.md (between the
``process_repetitions`` markers).

    python benchmarks/process_repetitions.py [--runs 8] [--repetitions 12] [--write]
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from compare_native import ROOT, TRIVIAL, compile_source, machine, write_section

STATISTICS_MD = ROOT / "docs" / "statistics.md"
BEGIN, END = "<!-- process_repetitions: begin -->", "<!-- process_repetitions: end -->"
FUNCTIONS = {"mlp": "MLP (~1 ms)", "trivial": "trivial (µs)"}
METRICS = {"real_time": "real", "cpu_time": "CPU"}
ENV = {"IREEBENCH_ENVIRONMENT_WARNINGS": "false", "IREEBENCH_MULTIMODAL_WARNINGS": "false"}


@dataclass
class Runs:
    medians: list[float] = field(default_factory=list)
    intervals: list[tuple[float, float]] = field(default_factory=list)
    walls: list[float] = field(default_factory=list)
    unit: str = ""


def run_once(module: Path, processes: int, repetitions: int, min_time: str) -> tuple[dict, float]:
    command = [sys.executable, "-m", "ireebench", f"--module={module}", "--device=local-sync",
               f"--benchmark_repetitions={repetitions}", f"--benchmark_processes={processes}",
               f"--benchmark_min_time={min_time}", "--benchmark_statistics=ci",
               "--benchmark_format=json", "--time_unit=us"]
    start = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True, check=False,
                          stdin=subprocess.DEVNULL, env={**os.environ, **ENV})
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(command)}: exit {proc.returncode}: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout), wall


def record(report: dict, wall: float, results: dict, processes: int) -> None:
    """Each function's median and interval, of the real and of the CPU times."""
    rows: dict[str, dict] = {}
    for row in report["benchmarks"]:
        if row["run_type"] == "aggregate":
            rows.setdefault(row["run_name"], {})[row["aggregate_name"]] = row
    for run_name, aggregates in rows.items():
        function = run_name.split("/", 1)[0].removeprefix("BM_")
        for metric in METRICS:
            runs = results.setdefault((function, processes, metric), Runs(unit="us"))
            runs.medians.append(aggregates["median"][metric])
            runs.intervals.append((aggregates["ci_lower"][metric],
                                   aggregates["ci_upper"][metric]))
            runs.walls.append(wall)


def summary(runs: Runs) -> dict:
    pairs = list(itertools.combinations(range(len(runs.medians)), 2))
    overlap = sum(1 for i, j in pairs if runs.intervals[i][0] <= runs.intervals[j][1]
                  and runs.intervals[j][0] <= runs.intervals[i][1]) / max(1, len(pairs))
    ordered = list(itertools.permutations(range(len(runs.medians)), 2))
    contains = sum(1 for i, j in ordered if runs.intervals[i][0] <= runs.medians[j]
                   <= runs.intervals[i][1]) / max(1, len(ordered))
    width = statistics.mean(high - low for low, high in runs.intervals)
    middle = statistics.median(runs.medians)
    return {
        "median": middle,
        "width": width / middle,
        "overlap": overlap,
        "contains": contains,
        "spread": statistics.stdev(runs.medians) / width if width else float("inf"),
        "range": (max(runs.medians) - min(runs.medians)) / middle,
        "wall": statistics.median(runs.walls),
    }


def table(results: dict, runs: int, repetitions: int, min_time: str, load: tuple) -> str:
    lines = [
        (f"Measured on {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC: "
        f"{machine()}; load average {load[0]:.2f} before, {load[1]:.2f} after. "
        f"`python benchmarks/process_repetitions.py --runs {runs} --repetitions {repetitions}`: "
        f"`--device=local-sync --benchmark_repetitions={repetitions} "
        f"--benchmark_min_time={min_time} --benchmark_statistics=ci`, {runs} runs with each "
        "N, alternating (ABBA). width: the mean 95 % interval of the median relative to the "
        "median; overlap: pairs of runs whose intervals overlap; contains: ordered pairs "
        "where one run's median lies in the other's interval; spread: the standard deviation "
        "of the run medians over the mean interval width; range: (max - min) of the run "
        "medians relative to their median; wall: the median wall time of one whole run "
        "(both functions)."),
        "",
        "| function | time | N | median | width | overlap | contains | spread | range | wall |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for function, shown in FUNCTIONS.items():
        for metric, metric_shown in METRICS.items():
            for processes in (1, 3):
                if (function, processes, metric) not in results:
                    continue
                s = summary(results[(function, processes, metric)])
                lines.append(
                    f"| {shown} | {metric_shown} | {processes} | {s['median']:.2f} µs | "
                    f"±{50 * s['width']:.1f} % | {100 * s['overlap']:.0f} % | "
                    f"{100 * s['contains']:.0f} % | {s['spread']:.2f} | "
                    f"{100 * s['range']:.1f} % | {s['wall']:.1f} s |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=8, help="runs with each N (K)")
    parser.add_argument("--repetitions", type=int, default=12)
    parser.add_argument("--min_time", default="0.05s")
    parser.add_argument("--write", action="store_true", help="update docs/statistics.md")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    results: dict = {}
    with tempfile.TemporaryDirectory() as scratch:
        source = (ROOT / "benchmarks" / "mlp.mlir").read_text() + TRIVIAL
        module = compile_source(source, Path(scratch) / "both.vmfb")
        for round_index in range(args.runs):
            order = (1, 3) if round_index % 2 == 0 else (3, 1)
            for processes in order:
                report, wall = run_once(module, processes, args.repetitions, args.min_time)
                record(report, wall, results, processes)
                print(f"run {round_index + 1}/{args.runs} N={processes}: {wall:.1f} s",
                      file=sys.stderr)
    section = table(results, args.runs, args.repetitions, args.min_time,
                    (load_before, os.getloadavg()[0]))
    print(section)
    if args.write:
        write_section(BEGIN, END, section, STATISTICS_MD)
    return 0


if __name__ == "__main__":
    sys.exit(main())
