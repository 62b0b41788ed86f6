"""A CI workflow re-created (issue 37): main's stored runs, then 12 pull requests,
6 that change nothing and 6 that slow one model down. How many exits are right?

Modelled on iree-test-suites' benchmark job: 4 models x 2 flag sets on 2
devices. Here a "model" is a function of one compiled module (its work set by
a loop's trip count), a flag set one of two variants of it (a different trip
count), and the devices are ``local-sync`` and ``local-task``: one run is a
sweep of 8 functions x 2 devices = 16 benchmarks, measured as a CI job would
(a fresh process, ``--benchmark_repetitions=10``).

* **main**: the base module is run ``--main`` (3) times with
  ``--benchmark_save``;
* **pull requests**, in a random order: 6 of the base module again (noise
  only) and 6 of a build where one model (both its variants, both devices)
  does ``--slowdown`` (1.25) times the work, a different model each time
  (round robin). Each PR is judged by

  - ``gate``: ``ireebench compare stored:history pr.json --threshold=5%``
    (every PR against main's runs: PRs are not saved);
  - ``paired``: ``ireebench compare base.vmfb pr.vmfb`` with the same sweep
    (the paired A/B recipe: both builds measured in the PR's job),
    ``--threshold=5%``;
  - ``golden``: what IREE's CI does, a golden time per benchmark (main's
    median) times 1.1: a PR fails when any benchmark's median is above it.

A PR is right when a noise-only PR exits 0 and a slowed one exits 1.

    python benchmarks/ci_workflow.py [--busy] [--write]

``--busy`` adds one busy process per CPU beside every run. ``--write`` puts
the table into docs/compare.md (between the ``ci_workflow`` markers).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import io
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import ireebench
from compare_native import ROOT, compile_source, machine, write_section
from noise_trial import busy, run_env

COMPARE_MD = ROOT / "docs" / "compare.md"
BEGIN, END = "<!-- ci_workflow: begin -->", "<!-- ci_workflow: end -->"
MODELS = 4
TRIPS = [(60, 75), (90, 110), (120, 150), (160, 200)]  # each model's two flag sets
FUNCTION = """
  func.func @m{model}v{variant}(%x: tensor<64xf32>) -> tensor<64xf32> {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.constant {trips} : index
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> tensor<64xf32> {{
      %e = tensor.empty() : tensor<64xf32>
      %y = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>,
                                            affine_map<(d0) -> (d0)>],
                           iterator_types = ["parallel"]}}
          ins(%acc : tensor<64xf32>) outs(%e : tensor<64xf32>) {{
      ^bb0(%a: f32, %o: f32):
        %s = math.sin %a : f32
        linalg.yield %s : f32
      }} -> tensor<64xf32>
      scf.yield %y : tensor<64xf32>
    }}
    return %r : tensor<64xf32>
  }}
"""
FUNCTIONS = [f"m{model}v{variant}" for model in range(MODELS) for variant in (0, 1)]
SWEEP = ["--input=64xf32=1", "--sweep", "function=" + ",".join(FUNCTIONS),
         "--sweep", "device=local-sync,local-task"]
MEASURE = ["--benchmark_repetitions=10", "--benchmark_min_time=10x"]
THRESHOLD = "--threshold=5%"


def source(slow_model: int | None, slowdown: float) -> str:
    functions = "".join(
        FUNCTION.format(model=model, variant=variant,
                        trips=round(TRIPS[model][variant] * (slowdown if model == slow_model
                                                             else 1.0)))
        for model in range(MODELS) for variant in (0, 1))
    return f"module {{{functions}}}\n"


def measure(module: Path, out: Path, storage: str | None) -> None:
    command = [sys.executable, "-m", "ireebench", f"--module={module}", *SWEEP, *MEASURE,
               f"--benchmark_out={out}", "--benchmark_format=json"]
    if storage:
        command += ["--benchmark_save", f"--benchmark_storage={storage}"]
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, env=run_env(), timeout=900, check=False)
    if done.returncode != 0:
        raise SystemExit(f"ci_workflow: the run failed ({done.returncode}): {done.stderr}")


def gate(new: Path, storage: str) -> int:
    with contextlib.redirect_stderr(io.StringIO()):
        return ireebench.run(["compare", "stored:history", str(new), THRESHOLD,
                              f"--benchmark_storage={storage}"], stdout=io.StringIO()).exit_code


def paired(base: Path, head: Path) -> tuple[int, float]:
    command = [sys.executable, "-m", "ireebench", "compare", str(base), str(head), *SWEEP,
               THRESHOLD]
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, env=run_env(), timeout=900,
                          check=False)
    if done.returncode not in (0, 1, 4):
        print(f"ci_workflow: paired: {done.returncode}: {done.stderr.strip()[:300]}",
              file=sys.stderr)
    return done.returncode, time.monotonic() - started


def medians(report: Path) -> dict[str, float]:
    """Benchmark name -> median real time of its repetitions (the golden-time check)."""
    rows = json.loads(report.read_text())["benchmarks"]
    found: dict[str, list[float]] = {}
    for row in rows:
        if row.get("run_type") == "iteration" and "real_time" in row:
            found.setdefault(row["run_name"], []).append(row["real_time"])
    return {name: statistics.median(values) for name, values in found.items()}


def golden(goldens: dict[str, float], new: Path) -> int:
    return int(any(value > 1.1 * goldens[name] for name, value in medians(new).items()
                   if name in goldens))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--main", type=int, default=3)
    parser.add_argument("--prs", type=int, default=12)
    parser.add_argument("--slowdown", type=float, default=1.25)
    parser.add_argument("--busy", action="store_true")
    parser.add_argument("--no_paired", action="store_true")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    started, load_before, clock = datetime.datetime.now(datetime.UTC), os.getloadavg(), \
        time.monotonic()
    results = {"gate": [], "paired": [], "golden": []}
    walls = {"pr job, gate": [], "pr job, paired": []}
    with tempfile.TemporaryDirectory(prefix="ci_workflow-") as scratch, busy(args.busy):
        directory = Path(scratch)
        base = compile_source(source(None, 1.0), directory / "base.vmfb")
        storage = f"sqlite:///{directory / 'main.sqlite'}"
        main_runs = [directory / f"main{index}.json" for index in range(args.main)]
        for run in main_runs:
            measure(base, run, storage)
        goldens = medians(main_runs[0])
        prs = ["noise"] * (args.prs // 2) + ["slow"] * (args.prs - args.prs // 2)
        random.shuffle(prs)
        slowed = 0
        for number, kind in enumerate(prs):
            if kind == "noise":
                head = directory / f"pr{number}.vmfb"
                head.write_bytes(base.read_bytes())
            else:
                head = compile_source(source(slowed % MODELS, args.slowdown),
                                      directory / f"pr{number}.vmfb")
                slowed += 1
            want = 0 if kind == "noise" else 1
            clock_pr = time.monotonic()
            new = directory / f"pr{number}.json"
            measure(head, new, None)
            status = gate(new, storage)
            walls["pr job, gate"].append(time.monotonic() - clock_pr)
            results["gate"].append((kind, status, status == want))
            results["golden"].append((kind, golden(goldens, new), golden(goldens, new) == want))
            if not args.no_paired:
                status, wall = paired(base, head)
                walls["pr job, paired"].append(wall)
                results["paired"].append((kind, status, status == want))
            print(f"PR {number + 1}/{len(prs)} ({kind}): gate {results['gate'][-1][1]}"
                  + (f", paired {results['paired'][-1][1]}" if not args.no_paired else "")
                  + f", golden {results['golden'][-1][1]}", file=sys.stderr)
    lines = [("| judged by | right of 12 | noise-only PRs: exits | slowed PRs: exits | "
             "PR job wall |"), "| --- | --- | --- | --- | --- |"]
    for how, outcomes in results.items():
        if not outcomes:
            continue
        good = sum(1 for *_, ok in outcomes if ok)
        noise = sorted(status for kind, status, _ in outcomes if kind == "noise")
        slow = sorted(status for kind, status, _ in outcomes if kind == "slow")
        key = f"pr job, {how}"
        wall = f"{statistics.median(walls[key]):.1f} s" if walls.get(key) else "-"
        lines.append(f"| {how} | {good} | {' '.join(map(str, noise))} | "
                     f"{' '.join(map(str, slow))} | {wall} |")
    minutes = (time.monotonic() - clock) / 60
    lines += ["", (f"Measured on {started:%Y-%m-%d %H:%M} UTC: {machine()}; load average "
                   f"{load_before[0]:.2f} before, {os.getloadavg()[0]:.2f} after"
                   f"{', one busy process per CPU beside every run' if args.busy else ''}; "
                   f"{minutes:.1f} minutes. `benchmarks/ci_workflow.py"
                   f"{' --busy' if args.busy else ''}`: {args.main} main runs stored, "
                   f"{args.prs} PRs (half noise-only, half with one model x{args.slowdown:g}), "
                   "8 functions x 2 devices a run, 10 repetitions; the gate and the paired "
                   "A/B at --threshold=5%, golden times x 1.1 on real time.")]
    section = "\n".join(lines)
    print(section)
    if args.write:
        write_section(BEGIN, END, section, COMPARE_MD)
    return 0


if __name__ == "__main__":
    sys.exit(main())
