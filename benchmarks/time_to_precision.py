"""Time to a trustworthy number: adaptive stopping against a fixed 10 repetitions.

On the MLP of benchmarks/mlp.mlir, each round runs, as whole processes, all
with ``--benchmark_statistics=ci,precision`` so that the confidence
interval of the median is reported:

1. **fixed**: ireebench ``--benchmark_repetitions=10`` (the default 0.5 s
   repetitions, the default ``--malloc_trim=off``);
2. **adaptive**: ``--benchmark_min_rel_accuracy=P``, where ``P`` is the
   precision (the interval's half-width relative to the median) the fixed
   run of the same round achieved, with the same 0.5 s repetitions;
3. **adaptive, short repetitions**: the same target with
   ``--benchmark_min_time=0.05s``;
4. the same fixed 10 x 0.5 s measured by the native tool in each regime
   (``--backend=native``, whose rows carry each repetition, so the same
   statistics are computed from them; ``--malloc_trim=on`` and ``off`` hand
   it the ``MALLOC_*`` variables), and as it is (glibc's defaults, whose
   regime depends on the heap's layout); and by ireebench with
   ``--malloc_trim=glibc`` (glibc's own thresholds, what ireebench measured
   before the flag).

The rounds alternate them so machine drift hits them alike. It prints,
per variant, the whole-process wall time, the repetitions, the achieved
precision and interval width, and the wall-time ratio against the fixed run
(medians over the rounds); ``--write`` puts the table into
docs/performance.md (between the ``time_to_precision`` markers).

    python benchmarks/time_to_precision.py [--rounds 5] [--device local-sync] [--write]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from compare_native import ROOT, compile_source, machine, run_process, write_section

PERFORMANCE_MD = ROOT / "docs" / "performance.md"
BEGIN, END = "<!-- time_to_precision: begin -->", "<!-- time_to_precision: end -->"
MAX_TIME = "30s"


@dataclass
class Result:
    wall: list[float] = field(default_factory=list)
    repetitions: list[int] = field(default_factory=list)
    precision: list[float] = field(default_factory=list)
    width: list[float] = field(default_factory=list)  # ci_upper - ci_lower, time unit
    median: list[float] = field(default_factory=list)  # the _median row, time unit
    faults: list[float] = field(default_factory=list)  # minor page faults per iteration
    unit: str = ""

    def add(self, wall: float, report: dict, faults: int = 0) -> None:
        aggs = {b["aggregate_name"]: b for b in report["benchmarks"]
                if b["run_type"] == "aggregate"}
        self.wall.append(wall)
        self.repetitions.append(aggs["median"]["repetitions"])
        self.precision.append(aggs["precision"]["real_time"])
        self.width.append(aggs["ci_upper"]["real_time"] - aggs["ci_lower"]["real_time"])
        self.median.append(aggs["median"]["real_time"])
        # The whole process's faults (startup included) per measured iteration:
        # which heap regime the run measured, counted rather than timed.
        iterations = sum(b["iterations"] for b in report["benchmarks"]
                         if b["run_type"] == "iteration")
        self.faults.append(faults / iterations if iterations else float("nan"))
        self.unit = aggs["median"]["time_unit"]


def med(values):
    return statistics.median(values)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--device", default="local-sync")
    parser.add_argument("--write", action="store_true", help=f"write {PERFORMANCE_MD}")
    args = parser.parse_args()

    ours = [sys.executable, "-m", "ireebench"]
    variants = {"fixed 10 x 0.5 s": Result(), "adaptive, 0.5 s repetitions": Result(),
                "adaptive, 0.05 s repetitions": Result()}
    # The fixed run measured otherwise: flags added to the fixed run's.
    others = {"native tool `--malloc_trim=on`, fixed 10 x 0.5 s": ["--backend=native",
                                                                   "--malloc_trim=on"],
              "native tool `--malloc_trim=off`, fixed 10 x 0.5 s": ["--backend=native",
                                                                    "--malloc_trim=off"],
              "native tool as it is, fixed 10 x 0.5 s": ["--backend=native"],
              "ireebench `--malloc_trim=glibc`, fixed 10 x 0.5 s": ["--malloc_trim=glibc"]}
    variants.update({name: Result() for name in others})
    started = datetime.datetime.now().astimezone()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="ireebench-precision-") as scratch:
        module = compile_source((ROOT / "benchmarks" / "mlp.mlir").read_text(),
                                Path(scratch) / "mlp.vmfb")
        base = [*ours, f"--module={module}", f"--device={args.device}",
                "--benchmark_format=json", "--benchmark_statistics=ci,precision"]
        for round_index in range(args.rounds):
            fixed = run_process([*base, "--benchmark_repetitions=10"])
            report = json.loads(fixed.stdout)
            variants["fixed 10 x 0.5 s"].add(fixed.wall, report, fixed.minor_faults)
            target = variants["fixed 10 x 0.5 s"].precision[-1]
            for name, min_time in (("adaptive, 0.5 s repetitions", "0.5s"),
                                   ("adaptive, 0.05 s repetitions", "0.05s")):
                run = run_process([*base, f"--benchmark_min_rel_accuracy={target!r}",
                                   f"--benchmark_max_time={MAX_TIME}",
                                   f"--benchmark_min_time={min_time}"])
                variants[name].add(run.wall, json.loads(run.stdout), run.minor_faults)
            for name, flags in others.items():
                run = run_process([*base, "--benchmark_repetitions=10", *flags])
                variants[name].add(run.wall, json.loads(run.stdout), run.minor_faults)
            print(f"round {round_index + 1}/{args.rounds}: target +-{100 * target:.2f} %, "
                  + ", ".join(f"{name}: {r.wall[-1]:.2f} s, {r.repetitions[-1]} reps, "
                              f"+-{100 * r.precision[-1]:.2f} %"
                              for name, r in variants.items()), file=sys.stderr)
    load_after = os.getloadavg()

    fixed = variants["fixed 10 x 0.5 s"]
    rows = [(f"| run | median ({fixed.unit}) | page faults / iteration | wall (s) | "
             f"wall / fixed | repetitions | achieved precision (±) | interval width "
             f"({fixed.unit}) | reached the fixed run's precision |"),
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, result in variants.items():
        ratios = [w / f for w, f in zip(result.wall, fixed.wall)]
        reached = sum(p <= t * (1 + 1e-9) for p, t in zip(result.precision, fixed.precision))
        rows.append(f"| {name} | {med(result.median):.4g} | {med(result.faults):.0f} | "
                    f"{med(result.wall):.2f} | "
                    f"{med(ratios):.2f} | "
                    f"{med(result.repetitions):g} | {100 * med(result.precision):.2f} % | "
                    f"{med(result.width):.4f} | {reached} of {len(result.wall)} rounds |")
    names = list(variants)
    per_round = ["| round | " + " | ".join(names) + " |", "| --- |" + " --- |" * len(names)]
    for index in range(args.rounds):
        cells = [f"{variants[n].wall[index]:.2f} s, {variants[n].repetitions[index]} reps, "
                 f"±{100 * variants[n].precision[index]:.2f} %" for n in names]
        per_round.append(f"| {index + 1} | " + " | ".join(cells) + " |")
    section = "\n".join([
        f"Run on {started:%Y-%m-%d %H:%M %Z}: {machine()}.",
        (f"Load average {load_before[0]:.2f} before, {load_after[0]:.2f} after. "
        f"`--device={args.device}`, the MLP of `benchmarks/mlp.mlir`, {args.rounds} rounds "
        "alternating the runs; each adaptive run's target "
        "(`--benchmark_min_rel_accuracy`) is the precision the fixed run of its round "
        f"achieved (`--benchmark_max_time={MAX_TIME}`); the last four rows are the fixed "
        "run measured by the native tool (`--backend=native`) in each heap regime and as "
        "it is, and by ireebench under glibc's own thresholds (`--malloc_trim=glibc`); "
        "page faults / "
        "iteration: the whole process's minor faults (startup included) per measured "
        "iteration, the heap regime counted rather than timed. Medians over the "
        "rounds; \"wall / fixed\" is the median of the per-round ratios."),
        "", *rows, "", "Per round (wall, repetitions, achieved precision):", "", *per_round])
    print(section)
    if args.write:
        write_section(BEGIN, END, section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
