"""The paired A/B comparison's outcomes on real runs: ``ireebench compare A.vmfb B.vmfb``.

What a pull request's CI job does, end to end, through the real CLI (one
``python -m ireebench compare`` process a trial, so the wall time includes
its start): the base module A, one function of ``trips`` loop trips of the
``gate_rates`` kernel (about 0.3 ms a call on local-sync), against

* **same file**: A itself (identical bytes: the run measures it once, so the
  answer is exact; the control);
* **same work**: A' = A's function plus an unused exported one: other bytes,
  the same work (the noise-only case: an exit 1 here is a false alarm);
* **x1.03** and **x1.10**: the loop trips times 1.03 and 1.10 (the work).

Each trial runs compare at its defaults (30 rounds, ``--benchmark_min_time=
0.05s`` a repetition, ``--device=local-sync``, so cpu_time; ``--threshold``
0 %, alpha 0.05, ``--detectable=10%``) and counts its exit status: 0 pass,
1 regression, 4 cannot judge. The same trial is also read as it would be
judged with ``--threshold=5%`` (from its JSON: a significant slowdown of at
most 5 % passes), which needs no second measurement.

    python benchmarks/paired_rates.py [--trials 30] [--cases same-file,same-work,x1.03,x1.10]
        [--flags=--malloc_trim=off]

On the shared 2-core machine the project is developed on, a trial takes
about 5 s: 30 trials of the four cases, about 10 minutes.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from compare_native import compile_source, machine
from gate_rates import KERNEL

TRIPS = 100
UNUSED = """
  func.func @unused(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
"""
CASES = {"same-file": (1.0, False), "same-work": (1.0, True), "x1.03": (1.03, False),
         "x1.10": (1.10, False)}
RUN = ["--device=local-sync", "--function=f0", "--input=64xf32=1"]
OUTCOMES = (0, 1, 4)


def module_source(scale: float, unused: bool = False) -> str:
    kernel = KERNEL.format(index=0, trips=round(TRIPS * scale))
    return f"module {{{kernel}{UNUSED if unused else ''}}}\n"


def trial(base: Path, other: Path, flags: list[str]) -> tuple[int, int, float, dict]:
    """(exit status, the exit with --threshold=5%, wall seconds, the benchmark's JSON)."""
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "ireebench", "compare", str(base), str(other),
                           *RUN, *flags, "--reporter=json"], capture_output=True, text=True,
                          timeout=600, check=False)
    wall = time.monotonic() - start
    if done.returncode not in OUTCOMES:
        raise SystemExit(f"paired_rates: compare failed ({done.returncode}): {done.stderr}")
    benchmark = json.loads(done.stdout)["benchmarks"][0]
    status = done.returncode
    if status == 1 and (benchmark["change"] or 0) <= 0.05:
        status = 0  # slower, but within 5 %
    return done.returncode, status, wall, benchmark


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=30, help="trials per case (30)")
    parser.add_argument("--cases", default=",".join(CASES), help="which cases (all)")
    parser.add_argument("--flags", default="", help="more flags of compare, space-separated: "
                                                    "--flags=--malloc_trim=off")
    args = parser.parse_args()
    flags = args.flags.split()
    chosen = [name.strip() for name in args.cases.split(",") if name.strip()]
    started, load_before, clock = (datetime.datetime.now(datetime.UTC), os.getloadavg(),
                                   time.monotonic())
    rows = []
    with tempfile.TemporaryDirectory(prefix="paired_rates-") as scratch:
        directory = Path(scratch)
        base = compile_source(module_source(1.0), directory / "a.vmfb")
        for name in chosen:
            scale, unused = CASES[name]
            other = base if name == "same-file" else compile_source(
                module_source(scale, unused), directory / f"{name}.vmfb")
            counts = {0: 0, 1: 0, 4: 0}
            counts5 = {0: 0, 1: 0, 4: 0}
            walls, changes = [], []
            for index in range(args.trials):
                status, status5, wall, benchmark = trial(base, other, flags)
                counts[status] += 1
                counts5[status5] += 1
                walls.append(wall)
                if benchmark["change"] is not None:
                    changes.append(benchmark["change"])
                print(f"{name}: trial {index + 1}/{args.trials}: exit {status}, "
                      f"{wall:.1f} s, change {benchmark['change']}", file=sys.stderr)
            rows.append((name, args.trials, counts, counts5, walls, changes))
    print("| case | trials | exit 0 | exit 1 | exit 4 | exit 0/1/4 at --threshold=5% | "
          "median change [min, max] | wall s/trial median [max] |")
    print("| --- |" + " --- |" * 7)
    for name, trials, counts, counts5, walls, changes in rows:
        shares = " | ".join(f"{100 * counts[code] / trials:.0f} %" for code in OUTCOMES)
        at5 = "/".join(f"{100 * counts5[code] / trials:.0f}" for code in OUTCOMES) + " %"
        change = (f"{statistics.median(changes) * 100:+.2f} % [{min(changes) * 100:+.2f}, "
                  f"{max(changes) * 100:+.2f}]") if changes else "-"
        print(f"| {name} | {trials} | {shares} | {at5} | {change} | "
              f"{statistics.median(walls):.1f} [{max(walls):.1f}] |")
    print(f"\nMeasured on {started:%Y-%m-%d %H:%M} UTC: {machine()}; load average "
          f"{load_before[0]:.2f} before, {os.getloadavg()[0]:.2f} after; "
          f"{(time.monotonic() - clock) / 60:.1f} minutes; flags: {' '.join(flags) or 'none'}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
