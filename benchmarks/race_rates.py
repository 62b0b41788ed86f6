"""Racing under a budget: how often ``rank --race_budget`` finds the exhaustive winner.

Candidates with a known true order: rank_vs_loop.py's memory-bound sum
(tests/fixtures/mlir/rank_sum.mlir), whose work grows from 1.00x to 2.00x in
equal ratios over COUNT candidates (24: 3 % steps; 200: 0.35 %), the
baseline the middle one; their ids are a fresh random permutation each
trial. Each trial runs, as whole processes on the machine as it is:

* **exhaustive**: ``ireebench rank`` with its defaults (each candidate until
  its median is within 2 %, at most 1 s; the top 5 re-ranked paired);
* **race**: ``ireebench rank --race_budget=D/3``, D the exhaustive run's
  device-seconds in the same trial.

Reported: how often the race's top-1 is the exhaustive run's top-1, how
often each is within 1 % of the true best's work (a tie), the top-5 recall
of each against the true top 5, and the device-seconds of each. The issue's
target: the race finds the exhaustive top-1 in >= 95 % of trials for <= 1/3
of its device-seconds. ``--write`` puts the table into docs/performance.md
(between the ``race_rates`` markers).

    python benchmarks/race_rates.py [--count 24] [--trials 10] [--write]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

from compare_native import compile_source, machine, write_section
from rank_vs_loop import INPUT, N0, aligned, order_of, source

BEGIN, END = "<!-- race_rates: begin -->", "<!-- race_rates: end -->"
TIE = 1.01  # within 1 % of the best's work: the same answer


def rank(paths: list[Path], baseline: Path, out: Path, *flags: str) -> dict:
    command = [sys.executable, "-m", "ireebench", "rank", *map(str, paths),
               f"--baseline={baseline}", "--devices=local-sync", "--cpu_workers=2",
               f"--input={INPUT}", "--rank_cache=off", f"--rank_out={out}", *flags]
    proc = subprocess.run(command, capture_output=True, text=True, check=False,
                          env={**os.environ, "IREEBENCH_ENVIRONMENT_WARNINGS": "false"})
    if proc.returncode != 0:
        raise RuntimeError(f"ireebench rank failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return json.loads(out.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=24)
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="race-rates-"))
    work = [aligned(N0 * 2 ** (index / (args.count - 1))) for index in range(args.count)]
    modules = [compile_source(source("sum", w), scratch / f"m{index}.vmfb")
               for index, w in enumerate(work)]
    baseline = modules[args.count // 2]
    ties = {index for index, w in enumerate(work) if w <= work[0] * TIE}
    true_top5 = set(range(5))
    rows = []
    for trial in range(args.trials):
        ids = random.sample(range(10_000), args.count)
        paths = []
        for index, module in enumerate(modules):
            path = scratch / f"t{trial}" / f"c{ids[index]:04d}.vmfb"
            path.parent.mkdir(exist_ok=True)
            path.write_bytes(module.read_bytes())
            paths.append(path)
        random.shuffle(paths)
        index_of = {f"c{ids[index]:04d}": index for index in range(args.count)}
        exhaustive = rank(paths, baseline, scratch / "exhaustive.json")
        spent = exhaustive["device_seconds"]
        raced = rank(paths, baseline, scratch / "race.json", f"--race_budget={spent / 3:.3f}")
        orders = [[index_of[cid] for cid in order_of(each)] for each in (exhaustive, raced)]
        row = {"agree": orders[0][0] == orders[1][0],
               "exhaustive_right": orders[0][0] in ties, "race_right": orders[1][0] in ties,
               "exhaustive_recall": len(true_top5 & set(orders[0][:5])) / 5,
               "race_recall": len(true_top5 & set(orders[1][:5])) / 5,
               "exhaustive_seconds": spent, "race_seconds": raced["device_seconds"],
               "load": os.getloadavg()[0],
               # Where a miss comes from: the first pass (the best not a finalist) or the
               # re-rank (a finalist, ordered below another); the winners' true places.
               "best_finalist": 0 in [index_of[cid] for cid in
                                      (raced.get("rerank") or {}).get("members", [])],
               "winners": [orders[0][0], orders[1][0]]}
        rows.append(row)
        print(json.dumps(row), file=sys.stderr)
    table = summary(rows, args.count)
    print(table)
    if args.write:
        write_section(BEGIN, END, table)


def summary(rows: list[dict], count: int) -> str:
    trials = len(rows)

    def rate(key: str) -> str:
        return f"{sum(row[key] for row in rows)}/{trials}"

    def mean(key: str) -> float:
        return sum(row[key] for row in rows) / trials

    share = mean("race_seconds") / mean("exhaustive_seconds")
    agree = sum(row["agree"] for row in rows) / trials
    met = "met" if agree >= 0.95 and share <= 1 / 3 + 0.02 else "NOT met"
    loads = sorted(row["load"] for row in rows)
    return "\n".join([
        (f"{count} candidates (work 1.00x-2.00x in equal ratios), {trials} trials, "
        f"{datetime.date.today()}, load average {loads[0]:.1f}-{loads[-1]:.1f}; {machine()}"),
        "",
        "| | exhaustive (defaults) | race (`--race_budget` = 1/3 of it) |",
        "| --- | --- | --- |",
        (f"| device-seconds, mean | {mean('exhaustive_seconds'):.1f} | "
        f"{mean('race_seconds'):.1f} ({share:.0%}) |"),
        (f"| top-1 within 1 % of the true best | {rate('exhaustive_right')} | "
        f"{rate('race_right')} |"),
        (f"| top-5 recall, mean | {mean('exhaustive_recall'):.2f} | "
        f"{mean('race_recall'):.2f} |"),
        f"| race's top-1 = exhaustive's top-1 | | {rate('agree')} ({agree:.0%}) |",
        f"| the true best among the race's finalists | | {rate('best_finalist')} |",
        (f"| top-1's true place (1 = best), worst | {max(r['winners'][0] for r in rows) + 1} | "
         f"{max(r['winners'][1] for r in rows) + 1} |"),
        "",
        f"Target (>= 95 % the exhaustive top-1 for <= 1/3 of its device-seconds): **{met}**.",
    ])


if __name__ == "__main__":
    main()
