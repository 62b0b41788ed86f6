"""Ranking 24 candidates: ``ireebench rank`` against a libtuner-style loop.

The candidates are one memory-bound function (the i32 sum of the first N of
its 2M inputs, 4-8 MiB read per call) whose work steps by 3 % from one to
the next (N = 1M * 1.03^i, i = 0..23, in multiples of 64: a known true
order), plus a baseline (N = 1M * 1.03^11.5), compiled once. Candidate ids are a random permutation
(neither method can learn the order from names or queue positions). Two CPU
"devices": workers pinned to CPU 0 and CPU 1, ``local-sync``.

* **loop**: what sharktuner's libtuner does (``libtuner.benchmark``): the
  baseline on each device before and after (``benchmark_baseline``, in the
  main process), a ``multiprocessing.Pool`` of one worker per device
  (``init_worker_context``; here each pinned to its CPU, the analogue of a
  GPU per worker), each candidate one ``iree.runtime.benchmark_module``
  call (a native ``iree-benchmark-module`` process, default flags: one
  repetition) with the timeout 1.2 x the slowest baseline subprocess, its
  time the mean of its ``real_time`` rows parsed from ``"0.036 ms"``, the
  ranking by the time over the device's average baseline.
* **ireebench**: ``ireebench rank CANDIDATES --baseline=B --devices=local-sync
  --cpu_workers=2`` with its defaults (adaptive repetitions to +-2 %, the
  baseline every 8 candidates, the top 5 re-ranked paired over 10 rounds),
  a whole process.

Two rounds each, alternating (loop, ireebench, loop, ireebench). Reported:
the wall time of each, Kendall's tau between the two rounds of each method,
and against the true order; then ireebench with a never-ending and a
crashing candidate among 6 (when the never-ending one was stopped against
its timeout; the crash's state), and a rerun of the second round with its
cache (the device time it spent). The load average is printed with each
run: the numbers mean little on a loaded machine. ``--write`` puts the
tables into docs/performance.md (between the ``rank_vs_loop`` markers).

    python benchmarks/rank_vs_loop.py [--write]
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import multiprocessing
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import iree.runtime as ireert
from compare_native import ROOT, compile_source, machine, write_section
from ireebench.plugins.rank.ordering import kendall_tau

BEGIN, END = "<!-- rank_vs_loop: begin -->", "<!-- rank_vs_loop: end -->"
N0 = 1 << 20
M = 2 * N0
STEP = 1.03
COUNT = 24
INPUT = f"{M}xi32=0"
DEVICES = ["local-sync", "local-sync"]  # one "device" per CPU, as libtuner's --devices
CPUS = [0, 1]
TIMEOUT_MUL = 1.2  # libtuner's DEFAULT_TIMEOUT_MUL
MLIR = ROOT / "tests" / "fixtures" / "mlir"


def aligned(work: float) -> int:
    """``work`` rounded to a multiple of 64: a sum whose length is not a multiple
    of the vector width (16 i32 with AVX-512) takes a path about 1.7x slower,
    which would make the order of the work not the order of the time (both
    rankers found those candidates out of order, consistently, in a first series)."""
    return 64 * round(work / 64)


def source(name: str, work: int = 0) -> str:
    """A ranking candidate of the tests' fixtures (tests/fixtures/mlir/rank_NAME.mlir)."""
    text = (MLIR / f"rank_{name}.mlir").read_text()
    return text.replace("INPUTS", str(M)).replace("WORK", str(work)).replace("EXTRA", "0")



# --- the libtuner-style loop (sharktuner/libtuner.py's benchmark(), faithfully) ----------

_device_id = None


def _init_worker(contexts) -> None:
    """libtuner's init_worker_context: a worker ordinal and its device (and CPU)."""
    global _device_id
    worker_id, _device_id = contexts.get()
    os.sched_setaffinity(0, {CPUS[worker_id]})


def _benchmark_one(pack):
    """libtuner's run_iree_benchmark_module_command: one native process, one sample."""
    candidate_id, path, timeout = pack
    vm_module = ireert.VmModule.copy_buffer(ireert.VmInstance(), Path(path).read_bytes())
    try:
        results = ireert.benchmark.benchmark_module(vm_module, entry_function="main",
                                                    inputs=[INPUT], device=_device_id,
                                                    timeout=timeout)
    except ireert.benchmark.BenchmarkTimeoutError:
        return candidate_id, math.inf, _device_id
    except ireert.benchmark.BenchmarkToolError:
        return candidate_id, math.inf, _device_id
    times = []
    for result in results:
        if result.benchmark_name.split("/")[-1] == "real_time":
            value, unit = result.time.split(" ")
            times.append(float(value) * {"s": 1e6, "ms": 1e3, "us": 1, "ns": 1e-3}[unit])
    if not times:
        return candidate_id, math.inf, _device_id
    return candidate_id, sum(times) / len(times), _device_id


def _baselines(path: Path) -> tuple[list[float], float]:
    """libtuner's benchmark_baseline: each device in turn, in this process."""
    global _device_id
    times, walls = [], []
    for index, device in enumerate(DEVICES):
        _device_id = device
        previous = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {CPUS[index]})
        start = time.perf_counter()
        times.append(_benchmark_one(("baseline", str(path), None))[1])
        walls.append(time.perf_counter() - start)
        os.sched_setaffinity(0, previous)
    return times, max(walls) * TIMEOUT_MUL


def libtuner_loop(candidates: dict[str, Path], baseline: Path) -> tuple[list[str], float]:
    """The ranking (best first) and the wall time of the benchmark phase."""
    start = time.monotonic()
    before, timeout = _baselines(baseline)
    manager = multiprocessing.Manager()
    contexts = manager.Queue()
    for worker_id, device in enumerate(DEVICES):
        contexts.put((worker_id, device))
    packs = [(cid, str(path), timeout) for cid, path in candidates.items()]
    with multiprocessing.Pool(len(DEVICES), _init_worker, (contexts,)) as pool:
        results = list(pool.imap_unordered(_benchmark_one, packs))
    after, _ = _baselines(baseline)
    wall = time.monotonic() - start
    manager.shutdown()
    # BaselineResultHandler: per device the average of the valid baselines; the
    # devices here share one id, as two pool workers on one kind of device do.
    valid = [t for t in before + after if math.isfinite(t)]
    average = sum(valid) / len(valid)
    ranked = sorted((time_us / average, cid) for cid, time_us, _ in results)
    return [cid for _, cid in ranked], wall


# --- ireebench rank --------------------------------------------------------------------


def ireebench_rank(paths: list[Path], baseline: Path, out: Path, *flags: str) -> tuple[dict, float]:
    command = [sys.executable, "-m", "ireebench", "rank", *map(str, paths),
               f"--baseline={baseline}", "--devices=local-sync", "--cpu_sets=0:1", f"--input={INPUT}", f"--rank_out={out}", *flags]
    start = time.monotonic()
    proc = subprocess.run(command, capture_output=True, text=True, check=False,
                          env={**os.environ, "IREEBENCH_ENVIRONMENT_WARNINGS": "false"})
    wall = time.monotonic() - start
    if proc.returncode != 0:
        raise RuntimeError(f"ireebench rank failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return json.loads(out.read_text()), wall


def order_of(ranking: dict) -> list[str]:
    ranked = [c for c in ranking["candidates"] if c["rank"] is not None]
    return [c["id"] for c in sorted(ranked, key=lambda c: c["rank"])]


def load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="update docs/performance.md")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="rank-vs-loop-"))
    works = [aligned(N0 * STEP ** i) for i in range(COUNT)]
    ids = [f"c{i:02d}" for i in range(COUNT)]
    random.Random(29).shuffle(ids)  # ids[i] is the candidate of work works[i]
    truth = list(ids)  # the true order, fastest first
    print(f"compiling {COUNT + 3} modules ...", file=sys.stderr)
    candidates = {cid: compile_source(source("sum", n), scratch / f"{cid}.vmfb")
                  for cid, n in zip(ids, works)}
    baseline = compile_source(source("sum", aligned(N0 * STEP ** 11.5)),
                              scratch / "baseline.vmfb")
    hang = compile_source(source("hang"), scratch / "hang.vmfb")
    crash = compile_source(source("crash"), scratch / "crash.vmfb")
    paths = [candidates[cid] for cid in sorted(candidates)]
    loads, loop_orders, loop_walls, rank_orders, rank_walls, rankings = [], [], [], [], [], []
    cpu_orders, cpu_walls = [], []
    cache = scratch / "cache.jsonl"
    for round_index in range(2):
        loads.append(load())
        order, wall = libtuner_loop({cid: candidates[cid] for cid in sorted(candidates)},
                                    baseline)
        loop_orders.append(order)
        loop_walls.append(wall)
        print(f"round {round_index + 1}: loop {wall:.1f} s (load {loads[-1]})", file=sys.stderr)
        loads.append(load())
        flags = ["--rank_cache=off"] if round_index == 0 else [f"--rank_cache={cache}"]
        ranking, wall = ireebench_rank(paths, baseline, scratch / f"rank{round_index}.json",
                                       *flags)
        rankings.append(ranking)
        rank_orders.append(order_of(ranking))
        rank_walls.append(wall)
        print(f"round {round_index + 1}: ireebench {wall:.1f} s (load {loads[-1]})",
              file=sys.stderr)
        loads.append(load())
        ranking, wall = ireebench_rank(paths, baseline, scratch / f"cpu{round_index}.json",
                                       "--rank_cache=off", "--rank_by=cpu_time")
        cpu_orders.append(order_of(ranking))
        cpu_walls.append(wall)
        print(f"round {round_index + 1}: ireebench --rank_by=cpu_time {wall:.1f} s "
              f"(load {loads[-1]})", file=sys.stderr)
    loads.append(load())
    cached, cached_wall = ireebench_rank(paths, baseline, scratch / "cached.json",
                                         f"--rank_cache={cache}")
    few = [candidates[cid] for cid in truth[::6]]
    faults, faults_wall = ireebench_rank([*few[:2], hang, *few[2:], crash], baseline,
                                         scratch / "faults.json", "--rank_cache=off")
    loads.append(load())
    by_id = {c["id"]: c for c in faults["candidates"]}
    stuck = by_id["hang"]
    stopped_after, timeout = stuck["elapsed"], stuck["timeout"]

    def tau(a, b):
        value = kendall_tau(a, b)
        return "n/a" if value is None else f"{value:.3f}"

    loop_rounds = tau(*loop_orders)
    rank_rounds = tau(*rank_orders)
    loop_truth = ", ".join(tau(truth, order) for order in loop_orders)
    rank_truth = ", ".join(tau(truth, order) for order in rank_orders)
    cpu_rounds = tau(*cpu_orders)
    cpu_truth = ", ".join(tau(truth, order) for order in cpu_orders)
    ratio = sum(rank_walls) / sum(loop_walls)
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    taus = [r["kendall_tau"] for r in rankings]
    lines = [
        f"Run on {when}: {machine()}.",
        (f"Load average (1 min) before each run and at the end: {', '.join(loads)}. "
        f"{COUNT} candidates (N = 2^20 x 1.03^i, rounded to a multiple of 64, of 2^21 i32 "
         "inputs summed, 4-8 MiB per call), "
        "baseline N = 2^20 x 1.03^11.5; two `local-sync` workers pinned to CPU 0 and CPU 1."),
        "",
        ("| | libtuner-style loop | ireebench rank | target | ireebench rank "
        "--rank_by=cpu_time |"),
        "| --- | --- | --- | --- | --- |",
        (f"| wall per round (s) | {', '.join(f'{w:.1f}' for w in loop_walls)} | "
         f"{', '.join(f'{w:.1f}' for w in rank_walls)} | ireebench <= 0.5 x loop: "
         f"{ratio:.2f} x | {', '.join(f'{w:.1f}' for w in cpu_walls)} |"),
        (f"| Kendall tau, round 1 vs round 2 | {loop_rounds} | {rank_rounds} | >= 0.9 and "
         f"0.1 above the loop's | {cpu_rounds} |"),
        (f"| Kendall tau vs the true order (each round) | {loop_truth} | {rank_truth} | "
         f">= 0.9 | {cpu_truth} |"),
        (f"| measurements per candidate | 1 repetition, 1 process | adaptive (+-2 %), "
         f"re-rank of the top 5 (tau first pass vs re-rank {', '.join(map(str, taus))}) | "
         "| the same, the worker's CPU time compared |"),
        "",
        (f"A never-ending candidate among 6 was stopped {stopped_after:.2f} s after it started, "
        f"against its timeout of {timeout:.2f} s (target <= 1.2 x timeout + 0.5 s = "
        f"{1.2 * timeout + 0.5:.2f} s); the crashing one ended `{by_id['crash']['state']}`; "
        f"{len([c for c in faults['candidates'] if c['rank']])} of the other "
        f"{len(faults['candidates']) - 2} were ranked ({faults_wall:.1f} s)."),
        (f"The second round again with its cache: {cached['measured']} measurements, "
        f"{cached['device_seconds']:.2f} s on the devices, {cached_wall:.1f} s wall, "
        f"{cached['from_cache']} candidates from the cache."),
    ]
    section = "\n".join(lines)
    print(section)
    if args.write:
        write_section(BEGIN, END, section, ROOT / "docs" / "performance.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
