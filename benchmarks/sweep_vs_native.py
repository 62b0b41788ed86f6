"""One sweep in one ireebench process against a shell loop of the native tool.

The same 8 configurations — the dynamic-batch MLP of
``examples/suites/mlp.mlir`` at batch 1, 2, 4 ... 128 (``--input={bs}x64xf32=0.5``)
— measured three ways, each a whole process (compile excluded):

1. **native loop**: a ``bash`` loop running ``iree-benchmark-module`` once per
   configuration (what teams script today), each with
   ``--benchmark_repetitions=R``, its JSON per configuration;
2. **sweep, fixed**: ``ireebench --sweep bs=1..128:*2`` with the same flags;
3. **sweep, adaptive**: the same sweep with
   ``--benchmark_min_rel_accuracy=P``, ``P`` the precision the native loop of
   the same round achieved (the median over its configurations of the
   95 % interval of the median's half-width relative to the median), with
   shorter repetitions (``--adaptive_min_time``, default 0.01 s).

Rounds rotate the order of the three, so drift over the run falls on all
of them. Per configuration: the median ``real_time`` of each tool (median
over the rounds of the per-round medians), their ratio, and the ratio's
spread over the rounds (its noise); per run: the wall time and its
difference against the native loop, the CPU time (user + system, every
process of the loop), the achieved precision. ``--write``
puts the tables into docs/performance.md (between the ``sweep_vs_native``
markers).

    python benchmarks/sweep_vs_native.py [--rounds 3] [--repetitions 10]
        [--adaptive_min_time 0.01s] [--write]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

from compare_native import ROOT, compile_source, machine, run_process, write_section
from ireebench.lib.statistics import relative_precision
from ireebench.native.tools import BENCHMARK_TOOL, tool_path

BEGIN, END = "<!-- sweep_vs_native: begin -->", "<!-- sweep_vs_native: end -->"
BATCHES = [1, 2, 4, 8, 16, 32, 64, 128]
SWEEP = "bs=1..128:*2"
MIN_TIME = "0.05s"
ADAPTIVE_MIN_TIME = "0.01s"
MAX_TIME = "5s"
CONFIDENCE = 0.95
VARIANTS = ("native loop", "sweep, fixed", "sweep, adaptive")

LOOP = """
set -e
for bs in {batches}; do
  "$TOOL" --module="$MODULE" --device="$DEVICE" --function=forward \\
    --input=${{bs}}x64xf32=0.5 --benchmark_min_time={min_time} \\
    --benchmark_repetitions="$REPETITIONS" --benchmark_format=json > "$OUT/$bs.json"
done
"""


def repetitions_of(rows: list[dict], name: str) -> list[float]:
    """The per-repetition real_time (ms) of one benchmark."""
    return [r["real_time"] for r in rows if r["run_name"] == name and
            r["run_type"] == "iteration" and not r.get("error_occurred")]


def native_name(_: int) -> str:
    return "BM_forward/process_time/real_time"


def sweep_name(bs: int) -> str:
    return f"BM_forward/bs:{bs}/process_time/real_time"


def med(values):
    return statistics.median(values) if values else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repetitions", type=int, default=10)
    parser.add_argument("--device", default="local-sync")
    parser.add_argument("--adaptive_min_time", default=ADAPTIVE_MIN_TIME,
                        help="--benchmark_min_time of the adaptive sweep's repetitions")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()

    # per variant: wall per round; per configuration: per-round median and precision
    wall = {v: [] for v in VARIANTS}
    cpu = {v: [] for v in VARIANTS}  # user + system seconds (the loop's: all its processes)
    medians = {v: {bs: [] for bs in BATCHES} for v in VARIANTS}
    precision = {v: {bs: [] for bs in BATCHES} for v in VARIANTS}
    counts = {bs: [] for bs in BATCHES}  # adaptive repetitions
    targets = []
    started = datetime.datetime.now().astimezone()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="ireebench-sweep-") as scratch:
        scratch = Path(scratch)
        module = compile_source((ROOT / "examples" / "suites" / "mlp.mlir").read_text(),
                                scratch / "mlp.vmfb")
        common = [f"--module={module}", f"--device={args.device}", "--function=forward",
                  "--input={bs}x64xf32=0.5", f"--sweep={SWEEP}", "--benchmark_format=json",
                  "--environment_warnings=false"]
        ours = [sys.executable, "-m", "ireebench", *common]
        loop = LOOP.format(batches=" ".join(map(str, BATCHES)), min_time=MIN_TIME)
        # Python's bytecode cache as an installed ireebench has it (this
        # machine sets PYTHONDONTWRITEBYTECODE): written by a first run.
        pycache = {"PYTHONDONTWRITEBYTECODE": "", "PYTHONPYCACHEPREFIX": str(scratch / "pyc")}
        run_process([*ours, "--benchmark_list_tests"], env=pycache)
        for round_index in range(args.rounds):
            order = VARIANTS[round_index % 3:] + VARIANTS[:round_index % 3]
            target = None
            runs = {}
            # The adaptive run needs the native loop's precision of this round:
            # the native loop runs first whenever the rotation puts it later.
            for variant in order:
                if variant == "sweep, adaptive" and "native loop" not in runs:
                    runs["native loop"] = _native(loop, module, args, scratch, round_index)
                if variant in runs:
                    continue
                if variant == "native loop":
                    runs[variant] = _native(loop, module, args, scratch, round_index)
                elif variant == "sweep, fixed":
                    proc = run_process([*ours, f"--benchmark_min_time={MIN_TIME}",
                                        f"--benchmark_repetitions={args.repetitions}"],
                                       env=pycache)
                    runs[variant] = (proc.wall, proc.cpu, json.loads(proc.stdout)["benchmarks"])
                else:
                    target = med([relative_precision(
                        repetitions_of(runs["native loop"][2][bs], native_name(bs)), CONFIDENCE)
                        for bs in BATCHES])
                    proc = run_process([*ours, f"--benchmark_min_time={args.adaptive_min_time}",
                                        f"--benchmark_min_rel_accuracy={target!r}",
                                        f"--benchmark_max_time={MAX_TIME}"], env=pycache)
                    runs[variant] = (proc.wall, proc.cpu, json.loads(proc.stdout)["benchmarks"])
            targets.append(target)
            for variant in VARIANTS:
                seconds, cpu_seconds, rows = runs[variant]
                wall[variant].append(seconds)
                cpu[variant].append(cpu_seconds)
                for bs in BATCHES:
                    if variant == "native loop":
                        values = repetitions_of(rows[bs], native_name(bs))
                    else:
                        values = repetitions_of(rows, sweep_name(bs))
                    medians[variant][bs].append(med(values))
                    precision[variant][bs].append(relative_precision(values, CONFIDENCE))
                    if variant == "sweep, adaptive":
                        counts[bs].append(len(values))
            print(f"round {round_index + 1}/{args.rounds} ({', '.join(order)}): "
                  + ", ".join(f"{v} {wall[v][-1]:.2f} s" for v in VARIANTS)
                  + f"; target +-{100 * target:.2f} %", file=sys.stderr)
    load_after = os.getloadavg()

    rows = [("| configuration | native (ms) | sweep (ms) | sweep / native | ratio over the rounds "
            "| native precision (±) | sweep precision (±) | adaptive (ms) | adaptive / native "
            "| adaptive repetitions | adaptive precision (±) |"),
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for bs in BATCHES:
        native = medians["native loop"][bs]
        fixed = medians["sweep, fixed"][bs]
        adaptive = medians["sweep, adaptive"][bs]
        ratios = [f / n for f, n in zip(fixed, native)]
        adaptive_ratios = [a / n for a, n in zip(adaptive, native)]
        rows.append(
            f"| bs={bs} | {med(native):.4g} | {med(fixed):.4g} | {med(ratios):.2f} | "
            f"{min(ratios):.2f}-{max(ratios):.2f} | "
            f"{100 * med(precision['native loop'][bs]):.1f} % | "
            f"{100 * med(precision['sweep, fixed'][bs]):.1f} % | {med(adaptive):.4g} | "
            f"{med(adaptive_ratios):.2f} | {med(counts[bs]):g} | "
            f"{100 * med(precision['sweep, adaptive'][bs]):.1f} % |")
    native_wall = wall["native loop"]
    walls = [("| run | wall (s) | minus the native loop's (s) | over the native loop's | "
              "per round (s) | CPU (s) | CPU minus the native loop's (s) |"),
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for variant in VARIANTS:
        deltas = [w - n for w, n in zip(wall[variant], native_wall)]
        ratios = [w / n for w, n in zip(wall[variant], native_wall)]
        cpu_deltas = [c - n for c, n in zip(cpu[variant], cpu["native loop"])]
        walls.append(f"| {variant} | {med(wall[variant]):.2f} | {med(deltas):+.2f} | "
                     f"{med(ratios):.2f} | {', '.join(f'{w:.2f}' for w in wall[variant])} | "
                     f"{med(cpu[variant]):.2f} | {med(cpu_deltas):+.2f} |")
    reached = sum(p is not None and p <= t * (1 + 1e-9)
                  for bs in BATCHES
                  for p, t in zip(precision["sweep, adaptive"][bs], targets))
    section = "\n".join([
        f"Run on {started:%Y-%m-%d %H:%M %Z}: {machine()}.",
        (f"Load average {load_before[0]:.2f} before, {load_after[0]:.2f} after. "
         f"`--device={args.device}`, `examples/suites/mlp.mlir` at bs = "
         f"{', '.join(map(str, BATCHES))}; native loop and fixed sweep: "
         f"`--benchmark_min_time={MIN_TIME} --benchmark_repetitions={args.repetitions}`; "
         f"adaptive sweep: `--benchmark_min_time={args.adaptive_min_time} "
         f"--benchmark_min_rel_accuracy=P --benchmark_max_time={MAX_TIME}` with P the native "
         f"loop's median precision of the same round (targets: "
         f"{', '.join(f'±{100 * t:.1f} %' for t in targets)}; reached by {reached} of "
         f"{len(BATCHES) * args.rounds} point-rounds). {args.rounds} rounds rotating the "
         "order; medians over the rounds. Precision: the half-width of the 95 % interval "
         "of the median, relative to it."),
        "", *rows, "", *walls])
    print(section)
    if args.write:
        write_section(BEGIN, END, section)
    return 0


def _native(loop: str, module: Path, args, scratch: Path, round_index: int):
    """The shell loop of the native tool: its wall time and each configuration's rows."""
    out = scratch / f"native-{round_index}"
    out.mkdir()
    env = {"TOOL": str(tool_path(BENCHMARK_TOOL)), "MODULE": str(module),
           "DEVICE": args.device, "REPETITIONS": str(args.repetitions), "OUT": str(out)}
    proc = run_process(["bash", "-c", loop], env=env)
    rows = {bs: json.loads((out / f"{bs}.json").read_text())["benchmarks"] for bs in BATCHES}
    return proc.wall, proc.cpu, rows


if __name__ == "__main__":
    sys.exit(main())
