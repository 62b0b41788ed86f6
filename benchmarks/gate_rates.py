"""The gate's false alarms and detections, on real runs: identical and +50 % builds,
on a quiet machine and a loaded one.

What a CI job does, end to end, through the real CLI and a real results store
(SQLite): a module of :data:`FUNCTIONS` small functions is compiled twice, the
base build and a regressed one whose every function does 1.5 times the work
(+50 %). In each condition the base build is run :data:`HISTORY` times with
``--benchmark_save`` (the main branch's history), then each trial runs

* the base build again (an identical pull request) and gates it with
  ``ireebench compare stored:history new.json``, then saves it (the history
  rolls on, as main's does);
* the regressed build, gated the same way, not saved.

Each new run is gated twice: on real time (the default) and with
``--metric=auto``; both with ``--threshold=5%``, the default ``--alpha``
0.05, ``--correction=bh`` and ``--detectable=10%``. Conditions:

* **quiet**: nothing else runs (on a shared machine, what the others do);
* **loaded**: one busy process per CPU (``python -c "while True: pass"``)
  during the history and the trials alike;
* **mixed**: the quiet condition's history, then trials under that load (the
  pull request's run noisier than the history).

A trial's outcome is the gate's exit status: 0 pass, 1 regression, 4 cannot
judge. On identical builds a false alarm is exit 1 (every benchmark of the
suite counts: one false verdict among the eight is one false alarm); on
regressed builds a detection is exit 1, and exit 4 at least does not pass.
The benchmarks' own verdicts are counted too ("benchmarks flagged").

    python benchmarks/gate_rates.py [--trials 20] [--conditions quiet,loaded,mixed] [--write]

Cost: each trial is two measured runs and four comparisons (in this
process, through ``ireebench.run``, a tenth of a second each); with the
default 20 trials and three conditions, 135 runs in all: 10 and 17 minutes
(two measurements) on the shared 2-core machine the project is developed on,
at a load average of 7 to 15, where a run of the 8-point sweep takes 2 to
5 s; on a quiet machine, where it takes about 1 s, about 3 minutes. ``--write`` puts the table into docs/compare.md (between the
``gate_rates`` markers).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import ireebench
from compare_native import ROOT, compile_source, machine, write_section

COMPARE_MD = ROOT / "docs" / "compare.md"
BEGIN, END = "<!-- gate_rates: begin -->", "<!-- gate_rates: end -->"
FUNCTIONS = 8
HISTORY = 5
REGRESSION = 1.5
KERNEL = """
  func.func @f{index}(%x: tensor<64xf32>) -> tensor<64xf32> {{
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
RUN = ["--device=local-sync", "--input=64xf32=1", "--benchmark_repetitions=9",
       "--benchmark_min_time=10x", "--benchmark_format=json",
       "--sweep", "function=" + ",".join(f"f{index}" for index in range(FUNCTIONS))]
GATES = {"real_time": ["--threshold=5%"], "auto": ["--threshold=5%", "--metric=auto"]}
OUTCOMES = {0: "pass", 1: "regression", 4: "cannot judge"}


def module_source(scale: float) -> str:
    """Functions of 40 to 180 loop trips (0.1 to 0.4 ms a call), times ``scale``."""
    functions = "".join(KERNEL.format(index=index, trips=round((40 + 20 * index) * scale))
                        for index in range(FUNCTIONS))
    return f"module {{{functions}}}\n"


def run_env() -> dict:
    """The checks a CI run has (the test suite turns them off; here they are the point)."""
    env = dict(os.environ)
    for name in ("IREEBENCH_ENVIRONMENT_WARNINGS", "IREEBENCH_MULTIMODAL_WARNINGS"):
        env.pop(name, None)
    return env


def measure(module: Path, out: Path, storage: str, save: bool) -> None:
    command = [sys.executable, "-m", "ireebench", f"--module={module}", *RUN,
               f"--benchmark_out={out}"]
    if save:
        command += ["--benchmark_save", f"--benchmark_storage={storage}"]
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, env=run_env(), timeout=600, check=False)
    if done.returncode != 0:
        raise SystemExit(f"gate_rates: the run failed ({done.returncode}): {done.stderr}")


def store(new: Path, storage: str) -> None:
    with contextlib.redirect_stdout(io.StringIO()):
        ireebench.run(["store", "import", str(new), f"--benchmark_storage={storage}"])


def gate(new: Path, storage: str, flags: list[str]) -> tuple[int, int]:
    """(exit status, benchmarks found regressed) of ``compare stored:history``."""
    out = io.StringIO()
    result = ireebench.run(["compare", "stored:history", str(new),
                            f"--benchmark_storage={storage}", "--reporter=json", *flags],
                           stdout=out)
    return result.exit_code, len(json.loads(out.getvalue())["regressions"])


@contextlib.contextmanager
def load(on: bool):
    """One busy process per CPU while on (this script's own children, ended by pid)."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(os.cpu_count() or 1)] if on else []
    try:
        if hogs:
            time.sleep(2.0)  # the hogs on the CPUs before the first measurement
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def condition(name: str, modules: dict, directory: Path, trials: int, storage: str,
              history: bool, loaded: bool, save: bool, results: dict) -> None:
    with load(loaded):
        if history:
            for index in range(HISTORY):
                measure(modules["identical"], directory / f"{name}-h{index}.json", storage,
                        True)
        for trial in range(trials):
            for build in ("identical", "regressed"):
                new = directory / f"{name}-{build}-{trial}.json"
                measure(modules[build], new, storage, False)
                for gate_name, flags in GATES.items():
                    status, flagged = gate(new, storage, flags)
                    cell = results.setdefault((name, build, gate_name),
                                              {"trials": 0, "flagged": 0, **{
                                                  code: 0 for code in OUTCOMES}})
                    cell["trials"] += 1
                    cell[status] = cell.get(status, 0) + 1
                    cell["flagged"] += flagged
                if build == "identical" and save:
                    store(new, storage)
            print(f"{name}: trial {trial + 1}/{trials}", file=sys.stderr)


def table(results: dict) -> list[str]:
    lines = [("| condition | build | gate | trials | pass (0) | regression (1) | "
              "cannot judge (4) | benchmarks flagged |"), "| --- |" + " --- |" * 7]
    for (name, build, gate_name), cell in results.items():
        trials = cell["trials"]
        shares = [f"{100 * cell[code] / trials:.0f} %" for code in OUTCOMES]
        flagged = f"{100 * cell['flagged'] / (trials * FUNCTIONS):.1f} %"
        lines.append(f"| {name} | {build} | {gate_name} | {trials} | " + " | ".join(shares)
                     + f" | {flagged} |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=20, help="trials per condition (20)")
    parser.add_argument("--conditions", default="quiet,loaded,mixed",
                        help="which of quiet, loaded, mixed (all)")
    parser.add_argument("--write", action="store_true", help=f"write {COMPARE_MD}")
    args = parser.parse_args()
    chosen = [name.strip() for name in args.conditions.split(",") if name.strip()]
    started, load_before, clock = datetime.datetime.now(datetime.UTC), os.getloadavg(), \
        time.monotonic()
    results: dict = {}
    with tempfile.TemporaryDirectory(prefix="gate_rates-") as scratch:
        directory = Path(scratch)
        modules = {build: compile_source(module_source(scale), directory / f"{build}.vmfb")
                   for build, scale in (("identical", 1.0), ("regressed", REGRESSION))}
        quiet_store = f"sqlite:///{directory / 'quiet.sqlite'}"
        plan = {"quiet": (quiet_store, True, False, True),
                "loaded": (f"sqlite:///{directory / 'loaded.sqlite'}", True, True, True),
                # the quiet history (made here when quiet was not asked for), loaded trials
                "mixed": (quiet_store, "quiet" not in chosen, True, False)}
        for name in ("quiet", "loaded", "mixed"):
            if name in chosen:
                storage, history, loaded, save = plan[name]
                if name == "mixed" and history:
                    for index in range(HISTORY):
                        measure(modules["identical"], directory / f"mixed-h{index}.json",
                                storage, True)
                    history = False
                condition(name, modules, directory, args.trials, storage, history, loaded,
                          save, results)
    minutes = (time.monotonic() - clock) / 60
    lines = table(results)
    lines += ["", (f"Measured on {started:%Y-%m-%d %H:%M} UTC: {machine()}; load average "
                   f"{load_before[0]:.2f} before, {os.getloadavg()[0]:.2f} after; "
                   f"{minutes:.1f} minutes. `benchmarks/gate_rates.py --trials {args.trials}`: "
                   f"{FUNCTIONS} functions a run (local-sync, 9 repetitions of 10 "
                   f"iterations), {HISTORY} stored runs before the trials, the regressed "
                   f"build {REGRESSION:g}x the work; `--threshold=5%`, alpha 0.05, "
                   "Benjamini-Hochberg, `--detectable=10%`; \"loaded\": one busy process "
                   "per CPU.")]
    section = "\n".join(lines)
    print(section)
    if args.write:
        write_section(BEGIN, END, section, COMPARE_MD)
    return 0


if __name__ == "__main__":
    sys.exit(main())
