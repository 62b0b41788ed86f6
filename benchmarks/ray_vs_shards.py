"""A sweep on a real local Ray cluster against the same points in 2 static shards.

The cluster is the tests' (tests/ray_cluster.py): a head and two worker
nodes started with ``ray start`` in a network namespace with only loopback
up, each node advertising one device resource (the head ``iree:local-sync``,
each worker ``iree:local-task``: the points ask for ``local-task``, so two
devices measure, as two shards do). Each worker node runs on a CPU of its
own (``taskset``: node 1 on CPU 0, node 2 on CPU 1), and so does each
shard: a device is a CPU here, and two measurements never share one, as on
two machines. Everything below runs in that namespace.

The points: a sweep of 20 "models" (``spin_1`` ... ``spin_20``, functions
that each spin a loop as many times as their input says) at two batch
sizes, ``--sweep model=1..20 --sweep bs=1,64`` with
``--input={bs}000000`` and a fixed iteration count: a bs=64 point does 64
times the work of a bs=1 point. The static shards split the points as
``--shard_index`` does (``i % 2`` of the points in the order of their
parameters), so one shard gets every bs=1 point and the other every bs=64
point, the skew a real batch-size sweep has; the Ray executor hands a free
device the next point.

1. **Makespan**: the two shards as two concurrent processes (two CI jobs on
   two machines), start to the last one's end, against one
   ``--executor=ray`` run of the 40 points, start to end (connecting,
   asking the nodes, shipping included). Target: Ray <= 0.8 x the shards.
2. **Per-point overhead** (schedule, ship, collect): Ray runs of N1 and N2
   tiny points on one device (the head's ``iree:local-sync``: one at a
   time), against the same points each measured by a local point process
   (``python -m ireebench ... --point_index=I``, what a point costs when it
   runs in a process of its own here); the overhead per point is the
   difference of the slopes ``(T(N2) - T(N1)) / (N2 - N1)``, so what a run
   pays once (Ray's connection, the node's identity) cancels. Target:
   <= 50 ms.
3. **A node killed mid-run**: the 40 points again; once a worker node has
   started a bs=64 point it is killed (its raylet and everything it
   started, at once); every point must still be reported exactly once,
   without an error row.

``--write`` puts the tables into docs/performance.md (between the
``ray_vs_shards`` markers).

    python benchmarks/ray_vs_shards.py [--rounds 1] [--write]
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

BEGIN, END = "<!-- ray_vs_shards: begin -->", "<!-- ray_vs_shards: end -->"
MODELS = 20
ITERATIONS = "10x"
TINY_COUNTS = (4, 16)


def spin_functions(count: int) -> str:
    """MLIR of ``spin_1`` ... ``spin_COUNT``: each loops ``%n`` times (its input)."""
    functions = []
    for number in range(1, count + 1):
        functions.append(f"""
func.func @spin_{number}(%n: i32) -> i32 {{
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %tag = arith.constant {number} : i32
  %r = scf.while (%i = %c0) : (i32) -> i32 {{
    %cond = arith.cmpi slt, %i, %n : i32
    scf.condition(%cond) %i : i32
  }} do {{
  ^bb0(%i: i32):
    %next = arith.addi %i, %c1 : i32
    scf.yield %next : i32
  }}
  %out = arith.addi %r, %tag : i32
  return %out : i32
}}""")
    return "\n".join(functions)


class Bench:
    def __init__(self, cluster, module: Path, folder: Path):
        self.cluster = cluster
        self.module = module
        self.folder = folder

    def sweep(self, models: int = MODELS, batches=("1", "64")) -> list[str]:
        return [f"--module={self.module}", f"--sweep=model=1..{models}",
                f"--sweep=bs={','.join(batches)}", "--function=spin_{model}",
                "--input={bs}000000", "--device=local-task",
                f"--benchmark_min_time={ITERATIONS}"]

    def command(self, *args) -> list[str]:
        return [*self.cluster.enter(), sys.executable, "-m", "ireebench", *map(str, args)]

    def timed(self, *args) -> tuple[float, subprocess.CompletedProcess]:
        start = time.monotonic()
        proc = subprocess.run(self.command(*args), capture_output=True, text=True,
                              env=self.cluster.env, cwd=self.folder, check=False)
        wall = time.monotonic() - start
        if proc.returncode != 0:
            raise RuntimeError(f"{args}: exit {proc.returncode}: {proc.stderr[-3000:]}")
        return wall, proc

    def ray(self) -> list[str]:
        return ["--executor=ray", f"--ray_address={ray_cluster.ADDRESS}"]

    def shards(self) -> tuple[float, list[float], list[int]]:
        """Both shards at once; the makespan, each shard's wall, each shard's points."""
        start = time.monotonic()
        procs, ends = [], {}
        outs = [self.folder / f"shard-{index}.json" for index in range(2)]
        for index in range(2):
            # Shard I on CPU I, as worker node I+1 is: two machines, one device each.
            command = self.command(*self.sweep(), f"--shard_index={index}", "--shard_count=2",
                                   f"--benchmark_out={outs[index]}")
            split = command.index("--") + 1
            procs.append(subprocess.Popen(
                [*command[:split], "taskset", "-c", str(index), *command[split:]],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=self.cluster.env,
                cwd=self.folder))
        while len(ends) < 2:
            for index, proc in enumerate(procs):
                if index not in ends and proc.poll() is not None:
                    ends[index] = time.monotonic() - start
                    if proc.returncode != 0:
                        raise RuntimeError(f"shard {index}: {proc.stderr.read()[-3000:]}")
            time.sleep(0.01)
        for proc in procs:
            proc.stderr.close()
        counts = [len({row["name"] for row in json.loads(out.read_text())["benchmarks"]})
                  for out in outs]
        return max(ends.values()), [ends[0], ends[1]], counts

    def ray_sweep(self) -> tuple[float, dict]:
        out = self.folder / "ray.json"
        wall, _ = self.timed(*self.sweep(), *self.ray(), f"--benchmark_out={out}")
        rows = json.loads(out.read_text())["benchmarks"]
        return wall, {row["name"]: row["host_name"] for row in rows}

    def tiny(self, count: int) -> tuple[float, float]:
        """(Ray on one device, local point processes) walls for ``count`` tiny points."""
        points = [f"--module={self.module}", f"--sweep=model=1..{count}",
                  "--function=spin_{model}", "--input=1", "--device=local-sync",
                  "--benchmark_min_time=2x"]
        ray_wall, _ = self.timed(*points, *self.ray())
        local = 0.0
        for index in range(count):
            wall, _ = self.timed(*points, "--benchmark_format=json", "--reporter=json",
                                 "--benchmark_enable_random_interleaving=false",
                                 f"--point_index={index}")
            local += wall
        return ray_wall, local

    def killed(self) -> dict:
        """The 40 points, a worker node killed once it started a bs=64 point."""
        markers = self.folder / "markers"
        markers.mkdir(exist_ok=True)
        for marker in markers.iterdir():
            marker.unlink()
        out = self.folder / "killed.json"
        start = time.monotonic()
        proc = subprocess.Popen(
            self.command(*self.sweep(), *self.ray(), f"--benchmark_out={out}",
                         "-p", "point_interval", f"--interval_markers={markers}"),
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=self.cluster.env,
            cwd=self.folder, text=True)
        victim, _ = self.cluster.kill_when_measuring(markers, proc,
                                                     lambda name: "bs:64" in name, seconds=3600)
        killed_at = time.monotonic() - start if victim else None
        _, stderr = proc.communicate()
        wall = time.monotonic() - start
        if proc.returncode != 0:
            raise RuntimeError(f"killed run: exit {proc.returncode}: {stderr[-3000:]}")
        rows = json.loads(out.read_text())["benchmarks"]
        names = [row["name"] for row in rows if row["run_type"] == "iteration"]
        return {"wall": wall, "killed_at": killed_at, "points": len(set(names)),
                "rows": len(names), "errors": sum(bool(row.get("error_occurred"))
                                                  for row in rows),
                "retried": sum(1 for marker in os.listdir(markers)
                               if marker.startswith(victim)),
                "victim": victim[:8] if victim else None,
                "messages": [line for line in stderr.splitlines()
                             if line.startswith("ireebench: ray: ")]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    if len(os.sched_getaffinity(0)) < 2 or not {0, 1} <= os.sched_getaffinity(0):
        print("cannot run: needs CPUs 0 and 1 (a device each)", file=sys.stderr)
        return 1
    why = ray_cluster.missing()
    if why:
        print(f"cannot run: {why}", file=sys.stderr)
        return 1
    ray_cluster.clean_stale()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="ireebench-ray-bench-") as scratch:
        folder = Path(scratch)
        module = compile_source(spin_functions(MODELS), folder / "spin.vmfb")
        cluster = ray_cluster.RayCluster(_env())
        try:
            cluster.start({"iree:local-sync": 1}, [{"iree:local-task": 1},
                                                   {"iree:local-task": 1}], cpus=[0, 1])
            bench = Bench(cluster, module, folder)
            results = {"shards": [], "shard_walls": [], "ray": [], "hosts": None,
                       "tiny": {}}
            for number in range(args.rounds):
                print(f"round {number + 1}: shards", file=sys.stderr)
                makespan, walls, counts = bench.shards()
                results["shards"].append(makespan)
                results["shard_walls"].append(walls)
                results["shard_counts"] = counts
                print(f"round {number + 1}: ray", file=sys.stderr)
                wall, hosts = bench.ray_sweep()
                results["ray"].append(wall)
                results["hosts"] = hosts
            for count in TINY_COUNTS:
                print(f"tiny points: {count}", file=sys.stderr)
                results["tiny"][count] = bench.tiny(count)
            print("a node killed", file=sys.stderr)
            results["killed"] = bench.killed()
        finally:
            cluster.stop()
    load_after = os.getloadavg()[0]
    section = render(results, load_before, load_after, args.rounds)
    print(section)
    if args.write:
        write_section(BEGIN, END, section)
    return 0


def render(results: dict, load_before: float, load_after: float, rounds: int) -> str:
    shards = statistics.median(results["shards"])
    ray = statistics.median(results["ray"])
    walls = results["shard_walls"][0]
    by_host: dict[str, int] = {}
    for host in results["hosts"].values():
        by_host[host] = by_host.get(host, 0) + 1
    (n1, (ray1, local1)), (n2, (ray2, local2)) = sorted(results["tiny"].items())
    ray_slope = (ray2 - ray1) / (n2 - n1)
    local_slope = (local2 - local1) / (n2 - n1)
    overhead = ray_slope - local_slope
    killed = results["killed"]
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"Run on {now}: {machine()}.",
        (f"Load average {load_before:.2f} before, {load_after:.2f} after. A head and two worker "
        "nodes on this machine (`ray start`, a network namespace with only loopback up), each "
        "advertising one device resource; the points ask for `iree:local-task`, which each "
        "worker node offers once; worker node 1 and shard 0 run on CPU 0 alone, worker node 2 "
        f"and shard 1 on CPU 1 (`taskset`). {2 * MODELS} points: `--sweep model=1..{MODELS} --sweep "
        "bs=1,64 --function=spin_{model} --input={bs}000000 "
        f"--benchmark_min_time={ITERATIONS}` (a bs=64 point spins 64 times as long). "
        f"{rounds} round{'s' if rounds > 1 else ''}; medians."),
        "",
        "| run | wall (s) | over the shards' | points per device |",
        "| --- | --- | --- | --- |",
        (f"| 2 static shards, concurrently (`--shard_index=0,1 --shard_count=2`) | {shards:.1f} "
        f"| 1.00 | {results['shard_counts'][0]} and {results['shard_counts'][1]} (shard walls "
        f"{walls[0]:.1f} s and {walls[1]:.1f} s) |"),
        f"| `--executor=ray`, 2 devices | {ray:.1f} | {ray / shards:.2f} | "
        + " and ".join(f"{count} ({host})" for host, count in sorted(by_host.items())) + " |",
        "",
        "| tiny points on one device | Ray run (s) | local point processes (s) |",
        "| --- | --- | --- |",
        f"| {n1} | {ray1:.2f} | {local1:.2f} |",
        f"| {n2} | {ray2:.2f} | {local2:.2f} |",
        f"| per point (slope) | {ray_slope * 1000:.0f} ms | {local_slope * 1000:.0f} ms |",
        "",
        (f"Per-point overhead of Ray over a local point process: {overhead * 1000:.0f} ms "
        f"(the Ray run's fixed cost, connecting and asking the nodes: "
        f"{(ray1 - n1 * ray_slope) - (local1 - n1 * local_slope):.2f} s)."),
        "",
        f"A worker node killed {killed['killed_at']:.1f} s into a run of the {2 * MODELS} "
        f"points, while it measured a bs=64 point: {killed['points']} points reported, "
        f"{killed['rows']} rows (each point once), {killed['errors']} error rows; the run "
        f"took {killed['wall']:.1f} s. Its lines on stderr: "
        + ("; ".join(f"`{line}`" for line in killed["messages"]) or "none") + ".",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
