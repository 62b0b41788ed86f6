"""How often a Server run's VALID is right: below and above the rate the function sustains.

A Server run without ``--latency_bound`` is VALID when it kept up with its
arrivals (docs/serving.md, "VALID or INVALID"): a verdict, so it is judged
as the gate is, by its rate over many trials. examples/serving/serving.mlir's
@spin is calibrated to a ~5 ms service time on one lane (Offline's time per
sample, as benchmarks/serve_theory.py does, in the condition measured), then
each trial runs the Server at rho = 0.5 and 0.8 of that lane's capacity
(right: VALID) and at 1.5 and 3 (right: INVALID), :data:`QUERIES` queries
each, a fresh seed each trial. The capacity is not the run's own: on a shared
machine it drifts with what else runs, so near rho = 1 the machine, not the
rule, decides; each miss is printed with its completed rate over the
scheduled one (the rho it met). Conditions: **as is** (the shared machine as
it is) and **busy** (one busy process per CPU beside every run, calibrated
beside them too).

    python benchmarks/valid_rates.py [--trials 10] [--conditions as_is,busy] [--write]

``--write`` puts the table into docs/performance.md (between the
``valid_rates`` markers).
"""

from __future__ import annotations

import argparse
import datetime
import os
import tempfile
from pathlib import Path

from compare_native import machine, write_section
from noise_trial import busy
from serve_theory import Runner, calibrate

BEGIN, END = "<!-- valid_rates: begin -->", "<!-- valid_rates: end -->"
RHOS = (0.5, 0.8, 1.5, 3.0)
QUERIES = 400


def trial(runner: Runner, n: int, service: float, rho: float, seed: int) -> dict:
    row = runner.run(*runner.spin(n), "--scenario=server", f"--target_qps={rho / service:.3f}",
                     "--min_duration=0", f"--min_query_count={QUERIES}",
                     f"--scenario_seed={seed}")[0]
    return {"rho": rho, "valid": bool(row["valid"]), "label": row["label"][:120],
            "completed/scheduled": round(row["items_per_second"] / row["target_qps"], 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--conditions", default="as_is,busy")
    parser.add_argument("--device", default="local-task")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    lines, loads = [], []
    with tempfile.TemporaryDirectory(prefix="valid-rates-") as scratch:
        runner = Runner(args.device, Path(scratch), quick=False)
        for condition in args.conditions.split(","):
            with busy(condition == "busy"):
                n, service = calibrate(runner)
                loads.append(os.getloadavg()[0])
                results = [trial(runner, n, service, rho, seed)
                           for seed in range(args.trials) for rho in RHOS]
                loads.append(os.getloadavg()[0])
            for result in results:
                if result["valid"] != (result["rho"] < 1):
                    print(condition, result, flush=True)
            right = {rho: sum(r["valid"] == (rho < 1) for r in results if r["rho"] == rho)
                     for rho in RHOS}
            lines.append(f"| {condition.replace('_', ' ')} ({service * 1e3:.2f} ms) | "
                         + " | ".join(f"{right[rho]}/{args.trials}" for rho in RHOS)
                         + f" | {sum(right.values())}/{args.trials * len(RHOS)} |")
    table = "\n".join([
        (f"{datetime.date.today()}, {machine()}; device {args.device}; load average "
         f"{min(loads):.1f}-{max(loads):.1f}; {QUERIES} queries a run, no --latency_bound."),
        "",
        ("| condition (busy service time) | rho 0.5: VALID | rho 0.8: VALID "
         "| rho 1.5: INVALID | rho 3: INVALID | right |"),
        "| --- | --- | --- | --- | --- | --- |",
        *lines,
    ])
    print(table)
    if args.write:
        write_section(BEGIN, END, table)


if __name__ == "__main__":
    main()
