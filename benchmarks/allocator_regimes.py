"""The heap regimes, measured: the native tool and ireebench under each ``--malloc_trim``.

On the MLP of benchmarks/mlp_128k.mlir (batch 32, 384 -> 1024 -> 384: 128 KiB
activations, about 3 MiB of transient buffers per call), compiled for this
host, each round runs, as whole processes and in this order (so the pairs
that measure the same regime run side by side):

1. the native iree-benchmark-module as it is (glibc's defaults: the freed
   heap is trimmed, every iteration faults it back in), then ireebench
   ``--malloc_trim=on`` (the same regime in process);
2. the native tool with ``MALLOC_TRIM_THRESHOLD_=1000000000
   MALLOC_TOP_PAD_=16777216`` (trimming off), then ireebench's default
   (``--malloc_trim=off``);
3. the native tool with IREE's caching allocator (``--device_allocator=caching``:
   freed buffers kept for reuse, the way a long-running deployment keeps them);
4. the native tool as in 1., naming the function (``--function=mlp``, which
   changes nothing but what sits on its heap);
5. ireebench ``--malloc_trim=glibc`` (glibc's own thresholds, untouched: what
   ireebench did before the flag).

Each run is ``--device=local-sync --benchmark_repetitions=10
--benchmark_min_time=0.2s``. Per run: the repetitions' range (with the
groups the multimodality check finds, ``2 of 10 at ...``), max/min, cv and
the CPU share (CPU time / real time: under 1 where other processes took the
CPU); per round, the ratio of each pair; and the acceptance bound of
``--malloc_trim``'s default (every run's max/min <= 1.2, in the runs where
the process had at least 90 % of the CPU), which is a timing bound and so
lives here, not in the tests (tests/builtin_plugins/test_allocator.py counts
the page faults of the regime instead). ``--write`` puts the tables into
docs/performance.md (between the ``allocator_regimes`` markers).

    python benchmarks/allocator_regimes.py [--rounds 3] [--write]

Needs iree-base-compiler (pip install ".[compiler]").
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

from compare_native import CPU_FLAGS, ROOT, compile_source, machine, run_process, write_section
from ireebench.plugins.modality import repetition_groups

PERFORMANCE_MD = ROOT / "docs" / "performance.md"
BEGIN, END = "<!-- allocator_regimes: begin -->", "<!-- allocator_regimes: end -->"
NO_TRIM = {"MALLOC_TRIM_THRESHOLD_": "1000000000", "MALLOC_TOP_PAD_": "16777216"}
# The default's acceptance bound: max/min of one run's repetitions, in runs
# where the process had the CPU (CPU share of every repetition at least ON_CPU).
ACCEPTED_SPREAD = 1.2
ON_CPU = 0.9


@dataclass
class Variant:
    label: str
    ireebench_flags: list[str] | None  # None: the native tool
    env: dict = field(default_factory=dict)
    native_flags: list[str] = field(default_factory=list)
    runs: list[list[tuple[float, float]]] = field(default_factory=list)  # (real, cpu) ms
    faults: list[float] = field(default_factory=list)  # per measured iteration, per run


def variants() -> list[Variant]:
    return [
        Variant("native tool, default (glibc's defaults)", None),
        Variant("ireebench `--malloc_trim=on`", ["--malloc_trim=on"]),
        Variant("native tool, `MALLOC_TRIM_THRESHOLD_=1000000000 MALLOC_TOP_PAD_=16777216`",
                None, NO_TRIM),
        Variant("ireebench, default (`--malloc_trim=off`)", []),
        Variant("native tool, `--device_allocator=caching`", None,
                native_flags=["--device_allocator=caching"]),
        Variant("native tool, default, with `--function=mlp`", None,
                native_flags=["--function=mlp"]),
        Variant("ireebench `--malloc_trim=glibc` (before the flag)", ["--malloc_trim=glibc"]),
    ]


def cell(times: list[float]) -> str:
    """``1.49-1.60``, or the groups: ``1.49-1.60, 2 of 10 at 2.97-3.21``."""
    groups = repetition_groups(times)
    largest = max(groups, key=len)
    text = f"{min(largest):.2f}–{max(largest):.2f}"
    for group in groups:
        if group is not largest:
            text += f", {len(group)} of {len(times)} at {min(group):.2f}–{max(group):.2f}"
    return text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--min_time", default="0.2s")
    parser.add_argument("--repetitions", type=int, default=10)
    parser.add_argument("--write", action="store_true", help=f"write {PERFORMANCE_MD}")
    args = parser.parse_args()

    from iree.runtime.benchmark import benchmark_exe

    native = str(Path(benchmark_exe()).resolve())
    ours = [sys.executable, "-m", "ireebench"]
    started = datetime.datetime.now().astimezone()
    load_before = os.getloadavg()
    runs = variants()
    with tempfile.TemporaryDirectory(prefix="ireebench-regimes-") as scratch:
        module = compile_source((ROOT / "benchmarks" / "mlp_128k.mlir").read_text(),
                                Path(scratch) / "mlp_128k.vmfb")
        flags = [f"--module={module}", "--device=local-sync", "--benchmark_format=json",
                 f"--benchmark_min_time={args.min_time}",
                 f"--benchmark_repetitions={args.repetitions}"]
        for round_index in range(args.rounds):
            for variant in runs:
                command = ([native, *flags, *variant.native_flags]
                           if variant.ireebench_flags is None
                           else [*ours, *flags, *variant.ireebench_flags])
                process = run_process(command, variant.env)
                rows = [row for row in json.loads(process.stdout)["benchmarks"]
                        if row["run_type"] == "iteration"]
                variant.runs.append([(row["real_time"], row["cpu_time"]) for row in rows])
                variant.faults.append(process.minor_faults / sum(r["iterations"] for r in rows))
            print(f"round {round_index + 1}/{args.rounds} done", file=sys.stderr)
    load_after = os.getloadavg()

    def table(index: int) -> list[str]:
        header = ["tool", *[f"run {i + 1} (ms)" for i in range(args.rounds)],
                  "max/min per run", "cv per run"]
        rows = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
        for variant in runs:
            times = [[pair[index] for pair in run] for run in variant.runs]
            spreads = ", ".join(f"{max(t) / min(t):.2f}" for t in times)
            cvs = ", ".join(f"{100 * statistics.stdev(t) / statistics.mean(t):.1f} %"
                            for t in times)
            rows.append(f"| {variant.label} | " + " | ".join(cell(t) for t in times)
                        + f" | {spreads} | {cvs} |")
        return rows

    regime = ["| tool | page faults per iteration (per run) | CPU share |", "| --- | --- | --- |"]
    for variant in runs:
        shares = [cpu / real for run in variant.runs for real, cpu in run]
        regime.append(f"| {variant.label} | " + ", ".join(f"{f:.0f}" for f in variant.faults)
                      + f" | {min(shares):.2f}–{max(shares):.2f} |")
    pairs = [("trimming on: ireebench `on` / native, default", runs[1], runs[0]),
             ("trimming off: ireebench default / native with the variables", runs[3], runs[2]),
             ("ireebench default / native with the caching allocator", runs[3], runs[4])]
    ratio_rows = ["| pair | " + " | ".join(f"round {i + 1}" for i in range(args.rounds))
                  + " | median | median of the CPU-time ratios |",
                  "| --- |" + " --- |" * (args.rounds + 2)]
    for label, ours_variant, theirs in pairs:
        ratios = [statistics.median(r for r, _ in a) / statistics.median(r for r, _ in b)
                  for a, b in zip(ours_variant.runs, theirs.runs)]
        cpu = [statistics.median(c for _, c in a) / statistics.median(c for _, c in b)
               for a, b in zip(ours_variant.runs, theirs.runs)]
        ratio_rows.append(f"| {label} | " + " | ".join(f"{r:.2f}" for r in ratios)
                          + f" | {statistics.median(ratios):.2f} | "
                          f"{statistics.median(cpu):.2f} |")
    default = runs[3]
    verdicts = []
    for index, run in enumerate(default.runs):
        real = [r for r, _ in run]
        share = min(c / r for r, c in run)
        spread = max(real) / min(real)
        verdict = ("not judged: the process had under " f"{ON_CPU:.0%} of the CPU"
                   if share < ON_CPU else
                   "met" if spread <= ACCEPTED_SPREAD else "MISSED")
        verdicts.append(f"run {index + 1}: max/min {spread:.2f} at CPU share {share:.2f}: "
                        f"{verdict}")
    acceptance = (f"Acceptance of the default (max/min <= {ACCEPTED_SPREAD} in every run "
                  f"that had the CPU): " + "; ".join(verdicts) + ".")
    section = "\n".join([
        (f"Measured on {started:%Y-%m-%d %H:%M %Z}: {machine()}; load average "
        f"{load_before[0]:.2f} before, {load_after[0]:.2f} after. "
        f"`benchmarks/allocator_regimes.py`: benchmarks/mlp_128k.mlir "
        f"({' '.join(CPU_FLAGS[-1:])}), `--device=local-sync "
        f"--benchmark_repetitions={args.repetitions} --benchmark_min_time={args.min_time}`, "
        f"{args.rounds} rounds, the tools alternating; \"2 of 10 at ...\" is a second group "
        "of repetitions as the multimodality check finds it; CPU share is CPU time / real "
        "time of the repetitions (under 1 where other processes took the CPU: then the "
        "real times measure the load as much as the tools)."),
        "", "Real time of the repetitions (what both tools report):", "", *table(0), "",
        ("CPU time of the same repetitions (page faults are the kernel's time, counted here; "
        "other processes taking the CPU are not):"), "", *table(1), "",
        ("The regime of each run, counted rather than timed: minor page faults of the whole "
        "process (startup and calibration included) per measured iteration; and the CPU "
        "share:"), "", *regime, "",
        "Ratio of the median repetitions (real time), pair by pair (same regime):", "",
        *ratio_rows, "", acceptance])
    print(section)
    if args.write:
        write_section(BEGIN, END, section, PERFORMANCE_MD)
    return 0


if __name__ == "__main__":
    sys.exit(main())
