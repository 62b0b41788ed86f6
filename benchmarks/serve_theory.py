"""The serving scenarios and the LLM kind against queueing theory and known costs.

Every number comes from ireebench runs (whole processes, JSON rows and
``--scenario_log``) of examples/serving/serving.mlir (async: @spin(n), a
chain of n multiply-adds; @stall, the same with every K-th call longer) and
examples/llm/toy_llm.mlir. The checks (issue 31):

1. **M/D/1.** @spin's ``n`` is calibrated to a ~5 ms service time (Offline's
   time per sample on one lane: the lane busy, as a queue's server is). One
   lane, Poisson arrivals: an M/D/1 queue, whose
   mean latency is ``s * (1 + rho / (2 (1 - rho)))`` (Pollaczek-Khinchine):
   1.5 s at rho = 0.5, 3 s at rho = 0.8. Measured within 10 %? The table
   also gives the service time seen while the lane was busy (the gap
   between completions of back-to-back queries, from the log) and the
   ratio with it.
   With ``--goodput=e2e:3s`` (three service times) the rows' goodput: the
   fraction of queries within it against the M/D/1 sojourn time's
   distribution (Crommelin's formula: 0.947 at rho = 0.5, 0.634 at 0.8).
2. **Issue lag**: the p99 of issued - scheduled under 1 ms.
3. **The same seed, the same schedule**: two processes, the scheduled times
   compared.
4. **A 50 ms stall shows in the p99**: @stall with every 200th call 50 ms
   long (its extra steps scaled from the calibrated service time), at rho = 0.5: the Server's p99 (latency from the scheduled time)
   against the same run without the stall, and against SingleStream (a
   closed loop, which waits for each query before the next: coordinated
   omission, the stall is one query in 200 and hides under the p99).
5. **The bound search lands within 5 % of a brute-force sweep**: ``--search``
   for the highest rate with p99 <= 10 s, against a sweep of 21 rates from
   0.5 to 1.0 of the lane's capacity (each 662 queries, the same seed).
6. **Decode cost against context**: the toy LLM's decode step attends to its
   whole context, so its cost grows linearly with it: 256 decode steps, 30
   generations, the ``decode_context`` row's slope and R² (>= 0.9?).

    python benchmarks/serve_theory.py [--device local-task] [--quick] [--write]

``--write`` puts the table into docs/performance.md (between the
``serve_theory`` markers). ``--quick`` shortens every run (for a look, not
for the table).
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import math
import os
import statistics
import sys
import tempfile
from pathlib import Path

from compare_native import ASYNC, ROOT, compile_source, machine, run_process, write_section

BEGIN, END = "<!-- serve_theory: begin -->", "<!-- serve_theory: end -->"
EXAMPLES = ROOT / "examples"
SERVICE = 0.005  # the target service time, seconds
STALL_EVERY = 200
STALL = 0.050  # seconds: the stalled call's whole time
SERVICE_RUNS = 3  # Offline runs per service time: their median (the machine is shared)
GENERATIONS = 30  # the toy LLM's generations: each position's median over them
SLO_SERVICES = 3.0  # --goodput=e2e: this many service times


def pk(rho: float) -> float:
    """Pollaczek-Khinchine: M/D/1 mean latency over the service time."""
    return 1.0 + rho / (2.0 * (1.0 - rho))


def md1_within(rho: float, services: float) -> float:
    """P(sojourn <= services x s) of an M/D/1 queue: Crommelin's formula for the wait
    (P(W <= x) = (1 - rho) sum_k (rho (k - x))^k / k! e^(-rho (k - x)), k <= x, in
    service times) at x = services - 1."""
    wait = services - 1.0
    if wait < 0:
        return 0.0
    return (1.0 - rho) * sum((rho * (k - wait)) ** k / math.factorial(k)
                             * math.exp(-rho * (k - wait)) for k in range(math.floor(wait) + 1))


class Runner:
    def __init__(self, device: str, scratch: Path, quick: bool):
        self.device = device
        self.scratch = scratch
        self.quick = quick
        self.serving = compile_source((EXAMPLES / "serving" / "serving.mlir").read_text(),
                                      scratch / "serving.vmfb", ASYNC)
        self.llm = compile_source((EXAMPLES / "llm" / "toy_llm.mlir").read_text(), scratch / "llm.vmfb")
        self.logs = 0

    def run(self, *args: str, module: Path | None = None) -> list[dict]:
        command = [sys.executable, "-m", "ireebench", f"--module={module or self.serving}",
                   f"--device={self.device}", "--benchmark_format=json",
                   "--benchmark_min_time=20x", *args]
        process = run_process(command, env={"IREEBENCH_ENVIRONMENT_WARNINGS": "false"})
        return json.loads(process.stdout)["benchmarks"]

    def log_path(self) -> Path:
        self.logs += 1
        return self.scratch / f"log{self.logs}.jsonl"

    def spin(self, n: int) -> tuple[str, str]:
        return "--function=spin", f"--input=i32={n}"

    def duration(self, seconds: float) -> str:
        return f"--min_duration={seconds / 10 if self.quick else seconds}s"


def read_log(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def busy_service(queries: list[dict]) -> float:
    """The median gap between completions of queries issued while the lane was busy."""
    gaps = [later["completed_s"] - earlier["completed_s"]
            for earlier, later in itertools.pairwise(queries)
            if later["scheduled_s"] < earlier["completed_s"]]
    return statistics.median(gaps) if gaps else float("nan")


def busy_service_time(runner: Runner, n: int) -> float:
    """@spin's service time when the lane is busy: Offline's time per sample on one lane
    (what a queue's server spends per query; a closed loop also pays for waking it), the
    median of a few runs (one run on a shared machine can be far off)."""
    times = []
    for _ in range(SERVICE_RUNS):
        row = runner.run(*runner.spin(n), "--scenario=offline", "--min_duration=0.5s",
                         "--min_query_count=100")[0]
        times.append(1.0 / row["items_per_second"])
    return statistics.median(times)


def calibrate(runner: Runner) -> tuple[int, float]:
    """@spin's n with a ~5 ms busy service time, and that time."""
    n = 2_000_000
    for _ in range(3):
        n = max(1000, round(n * SERVICE / busy_service_time(runner, n)))
    return n, busy_service_time(runner, n)


def md1(runner: Runner, n: int) -> list[dict]:
    """Each rate's service time measured right before it (the machine drifts)."""
    results = []
    for rho, seconds in ((0.5, 20.0), (0.8, 60.0)):
        service = busy_service_time(runner, n)
        log = runner.log_path()
        row = runner.run(*runner.spin(n), "--scenario=server", f"--target_qps={rho / service}",
                         runner.duration(seconds), f"--scenario_log={log}",
                         f"--goodput=e2e:{SLO_SERVICES * service * 1e3:.3f}ms")[0]
        queries = read_log(log)
        busy = busy_service(queries)
        mean = row["real_time"] / 1e3
        busy_rho = min(rho / service * busy, 0.99)
        results.append({"rho": rho, "queries": row["iterations"], "service": service,
                        "mean": mean, "ratio": mean / service, "expected": pk(rho),
                        "error": mean / service / pk(rho) - 1.0, "busy": busy,
                        "busy_rho": busy_rho, "busy_error": (mean / busy) / pk(busy_rho) - 1.0,
                        "lag_p99": row["issue_lag_p99_ms"] / 1e3, "goodput": row["goodput"],
                        "good": row["good_queries"] / row["iterations"],
                        "good_expected": md1_within(rho, SLO_SERVICES)})
    return results


def same_schedule(runner: Runner, n: int, service: float) -> bool:
    logs = []
    for _ in range(2):
        log = runner.log_path()
        runner.run(*runner.spin(n), "--scenario=server", f"--target_qps={0.3 / service}",
                   "--min_duration=0", "--min_query_count=200", "--scenario_seed=7",
                   f"--scenario_log={log}")
        logs.append([query["scheduled_s"] for query in read_log(log)])
    return logs[0] == logs[1]


def stall(runner: Runner, n: int, service: float) -> dict:
    extra = max(0, round(n * (STALL / service - 1.0)))  # the stalled call takes STALL
    stalled = ("--function=stall", f"--input=i32={n}", f"--input=i32={STALL_EVERY}",
               f"--input=i32={extra}")
    queries = "--min_query_count=700" if runner.quick else "--min_query_count=2000"
    server = ("--scenario=server", f"--target_qps={0.5 / service}", "--min_duration=0", queries)
    with_stall = runner.run(*stalled, *server)[0]
    without = runner.run(*runner.spin(n), *server)[0]
    closed = runner.run(*stalled, "--scenario=single_stream", "--min_duration=0", queries)[0]
    return {"stall": STALL, "server": with_stall["p99_ms"] / 1e3,
            "server_max": with_stall["max_ms"] / 1e3, "baseline": without["p99_ms"] / 1e3,
            "closed": closed["p99_ms"] / 1e3, "closed_max": closed["max_ms"] / 1e3}


def search(runner: Runner, n: int, service: float) -> dict:
    bound = f"--latency_bound=p99:{10 * service * 1e3:.3f}ms"
    capacity = 1.0 / service
    rates = [round(capacity * (0.5 + 0.025 * step), 2) for step in range(21)]
    common = (*runner.spin(n), "--scenario=server", "--min_duration=0", bound)
    rows = runner.run(*common, "--target_qps=1", "--sweep",
                      "target_qps=" + ",".join(str(rate) for rate in rates))
    passing = [row["target_qps"] for row in rows if row["valid"] == 1]
    brute = max(passing) if passing else float("nan")
    found = runner.run(*common, "--search", f"--target_qps={round(0.25 * capacity, 2)}")
    peak = found[0].get("max_target_qps", float("nan"))
    return {"brute": brute, "search": peak, "error": peak / brute - 1.0,
            "trials": len(found) - 1, "capacity": capacity,
            "sweep": [(row["target_qps"], row["valid"]) for row in rows]}


def decode(runner: Runner) -> dict:
    steps = 64 if runner.quick else 256
    rows = runner.run("--function=decode_bs1", "--input=64x1024xf32=0",
                      f"--llm_decode_steps={steps}", "--llm_prompt_length=16",
                      "--llm_block_seq_stride=16", f"--benchmark_min_time={GENERATIONS}x",
                      module=runner.llm)
    context = next(row for row in rows if row["name"].endswith("/decode_context"))
    itl = next(row for row in rows if row["name"].endswith("/itl"))
    return {"steps": steps, "slope": context["slope_us_per_token"],
            "intercept": context["intercept_ms"], "r2": context["r_squared"],
            "calls": itl["iterations"], "context": (context["context_min"],
                                                     context["context_max"])}


def table(service, n, md1_rows, same, stall_row, search_row, decode_row, loads) -> str:
    ok = {True: "yes", False: "**no**"}
    lines = [(f"Measured {datetime.date.today().isoformat()} on {machine()}: "
             f"`python benchmarks/serve_theory.py --write` (device local-task), load "
             f"average {loads[0]:.2f} before and {loads[1]:.2f} after. "
             f"@spin(n = {n}) takes {service * 1e3:.2f} ms a call when its lane is busy "
             "(Offline's time per sample, s below)."), "",
             "| check | expected | measured | within? |", "| --- | --- | --- | --- |"]
    for row in md1_rows:
        lines.append(
            f"| M/D/1 mean latency, rho = {row['rho']} ({row['queries']} queries, s = "
            f"{row['service'] * 1e3:.2f} ms measured just before) | "
            f"{row['expected']:.2f} x s | {row['ratio']:.2f} x s ({row['error']:+.0%}); with the "
            f"busy lane's service {row['busy'] * 1e3:.2f} ms (rho {row['busy_rho']:.2f}): "
            f"{row['busy_error']:+.0%} | {ok[abs(row['error']) <= 0.10]} |")
    for row in md1_rows:
        lines.append(
            f"| goodput, e2e <= {SLO_SERVICES:g} x s, rho = {row['rho']} (the run above) | "
            f"{row['good_expected']:.3f} of the queries (M/D/1, Crommelin) | "
            f"{row['good']:.3f}: goodput {row['goodput']:.1f} queries/s | "
            f"{ok[abs(row['good'] - row['good_expected']) <= 0.05]} |")
    lags = ", ".join(f"{row['lag_p99'] * 1e3:.3f} ms" for row in md1_rows)
    lines.append(f"| issue lag p99 (the two runs above) | < 1 ms | {lags} | "
                 f"{ok[all(row['lag_p99'] < 1e-3 for row in md1_rows)]} |")
    lines.append(f"| the same seed, the same schedule (two processes) | identical | "
                 f"{'identical' if same else 'different'} | {ok[same]} |")
    shows = (stall_row["server"] >= 0.5 * stall_row["stall"]
             and stall_row["server"] > 1.5 * stall_row["baseline"])
    lines.append(
        f"| a {stall_row['stall'] * 1e3:.0f} ms stall every {STALL_EVERY} calls, rho = 0.5 | "
        f"in the Server's p99; hidden in a closed loop's | Server p99 "
        f"{stall_row['server'] * 1e3:.1f} ms (without the stall "
        f"{stall_row['baseline'] * 1e3:.1f} ms); SingleStream p99 "
        f"{stall_row['closed'] * 1e3:.1f} ms (max {stall_row['closed_max'] * 1e3:.1f} ms) | "
        f"{ok[shows and stall_row['closed'] < 0.5 * stall_row['stall']]} |")
    lines.append(
        f"| `--search` p99 <= {10 * service * 1e3:.0f} ms vs a sweep of 21 rates | within 5 % | "
        f"search {search_row['search']} qps ({search_row['trials']} loads), sweep "
        f"{search_row['brute']} qps ({search_row['error']:+.1%}) | "
        f"{ok[abs(search_row['error']) <= 0.05]} |")
    lines.append(
        f"| toy LLM decode step against context ({decode_row['steps']} steps x {GENERATIONS} "
        f"generations, context {decode_row['context'][0]:.0f}-{decode_row['context'][1]:.0f}) "
        f"| linear, R² >= 0.9 | slope {decode_row['slope']:.2f} us/token, intercept "
        f"{decode_row['intercept']:.3f} ms, R² {decode_row['r2']:.3f}; {decode_row['calls']} "
        f"ITL samples = decode calls | {ok[decode_row['r2'] >= 0.9]} |")
    sweep = ", ".join(f"{rate:g}{'' if valid else '✗'}" for rate, valid in search_row["sweep"])
    lines += ["", f"The brute-force sweep (✗: INVALID): {sweep}."]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="local-task")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as scratch:
        runner = Runner(args.device, Path(scratch), args.quick)
        n, service = calibrate(runner)
        print(f"@spin n={n}: {service * 1e3:.2f} ms a busy call", file=sys.stderr)
        md1_rows = md1(runner, n)
        print(md1_rows, file=sys.stderr)
        same = same_schedule(runner, n, service)
        stall_row = stall(runner, n, service)
        print(stall_row, file=sys.stderr)
        search_row = search(runner, n, service)
        print(search_row, file=sys.stderr)
        decode_row = decode(runner)
    section = table(service, n, md1_rows, same, stall_row, search_row, decode_row,
                    (before, os.getloadavg()[0]))
    print(section)
    if args.write:
        write_section(BEGIN, END, section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
