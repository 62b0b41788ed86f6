"""Side-by-side timing: ireebench (in-process runtime) vs the native iree-benchmark-module.

Compiles a few programs, then alternates native and ireebench runs (so machine
noise hits both alike) and prints, per benchmark, the median reported
real time of each and their ratio (ireebench / native). A ratio near 1.00
means ireebench reports the same time as the native tool.

    python benchmarks/compare_native.py [--rounds 5] [--device local-sync]

Needs iree-base-compiler (pip install ".[compiler]").
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = {
    # A trivial function: measures per-invocation overhead.
    "trivial": """
func.func @trivial() -> tensor<4xf32> {
  %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = arith.mulf %c, %c : tensor<4xf32>
  return %0 : tensor<4xf32>
}
""",
    "matmul": (ROOT / "examples" / "matmul.mlir").read_text(),
}


def compile_program(source: str, output: Path) -> None:
    from iree.compiler import tools

    output.write_bytes(tools.compile_str(source, extra_args=[
        "--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
        "--iree-llvmcpu-target-cpu=host"]))


# glibc returns freed heap memory to the OS and grows it back on the next
# allocation; in the native tool's small process that happens every
# iteration for programs with large transient buffers (two brk calls per
# iteration under strace) and inflates its times. Raising the trim threshold
# removes that artifact; the "native*" column shows the native tool so.
NO_TRIM = {"MALLOC_TRIM_THRESHOLD_": "1000000000", "MALLOC_TOP_PAD_": "16777216"}


def real_times(command: list[str], env: dict | None = None) -> dict[str, float]:
    """Runs a benchmark command with JSON output; returns name -> median real_time."""
    proc = subprocess.run(command, capture_output=True, text=True, check=True,
                          env={**os.environ, **(env or {})})
    report = json.loads(proc.stdout)
    times: dict[str, list[float]] = {}
    for run in report["benchmarks"]:
        if run.get("run_type") == "iteration":
            times.setdefault(run["run_name"], []).append(run["real_time"])
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--device", default="local-sync")
    parser.add_argument("--min_time", default="0.2s")
    args = parser.parse_args()

    from iree.runtime.benchmark import benchmark_exe

    native = str(Path(benchmark_exe()).resolve())
    ours = [sys.executable, "-m", "ireebench"]
    with tempfile.TemporaryDirectory(prefix="ireebench-bench-") as scratch:
        print(f"{'benchmark':<48} {'native':>10} {'native*':>10} {'ireebench':>10} "
              f"{'ratio':>7} {'ratio*':>7}")
        for name, source in PROGRAMS.items():
            module = Path(scratch) / f"{name}.vmfb"
            compile_program(source, module)
            flags = [f"--module={module}", f"--device={args.device}", "--benchmark_format=json",
                     f"--benchmark_min_time={args.min_time}", "--benchmark_repetitions=3"]
            samples: dict[str, dict[str, list[float]]] = {"native": {}, "native*": {}, "ours": {}}
            runs = (("native", [native], None), ("native*", [native], NO_TRIM),
                    ("ours", ours, None))
            for _ in range(args.rounds):  # alternate so drift affects all alike
                for key, command, env in runs:
                    for bench, value in real_times(command + flags, env).items():
                        samples[key].setdefault(bench, []).append(value)
            for bench in samples["native"]:
                n, n_star, o = (statistics.median(samples[key].get(bench, [float("nan")]))
                                for key in ("native", "native*", "ours"))
                print(f"{bench:<48} {n:10.5f} {n_star:10.5f} {o:10.5f} "
                      f"{o / n:7.2f} {o / n_star:7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
