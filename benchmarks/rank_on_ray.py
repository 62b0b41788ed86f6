"""``ireebench rank`` on a real local Ray cluster against the same ranking on this machine.

The cluster is the tests' (tests/ray_cluster.py): a head and two worker
nodes started with ``ray start`` in a network namespace with only loopback
up; the head advertises ``iree:local-sync``, each worker node one
``iree:local-task`` and runs on a CPU of its own (``taskset``: node 1 on
CPU 0, node 2 on CPU 1), as two machines would. The candidates are the
tests' (tests/fixtures/mlir/rank_sum.mlir): ``main`` summing the first N of
2^20 inputs, N different for each, so no two are the same bytes.

1. **Per-candidate overhead** (shipping the module, the actor's relay, the
   rows back): rankings of C1 and C2 candidates on one device, each
   candidate a fixed 20 iterations, no re-rank, no cache; on the cluster
   (``--devices=local-sync``: the head's device, one actor) against here
   (``--devices=local-sync``: one forked worker). The overhead is the
   difference of the slopes ``(T(C2) - T(C1)) / (C2 - C1)``, so what a
   ranking pays once (joining the cluster, the actor, the worker's start)
   cancels; that fixed part is reported too.
2. **Two devices**: the C2 candidates on the two worker nodes
   (``--devices=local-task,local-task``) against two pinned workers here
   (``--devices=local-task --cpu_workers=2``, each on a CPU of its own):
   the same parallelism, one of them across Ray.
3. **A node killed mid-ranking**: the C2 candidates on the two worker nodes
   again, each measured for 0.2 s; once a worker node starts a candidate
   (a marker of the tests' ``point_interval`` plugin), it is killed (its
   raylet and everything it started, at once). Every candidate must be
   ranked ``ok`` and reported once.

``--write`` puts the tables into docs/performance.md (between the
``rank_on_ray`` markers).

    python benchmarks/rank_on_ray.py [--rounds 1] [--write]
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

from compare_native import ROOT, compile_source, machine, write_section

sys.path.insert(0, str(ROOT / "tests"))
import ray_cluster  # the tests' cluster, in its network namespace
from conftest import _env  # the tests' environment: their plugins importable by name

BEGIN, END = "<!-- rank_on_ray: begin -->", "<!-- rank_on_ray: end -->"
INPUTS = 1 << 20
COUNTS = (4, 36)
FIXED = ["--input=1048576xi32=0", "--benchmark_min_time=20x", "--benchmark_repetitions=1",
         "--benchmark_min_rel_accuracy=", "--rerank_top=0", "--rank_cache=off"]


def candidate_source(work: int) -> str:
    text = (ROOT / "tests" / "fixtures" / "mlir" / "rank_sum.mlir").read_text()
    return (text.replace("INPUTS", str(INPUTS)).replace("WORK", str(work))
            .replace("EXTRA", "0"))


class Bench:
    def __init__(self, cluster, candidates: list[Path], folder: Path):
        self.cluster = cluster
        self.candidates = candidates
        self.folder = folder

    def command(self, *args) -> list[str]:
        return [*self.cluster.enter(), sys.executable, "-m", "ireebench", *map(str, args)]

    def rank(self, count: int, *flags) -> tuple[float, dict]:
        out = self.folder / "ranking.json"
        start = time.monotonic()
        proc = subprocess.run(self.command("rank", *self.candidates[:count],
                                           f"--baseline={self.candidates[0]}", *FIXED,
                                           f"--rank_out={out}", *flags),
                              capture_output=True, text=True, env=self.cluster.env,
                              cwd=self.folder, check=False)
        wall = time.monotonic() - start
        if proc.returncode != 0:
            raise RuntimeError(f"rank {flags}: exit {proc.returncode}: {proc.stderr[-3000:]}")
        return wall, json.loads(out.read_text())

    @staticmethod
    def ray() -> list[str]:
        return ["--executor=ray", f"--ray_address={ray_cluster.ADDRESS}"]

    def killed(self, count: int) -> dict:
        markers = self.folder / "markers"
        markers.mkdir(exist_ok=True)
        for marker in markers.iterdir():
            marker.unlink()
        out = self.folder / "killed.json"
        start = time.monotonic()
        proc = subprocess.Popen(
            self.command("-p", "point_interval", "rank", *self.candidates[:count],
                         f"--baseline={self.candidates[0]}", *FIXED,
                         "--benchmark_min_time=0.2s", "--devices=local-task,local-task",
                         f"--interval_markers={markers}", f"--rank_out={out}",
                         "--benchmark_format=json", *self.ray()),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.cluster.env,
            cwd=self.folder, text=True)
        victim, _ = self.cluster.kill_when_measuring(
            markers, proc, lambda name: "candidate:baseline" not in name, seconds=3600)
        killed_at = time.monotonic() - start if victim else None
        stdout, stderr = proc.communicate()
        wall = time.monotonic() - start
        if proc.returncode != 0:
            raise RuntimeError(f"killed ranking: exit {proc.returncode}: {stderr[-3000:]}")
        ranking = json.loads(out.read_text())
        rows = json.loads(stdout)["benchmarks"]
        means = [row["name"] for row in rows if row["run_type"] == "iteration"
                 and "candidate:baseline" not in row["name"]]  # one repetition each
        return {"wall": wall, "killed_at": killed_at,
                "ok": sum(entry["state"] == "ok" for entry in ranking["candidates"]),
                "candidates": len(ranking["candidates"]), "reported": len(means),
                "distinct": len(set(means)),
                "messages": [line for line in stderr.splitlines()
                             if line.startswith("ireebench: ray: rank: the worker")]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    if not {0, 1} <= os.sched_getaffinity(0):
        print("cannot run: needs CPUs 0 and 1 (a device each)", file=sys.stderr)
        return 1
    why = ray_cluster.missing()
    if why:
        print(f"cannot run: {why}", file=sys.stderr)
        return 1
    ray_cluster.clean_stale()
    load_before = os.getloadavg()[0]
    results: dict = {"one": {}, "two": {"ray": [], "local": []}}
    with tempfile.TemporaryDirectory(prefix="ireebench-rank-ray-bench-") as scratch:
        folder = Path(scratch)
        candidates = [compile_source(candidate_source((1 << 14) + 4096 * index),
                                     folder / f"c{index:02d}.vmfb")
                      for index in range(max(COUNTS))]
        cluster = ray_cluster.RayCluster(_env())
        try:
            cluster.start({"iree:local-sync": 1}, [{"iree:local-task": 1},
                                                   {"iree:local-task": 1}], cpus=[0, 1])
            bench = Bench(cluster, candidates, folder)
            for number in range(args.rounds):
                for count in COUNTS:  # alternating, in one go
                    print(f"round {number + 1}: {count} candidates, one device",
                          file=sys.stderr)
                    local, _ = bench.rank(count, "--devices=local-sync")
                    ray, _ = bench.rank(count, "--devices=local-sync", *bench.ray())
                    results["one"].setdefault(count, []).append((ray, local))
                print(f"round {number + 1}: two devices", file=sys.stderr)
                local, _ = bench.rank(max(COUNTS), "--devices=local-task", "--cpu_workers=2")
                ray, ranking = bench.rank(max(COUNTS), "--devices=local-task,local-task",
                                          *bench.ray())
                results["two"]["local"].append(local)
                results["two"]["ray"].append(ray)
                results["hosts"] = [device["worker"].get("host_name")
                                    for device in ranking["devices"]]
            print("a node killed", file=sys.stderr)
            results["killed"] = bench.killed(max(COUNTS))
        finally:
            cluster.stop()
    section = render(results, load_before, os.getloadavg()[0], args.rounds)
    print(section)
    if args.write:
        write_section(BEGIN, END, section)
    return 0


def render(results: dict, load_before: float, load_after: float, rounds: int) -> str:
    (c1, walls1), (c2, walls2) = sorted(results["one"].items())
    ray1 = statistics.median(ray for ray, _ in walls1)
    local1 = statistics.median(local for _, local in walls1)
    ray2 = statistics.median(ray for ray, _ in walls2)
    local2 = statistics.median(local for _, local in walls2)
    ray_slope, local_slope = (ray2 - ray1) / (c2 - c1), (local2 - local1) / (c2 - c1)
    fixed = (ray1 - c1 * ray_slope) - (local1 - c1 * local_slope)
    two_ray = statistics.median(results["two"]["ray"])
    two_local = statistics.median(results["two"]["local"])
    killed = results["killed"]
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return "\n".join([
        f"Run on {now}: {machine()}.",
        (f"Load average {load_before:.2f} before, {load_after:.2f} after. The cluster of "
         "tests/ray_cluster.py (a head offering `iree:local-sync`, two worker nodes offering "
         "one `iree:local-task` each, node 1 on CPU 0 and node 2 on CPU 1); distinct "
         "candidates summing 16-160 K of 2^20 inputs (tens of microseconds a call), each "
         f"measured `{' '.join(FIXED)}`. {rounds} round{'s' if rounds > 1 else ''}, the local "
         "and the Ray ranking alternating; medians."),
        "",
        "| ranking | on the cluster (s) | here (s) |",
        "| --- | --- | --- |",
        f"| {c1} candidates, one device (`--devices=local-sync`) | {ray1:.2f} | {local1:.2f} |",
        f"| {c2} candidates, one device | {ray2:.2f} | {local2:.2f} |",
        f"| per candidate (slope) | {ray_slope * 1000:.0f} ms | {local_slope * 1000:.0f} ms |",
        (f"| {c2} candidates, two devices (the two worker nodes; here "
         f"`--devices=local-task --cpu_workers=2`) | {two_ray:.2f} | {two_local:.2f} |"),
        "",
        (f"Per-candidate overhead of the cluster over a warm worker here: "
         f"{(ray_slope - local_slope) * 1000:.0f} ms; a ranking's fixed cost on the cluster "
         f"(joining it, asking the nodes, the actors and their workers' start) "
         f"{fixed:+.2f} s over here. The two-device ranking's workers ran on "
         f"{', '.join(sorted(host or '?' for host in results['hosts']))}."),
        "",
        (f"A worker node killed {killed['killed_at']:.1f} s into a ranking of "
         f"{killed['candidates']} candidates, while its worker measured one: {killed['ok']} "
         f"of {killed['candidates']} ranked ok, {killed['reported']} reported "
         f"({killed['distinct']} distinct); the ranking took {killed['wall']:.1f} s. Its line "
         "on stderr: " + ("; ".join(f"`{line}`" for line in killed["messages"]) or "none")
         + "."),
    ])


if __name__ == "__main__":
    sys.exit(main())
