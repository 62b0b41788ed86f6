"""A ranking of 1,000 candidates on 2 CPU workers: the coordinator's memory and cost.

The candidates are one tiny module (tests/fixtures/mlir/cheat_base.mlir:
2x + 1 over 1,024 floats, a few microseconds a call) with a distinct
padding after its end (so 1,000 distinct sha256s, none measured as another),
each measured briefly and fixed (``--benchmark_min_time=10x``, 3
repetitions, no adaptive stopping, no re-rank), as a tuner's large first
sweep would be. Reported, as whole processes on the machine as it is:

* the coordinator's peak resident memory (``VmHWM`` of the ``ireebench rank``
  process, read from /proc while it runs; its workers are other processes);
* per candidate: the wall time x workers over the candidates, the timed
  part of it (iterations x their time), what the worker spends around it
  (loading the module, the context, the outputs' check: ``elapsed`` minus the
  timed part) and what is left (the start, the baselines, waits); and the
  coordinator's own CPU time per candidate (its process's user + system
  time, sampled from /proc every 50 ms), the overhead the target bounds;
* ``--rank_stream``'s lines: one per candidate as each is known.

The issue's targets (41): <= 5 ms of overhead per candidate, <= 200 MB in
the coordinator. ``--write`` puts the table into docs/performance.md
(between the ``rank_scale`` markers).

    python benchmarks/rank_scale.py [--count 1000] [--write]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from compare_native import ROOT, compile_source, machine, write_section

BEGIN, END = "<!-- rank_scale: begin -->", "<!-- rank_scale: end -->"
ITERATIONS = 10
WORKERS = 2


def peak_rss(pid: int) -> int:
    """``VmHWM`` of ``pid`` in bytes (0 once it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of ``pid`` so far (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="rank-scale-"))
    module = compile_source((ROOT / "tests/fixtures/mlir/cheat_base.mlir").read_text(),
                            scratch / "base.vmfb")
    data = module.read_bytes()
    paths = []
    for index in range(args.count):
        paths.append(scratch / f"c{index:05d}.vmfb")
        paths[-1].write_bytes(data + f"pad{index:08d}".encode())
    out, stream = scratch / "ranking.json", scratch / "stream.jsonl"
    command = [sys.executable, "-m", "ireebench", "rank", *map(str, paths),
               f"--baseline={module}", "--devices=local-sync", f"--cpu_workers={WORKERS}",
               "--input=1024xf32=1", f"--benchmark_min_time={ITERATIONS}x",
               "--benchmark_repetitions=3", "--benchmark_min_rel_accuracy=",
               "--rerank_top=0", "--rank_cache=off", f"--rank_out={out}",
               f"--rank_stream={stream}", "--benchmark_out=/dev/null"]
    start = time.monotonic()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, env={**os.environ,
                                            "IREEBENCH_ENVIRONMENT_WARNINGS": "false"})
    peak, cpu = 0, 0.0
    while proc.poll() is None:
        peak = max(peak, peak_rss(proc.pid))
        cpu = max(cpu, cpu_seconds(proc.pid))
        time.sleep(0.05)  # sampling the coordinator, not synchronising
    wall = time.monotonic() - start
    if proc.returncode != 0:
        raise SystemExit(f"ireebench rank failed ({proc.returncode}): {proc.stderr.read()[-2000:]}")
    ranking = json.loads(out.read_text())
    measured = [c for c in ranking["candidates"] if c["state"] == "ok"]
    timed = sum(sum(c["samples"]) * ITERATIONS for c in measured)
    around = sum(c["elapsed"] for c in measured) - timed
    count = len(measured)
    per = wall * WORKERS / count
    lines = sum(1 for line in stream.read_text().splitlines() if '"candidate"' in line)
    rest = per - (timed + around) / count
    met_time = "met" if cpu / count <= 0.005 else "NOT met"
    met_memory = "met" if peak <= 200 * 2**20 else "NOT met"
    table = "\n".join([
        (f"{count:,} of {args.count:,} candidates ranked on {WORKERS} `local-sync` workers, "
        f"{datetime.date.today()}, load average {os.getloadavg()[0]:.1f} at the end; "
        f"{machine()}"),
        "",
        "| | value | target |",
        "| --- | --- | --- |",
        f"| wall | {wall:.1f} s | |",
        f"| per candidate: wall x workers / candidates | {per * 1e3:.1f} ms | |",
        (f"| ... of which timed ({ITERATIONS} iterations x 3 repetitions) | "
        f"{timed / count * 1e3:.2f} ms | |"),
        (f"| ... around it in the worker (module, context, outputs' check) | "
        f"{around / count * 1e3:.1f} ms | |"),
        f"| ... the rest (start, baselines, waits) | {rest * 1e3:.1f} ms | |",
        (f"| the coordinator's own CPU per candidate | {cpu / count * 1e3:.2f} ms | "
         f"<= 5 ms: {met_time} |"),
        (f"| coordinator's peak resident memory | {peak / 2**20:.0f} MiB | "
        f"<= 200 MB: {met_memory} |"),
        f"| `--rank_stream` lines, one per candidate | {lines:,} | |",
    ])
    print(table)
    if args.write:
        write_section(BEGIN, END, table)


if __name__ == "__main__":
    main()
