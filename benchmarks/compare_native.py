"""Side by side: ireebench (in-process runtime) vs the native iree-benchmark-module.

Compiles five workloads — a trivial function, a ~1 ms MLP
(benchmarks/mlp.mlir), a ~2 ms transformer block
(benchmarks/transformer_block.mlir), the MLP compiled with
``--iree-execution-model=async-external`` run as an async batch
(``--batch_size=8 --batch_concurrency=2``), and a dispatch benchmark wrapper
of the MLP (``--iree-hal-dump-executable-benchmarks-to``, as
tests/conftest.py's ``dispatch_module``) — plus the MLP with
``--dispatch_statistics``. Each tool runs in both heap regimes, set the
same way in both, so that each ratio compares like with like (see
``--malloc_trim`` in docs/usage.md): **native on** (iree-benchmark-module
with the ``MALLOC_*`` variables of ``--malloc_trim=on``: freed memory
returned at once, every iteration faulting its buffers back in) against
**ireebench on** (``--malloc_trim=on``), and **native off** (the native
tool with ``MALLOC_TRIM_THRESHOLD_=1000000000 MALLOC_TOP_PAD_=16777216``)
against **ireebench** (its default, ``--malloc_trim=off``); plus
**native**, the native tool as it is (glibc's defaults, whose regime
depends on the heap's layout: for some command lines every iteration
faults, for others none), against ireebench's default: the numbers a user
switching tools compares. Alternating the tools round after round (so
machine drift hits all alike), it measures for each:

- **time**: the median reported ``real_time`` of the repetitions;
- **wall**: the whole process, start to exit (startup, calibration, repetitions);
- **peak RSS**: ``ru_maxrss`` of the process from ``wait4`` (its waited
  children too: the native profiling pass of ``--dispatch_statistics``
  counts), taken by a small middleman process (see ``MIDDLEMAN``);
- **startup**: the whole process with ``--benchmark_list_tests`` (load the
  runtime and the module, list the benchmarks, exit); wall, peak RSS and
  startup of native and ireebench only;
- **CV**: the ``_cv`` aggregate (stddev / mean of the repetitions);
- **CPU ratio**: the ratios of the median ``cpu_time`` of the repetitions
  (less sensitive to other processes than the wall-clock times).

Each number is the median over the rounds. It prints a table and, with
``--write``, puts it with the machine it ran on into docs/performance.md
(between the ``compare_native`` markers), plus the resident memory of
ireebench's pieces (interpreter, numpy, iree.runtime, ireebench).

    python benchmarks/compare_native.py [--rounds 3] [--device local-sync] [--write]

Needs iree-base-compiler (pip install ".[compiler]").
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ireebench.plugins.allocator import tool_variables

ROOT = Path(__file__).resolve().parent.parent
PERFORMANCE_MD = ROOT / "docs" / "performance.md"
TRIVIAL = """
func.func @trivial() -> tensor<4xf32> {
  %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = arith.mulf %c, %c : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
CPU_FLAGS = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
             "--iree-llvmcpu-target-cpu=host"]
ASYNC = "--iree-execution-model=async-external"
BEGIN, END = "<!-- compare_native: begin -->", "<!-- compare_native: end -->"

# glibc returns freed heap memory to the OS and grows it back on the next
# allocation; in the native tool's small process that can happen every
# iteration for programs with large transient buffers. "native off" runs it
# with trimming off (the usual recipe), the regime of ireebench's default
# --malloc_trim=off; "native on" with the variables of --malloc_trim=on.
NO_TRIM = {"MALLOC_TRIM_THRESHOLD_": "1000000000", "MALLOC_TOP_PAD_": "16777216"}
TRIM = tool_variables("on")
# Each ratio: (name, ireebench's tool, the native tool it is compared with).
RATIOS = [("ratio on", "ireebench on", "native on"), ("ratio off", "ireebench", "native off"),
          ("ratio as they are", "ireebench", "native")]
# The tools whose wall time, peak RSS and startup are reported (those barely
# depend on the heap regime).
AS_THEY_ARE = ("native", "ireebench")


def compile_source(source: str, output: Path, *flags: str) -> Path:
    from iree.compiler import tools

    output.write_bytes(tools.compile_str(source, extra_args=[*CPU_FLAGS, *flags],
                                         input_type="auto"))
    return output


def compile_dispatch_wrapper(source: str, scratch: Path) -> Path:
    """The MLP's matmul dispatch as a benchmark wrapper (iree.benchmark = "dispatch")."""
    from iree.compiler import tools

    dump = scratch / "dispatch_dump"
    dump.mkdir()
    tools.compile_str(source, extra_args=[*CPU_FLAGS,
                                          f"--iree-hal-dump-executable-benchmarks-to={dump}"])
    sources = sorted(dump.glob("*.mlir"), key=lambda p: ("matmul" not in p.name, p.name))
    output = scratch / "dispatch.vmfb"
    output.write_bytes(tools.compile_file(str(sources[0]), extra_args=CPU_FLAGS))
    return output


@dataclass
class Workload:
    name: str
    module: Path
    flags: list[str] = field(default_factory=list)


@dataclass
class Process:
    stdout: str
    wall: float  # seconds
    peak_rss_mib: float
    minor_faults: int = 0  # the process's and its waited children's (wait4's ru_minflt)
    cpu: float = 0.0  # user + system seconds of the process and its waited children


# Peak RSS needs care: a child's ru_maxrss starts at the resident size of the
# process it was forked from (Linux records the old address space's high
# water mark at exec), so children of this script (which holds the compiler,
# ~90 MiB) would all read ~90 MiB. A small middleman (python -S, ~9 MiB)
# forks and execs the command, then reports its wait4 rusage and wall time.
MIDDLEMAN = """
import os, sys, time
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - start
with open(sys.argv[1], "w") as report:
    report.write(f"{usage.ru_maxrss} {wall} {usage.ru_minflt} {usage.ru_utime + usage.ru_stime}")
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run_process(command: list[str], env: dict | None = None) -> Process:
    """Runs a command: its stdout, wall time (fork to exit) and peak RSS (wait4: the
    process and its waited children, such as a native profiling pass)."""
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "usage"
        proc = subprocess.run([sys.executable, "-S", "-c", MIDDLEMAN, str(report), *command],
                              capture_output=True, stdin=subprocess.DEVNULL, check=False,
                              env={**os.environ, **(env or {})})
        if proc.returncode != 0:
            raise RuntimeError(f"{command}: exit {proc.returncode}: "
                               f"{proc.stderr.decode(errors='replace')[-2000:]}")
        maxrss_kib, wall, faults, cpu = report.read_text().split()
        return Process(proc.stdout.decode(), float(wall), int(maxrss_kib) / 1024.0, int(faults),
                       float(cpu))


@dataclass
class Samples:
    time: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)  # median cpu_time of the repetitions
    wall: list[float] = field(default_factory=list)
    rss: list[float] = field(default_factory=list)
    startup: list[float] = field(default_factory=list)
    cv: list[float] = field(default_factory=list)
    unit: str = ""

    def add(self, run: Process, startup: Process | None) -> None:
        report = json.loads(run.stdout)
        rows = [b for b in report["benchmarks"] if "/process_time/real_time" in b["run_name"]]
        reps = [b["real_time"] for b in rows if b["run_type"] == "iteration"]
        cvs = [b["real_time"] for b in rows if b.get("aggregate_name") == "cv"]
        self.unit = rows[0]["time_unit"]
        self.time.append(statistics.median(reps))
        self.cpu.append(statistics.median(b["cpu_time"] for b in rows
                                          if b["run_type"] == "iteration"))
        self.cv.extend(cvs[:1])
        self.wall.append(run.wall)
        self.rss.append(run.peak_rss_mib)
        if startup is not None:
            self.startup.append(startup.wall)


def write_section(begin: str, end: str, section: str, path: Path = PERFORMANCE_MD) -> None:
    """Replaces the text between the ``begin`` and ``end`` markers of ``path``
    (docs/performance.md)."""
    text = path.read_text()
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    path.write_text(head + begin + "\n" + section + "\n" + end + tail)
    print(f"wrote {path}", file=sys.stderr)


def med(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def machine() -> str:
    """CPU model, cores, memory, OS, Python, IREE runtime: where the numbers come from."""
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        mem = int(Path("/proc/meminfo").read_text().split()[1]) / 1024 / 1024
    except (OSError, ValueError, IndexError):
        mem = float("nan")
    from importlib.metadata import version

    try:
        runtime = version("iree-base-runtime")
    except Exception:  # noqa: BLE001 - only for the description
        runtime = "unknown"
    return (f"{model}, {os.cpu_count()} CPUs, {mem:.0f} GiB; {platform.system()} "
            f"{platform.release()}; Python {platform.python_version()}; "
            f"iree-base-runtime {runtime}")


def memory_breakdown() -> list[tuple[str, float]]:
    """Peak RSS of a Python process importing ireebench's pieces one by one."""
    steps = [("python -c pass", "pass"),
             ("+ import numpy", "import numpy"),
             ("+ import iree.runtime", "import numpy, iree.runtime"),
             ("+ import ireebench (CLI, plugins)",
              ("import numpy, iree.runtime, ireebench, ireebench._cli, ireebench._pluginmanager as p; "
              "[__import__(m) for m in p.BUILTIN_PLUGINS.values()]"))]
    return [(label, med([run_process([sys.executable, "-c", code]).peak_rss_mib
                         for _ in range(3)])) for label, code in steps]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--device", default="local-sync")
    parser.add_argument("--min_time", default="0.2s")
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--write", action="store_true", help=f"write {PERFORMANCE_MD}")
    args = parser.parse_args()

    from iree.runtime.benchmark import benchmark_exe

    native = str(Path(benchmark_exe()).resolve())
    ours = [sys.executable, "-m", "ireebench"]
    tools = [("native", [native], None), ("native on", [native], TRIM),
             ("ireebench on", [*ours, "--malloc_trim=on"], None),
             ("native off", [native], NO_TRIM), ("ireebench", ours, None)]
    started = datetime.datetime.now().astimezone()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="ireebench-bench-") as scratch_dir:
        scratch = Path(scratch_dir)
        mlp_source = (ROOT / "benchmarks" / "mlp.mlir").read_text()
        mlp = compile_source(mlp_source, scratch / "mlp.vmfb")
        workloads = [
            Workload("trivial function", compile_source(TRIVIAL, scratch / "trivial.vmfb")),
            Workload("MLP (~1 ms)", mlp),
            Workload("transformer block (~2 ms)", compile_source(
                (ROOT / "benchmarks" / "transformer_block.mlir").read_text(),
                scratch / "transformer.vmfb")),
            Workload("async batch (8, concurrency 2)",
                     compile_source(mlp_source, scratch / "mlp_async.vmfb", ASYNC),
                     ["--batch_size=8", "--batch_concurrency=2"]),
            Workload("dispatch wrapper", compile_dispatch_wrapper(mlp_source, scratch)),
            Workload("MLP, --dispatch_statistics", mlp, ["--dispatch_statistics"]),
        ]
        samples = {(w.name, tool): Samples() for w in workloads for tool, _, _ in tools}
        for round_index in range(args.rounds):  # alternate so drift affects all alike
            for workload in workloads:
                flags = [f"--module={workload.module}", f"--device={args.device}",
                         *workload.flags]
                measure = [*flags, "--benchmark_format=json",
                           f"--benchmark_min_time={args.min_time}",
                           f"--benchmark_repetitions={args.repetitions}"]
                for tool, command, env in tools:
                    startup = (run_process(command + flags[:2] + ["--benchmark_list_tests"], env)
                               if tool in AS_THEY_ARE else None)
                    run = run_process(command + measure, env)
                    samples[(workload.name, tool)].add(run, startup)
            print(f"round {round_index + 1}/{args.rounds} done", file=sys.stderr)
        breakdown = memory_breakdown()
    load_after = os.getloadavg()

    names = [tool for tool, _, _ in tools]
    header = ["workload", "unit", *[f"time {n}" for n in names], *[r for r, _, _ in RATIOS],
              *[f"CPU {r}" for r, _, _ in RATIOS],
              *[f"wall {n} (s)" for n in AS_THEY_ARE],
              *[f"peak RSS {n} (MiB)" for n in AS_THEY_ARE],
              *[f"startup {n} (s)" for n in AS_THEY_ARE], *[f"CV {n}" for n in names]]
    rows = []
    for workload in workloads:
        got = {n: samples[(workload.name, n)] for n in names}
        t = {n: med(s.time) for n, s in got.items()}
        c = {n: med(s.cpu) for n, s in got.items()}
        rows.append([workload.name, got["native"].unit, *[f"{t[n]:.4g}" for n in names],
                     *[f"{t[a] / t[b]:.2f}" for _, a, b in RATIOS],
                     *[f"{c[a] / c[b]:.2f}" for _, a, b in RATIOS],
                     *[f"{med(got[n].wall):.2f}" for n in AS_THEY_ARE],
                     *[f"{med(got[n].rss):.0f}" for n in AS_THEY_ARE],
                     *[f"{med(got[n].startup):.3f}" for n in AS_THEY_ARE],
                     *[f"{100 * med(got[n].cv):.1f} %" for n in names]])
    table = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    table += ["| " + " | ".join(row) + " |" for row in rows]
    memory = ["| process | peak RSS (MiB) |", "| --- | --- |"]
    memory += [f"| {label} | {rss:.0f} |" for label, rss in breakdown]
    settings = (f"`--device={args.device} --benchmark_min_time={args.min_time} "
                f"--benchmark_repetitions={args.repetitions}`, {args.rounds} rounds alternating "
                "the tools; each number is the median over the rounds")
    section = "\n".join([
        f"Run on {started:%Y-%m-%d %H:%M %Z}: {machine()}.",
        (f"Load average {load_before[0]:.2f} before, {load_after[0]:.2f} after. Settings: "
        f"{settings}. native: the native tool as it is (glibc's defaults); native on: with "
        f"{' '.join(f'{k}={v}' for k, v in TRIM.items())} (`--malloc_trim=on`'s "
        "parameters); ireebench on: `--malloc_trim=on`; native off: the native tool with "
        f"trimming off ({' '.join(f'{k}={v}' for k, v in NO_TRIM.items())}); ireebench: "
        "its default (`--malloc_trim=off`). ratio on: ireebench on / native on; ratio off: "
        "ireebench / native off (each in the same regime); ratio as they are: ireebench / "
        "native, each with its defaults; CPU ratio: the same of the median CPU time of "
        "the repetitions, which other processes taking the CPU do not inflate."),
        "", *table, "", ("Resident memory of ireebench's pieces (peak RSS of `python -c`, "
        "median of 3):"), "", *memory])
    print(section)
    if args.write:
        write_section(BEGIN, END, section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
