"""Startup: what a command costs before (or without) measuring anything.

Every ``ireebench`` process pays for its imports before it reads its
command line; a command that measures nothing should pay for little more
than the interpreter. This script runs, as whole processes, side by side
in rounds (a rotating order, so that the machine's drift falls on all of
them alike):

- **floor**: ``python -c pass`` (the same interpreter and site-packages);
- ``ireebench --help``, ``--version``, ``plugins``;
- ``ireebench compare a.json b.json`` (10 benchmarks, 5 repetitions each);
- ``ireebench history`` (an SQLite store of 50 runs of those 10 benchmarks);
- ``ireebench report t.json -o r.html`` (1 benchmark);
- ``ireebench --benchmark_list_tests --module=m.vmfb`` and the native tool's;
- a plain run of a trivial function (``--benchmark_min_time=0.1s``), with
  the worker (the default) and ``--isolation=none``: the worker's cost.

Each process's CPU time is its user + system time and its waited
children's (``wait4``: a worker counts), its wall time from start to exit.
A command's cost over the floor is the median over the rounds of its CPU
time minus the floor's of the same round. With ``--before REV``, each
ireebench command also runs as of git revision ``REV`` (its ``core/`` and
``plugins/`` unpacked into a scratch directory, found first on
``PYTHONPATH``), in the same rounds. Bytecode is cached as an installed
package has it (``PYTHONDONTWRITEBYTECODE`` is dropped and one round runs
first uncounted). It prints the table of the targets of issues 27 and 39 and, with
``--write``, puts it with the machine and its load into
docs/performance.md (between the ``startup`` markers).

    python benchmarks/startup.py [--rounds 15] [--before REV] [--write]

Needs iree-base-compiler (pip install ".[compiler]").
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from compare_native import ROOT, compile_source, machine, write_section
from ireebench.native.tools import BENCHMARK_TOOL, tool_path

BEGIN, END = "<!-- startup: begin -->", "<!-- startup: end -->"
DEVICE = "local-sync"
FUNCTIONS = 10  # the benchmarks of a.json, b.json and the store
STORED_RUNS = 50
TRIVIAL = """
func.func @trivial() -> tensor<4xf32> {
  %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = arith.mulf %c, %c : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
# What the commands that need a library import of it, alone: what a target must leave
# room for (a command cannot cost less than the floor plus its library).
LIBRARIES = {
    "iree.runtime (imports numpy)": "iree.runtime",
    "numpy": "numpy",
    "sqlalchemy (what history opens)": "sqlalchemy, sqlalchemy.dialects.sqlite.pysqlite",
    "matplotlib (what report draws with)": "matplotlib.figure, matplotlib.backends.backend_svg",
    "click + pluggy": "click, pluggy",
}
# Issue 27's targets: (row label, what is measured, bound in seconds).
OVER_FLOOR, ABSOLUTE, SAVED = "CPU over the floor", "CPU", "wall saved"


def many_functions(count: int) -> str:
    """A module of ``count`` trivial functions (``f0`` ...)."""
    return "\n".join(TRIVIAL.replace("@trivial", f"@f{index}") for index in range(count))


@dataclass
class Sample:
    cpu: float
    wall: float


@dataclass
class Command:
    """One command line, measured once per round."""

    label: str
    argv: list[str]
    env: dict = field(default_factory=dict)
    samples: list[Sample] = field(default_factory=list)
    # Exit statuses of a command that did its work (compare: a verdict).
    exit_codes: tuple = (0,)

    def cpu(self) -> list[float]:
        return [sample.cpu for sample in self.samples]

    def wall(self) -> list[float]:
        return [sample.wall for sample in self.samples]


def run_timed(argv: list[str], env: dict, cwd: Path, exit_codes=(0,)) -> Sample:
    """Runs ``argv`` to its end: its CPU time (user + system, its waited children
    included: ``wait4``) and wall time; output discarded, a failure (an exit status
    not in ``exit_codes``) raised."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as errors:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=errors, env=env, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode not in exit_codes:
            errors.seek(0)
            raise RuntimeError(f"{' '.join(argv)}: exit {proc.returncode}: "
                               f"{errors.read().decode(errors='replace')[-2000:]}")
    return Sample(usage.ru_utime + usage.ru_stime, wall)


def unpack_revision(revision: str, target: Path) -> Path:
    """``core/`` and ``plugins/`` of git ``revision`` as an importable ``ireebench``
    package under ``target`` (put it first on PYTHONPATH)."""
    archive = target / "source.tar"
    subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", "-o", str(archive),
                    revision, "core", "plugins"], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(target / "tree", filter="data")
    package = target / "path" / "ireebench"
    package.parent.mkdir()
    (target / "tree" / "core").rename(package)
    (target / "tree" / "plugins").rename(package / "plugins")
    return target / "path"


def prepare(scratch: Path, python: list[str], env: dict) -> dict[str, Path]:
    """The modules and reports the commands read: m.vmfb (10 functions), t.vmfb
    (one), a.json and b.json (10 benchmarks), t.json (1), a store of 50 runs."""
    files = {"m.vmfb": compile_source(many_functions(FUNCTIONS), scratch / "m.vmfb"),
             "t.vmfb": compile_source(TRIVIAL, scratch / "t.vmfb")}
    measure = ["--device=" + DEVICE, "--benchmark_min_time=0.01s",
               "--benchmark_repetitions=5", "--benchmark_format=json",
               "--environment_warnings=false"]
    for name, module in (("a", "m.vmfb"), ("b", "m.vmfb"), ("t", "t.vmfb")):
        files[name] = scratch / f"{name}.json"
        subprocess.run([*python, f"--module={files[module]}", *measure,
                        f"--benchmark_out={files[name]}"], check=True, env=env,
                       stdout=subprocess.DEVNULL)
    report = json.loads(files["a"].read_text())
    reports = []
    for index in range(STORED_RUNS):  # distinct runs: their dates and times differ
        copy = json.loads(json.dumps(report))
        copy["context"]["date"] = f"2026-01-{1 + index // 24:02d}T{index % 24:02d}:00:00+00:00"
        for row in copy["benchmarks"]:
            for key in ("real_time", "cpu_time"):
                row[key] *= 1.0 + 0.002 * index
        path = scratch / f"run{index:02d}.json"
        path.write_text(json.dumps(copy))
        reports.append(str(path))
    files["store"] = scratch / "results.sqlite"
    subprocess.run([*python, "store", "import", f"--benchmark_storage={files['store']}",
                    *reports], check=True, env=env, stdout=subprocess.DEVNULL)
    return files


def commands(python: list[str], files: dict[str, Path], native: str, variant: str,
             env: dict) -> list[Command]:
    """The measured commands of one version of ireebench (``variant``: before, after)."""
    store = f"--benchmark_storage={files['store']}"
    list_tests = [f"--module={files['m.vmfb']}", f"--device={DEVICE}", "--benchmark_list_tests"]
    plain = [f"--module={files['t.vmfb']}", f"--device={DEVICE}", "--benchmark_min_time=0.1s"]
    made = [Command(f"{variant}: --help", [*python, "--help"], env),
            Command(f"{variant}: --version", [*python, "--version"], env),
            Command(f"{variant}: plugins", [*python, "plugins"], env),
            # Two runs of one module: no change, a regression or cannot judge (exit 4).
            Command(f"{variant}: compare", [*python, "compare", str(files["a"]),
                                            str(files["b"])], env, exit_codes=(0, 1, 4)),
            Command(f"{variant}: history", [*python, "history", store], env),
            Command(f"{variant}: report", [*python, "report", str(files["t"]), "-o",
                                           str(files["t"].parent / f"r-{variant}.html")], env),
            Command(f"{variant}: list_tests", [*python, *list_tests], env),
            Command(f"{variant}: plain run", [*python, *plain], env)]
    made.append(Command(f"{variant}: plain run, --isolation=none",
                        [*python, *plain, "--isolation=none"], env))
    if variant == "after":
        made.append(Command("native: list_tests", [native, *list_tests], env))
    return made


def paired(command: Command, base: Command, what: str = "cpu") -> float:
    """The median over the rounds of ``command``'s time minus ``base``'s."""
    mine, theirs = getattr(command, what)(), getattr(base, what)()
    return statistics.median(a - b for a, b in zip(mine, theirs))


TARGETS = [  # (command, what, target text, bound)
    ("--help", OVER_FLOOR, "≤ floor + 0.08 s", 0.08),
    ("--version", OVER_FLOOR, "≤ floor + 0.08 s", 0.08),
    ("plugins", OVER_FLOOR, "≤ floor + 0.08 s", 0.08),
    ("compare", OVER_FLOOR, "≤ floor + 0.12 s", 0.12),
    ("history", OVER_FLOOR, "≤ floor + 0.25 s", 0.25),
    ("report", OVER_FLOOR, "≤ floor + 0.50 s", 0.50),
    ("list_tests", ABSOLUTE, "≤ 0.10 s", 0.10),  # issue 39 item 6 (was 0.25 s)
    ("plain run", SAVED, "−0.10 s wall against before", 0.10),
]
DESCRIPTIONS = {
    "--help": "`ireebench --help`", "--version": "`ireebench --version`",
    "plugins": "`ireebench plugins`",
    "compare": f"`ireebench compare a.json b.json` ({FUNCTIONS} benchmarks)",
    "history": f"`ireebench history` (SQLite, {STORED_RUNS} runs)",
    "report": "`ireebench report t.json -o r.html` (1 benchmark)",
    "list_tests": "`ireebench --benchmark_list_tests --module=m.vmfb`",
    "plain run": "a plain run of a trivial function (whole process wall)",
}


def table(measured: dict[str, Command], has_before: bool) -> list[str]:
    floor = measured["floor"]
    lines = ["| command | target | before | after | after: CPU (s) | after: wall (s) | met |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, what, target, bound in TARGETS:
        after = measured[f"after: {name}"]
        before = measured.get(f"before: {name}")
        if what == OVER_FLOOR:
            value = paired(after, floor)
            old = f"floor + {paired(before, floor):.3f} s" if before else "-"
            new, met = f"floor + {value:.3f} s", value <= bound
        elif what == ABSOLUTE:
            value = statistics.median(after.cpu())
            old = f"{statistics.median(before.cpu()):.3f} s" if before else "-"
            new, met = f"{value:.3f} s", value <= bound
        else:
            if before is None:
                continue
            saved = paired(before, after, "wall")
            old = f"{statistics.median(before.wall()):.3f} s wall"
            new, met = f"{statistics.median(after.wall()):.3f} s wall ({-saved:+.3f} s)", \
                saved >= bound
        lines.append(f"| {DESCRIPTIONS[name]} | {target} | {old} | {new} | "
                     f"{statistics.median(after.cpu()):.3f} | "
                     f"{statistics.median(after.wall()):.3f} | {'yes' if met else 'NO'} |")
    if not has_before:
        lines.append("")
        lines.append("(no --before: the plain run's saving is not measured)")
    return lines


def others(measured: dict[str, Command]) -> list[str]:
    def row(label: str, command: Command) -> str:
        return (f"| {label} | {statistics.median(command.cpu()):.3f} | "
                f"{statistics.median(command.wall()):.3f} |")

    worker, alone = measured["after: plain run"], measured["after: plain run, --isolation=none"]
    lines = ["| process | CPU (s) | wall (s) |", "| --- | --- | --- |",
             row("floor: `python -c pass`", measured["floor"]),
             row("native tool `--benchmark_list_tests`", measured["native: list_tests"]),
             row("plain run, `--isolation=worker` (the default)", worker),
             row("plain run, `--isolation=none`", alone), ""]
    libraries = ["| library imported alone (`python -c 'import ...'`) | CPU over the floor (s) |",
                 "| --- | --- |"]
    for name in LIBRARIES:
        libraries.append(f"| {name} | {paired(measured[f'library: {name}'], measured['floor']):.3f} |")
    lines = libraries + [""] + lines
    for variant in ("before", "after"):
        if f"{variant}: plain run, --isolation=none" not in measured:
            continue
        worker = measured[f"{variant}: plain run"]
        alone = measured[f"{variant}: plain run, --isolation=none"]
        lines.append(f"The worker's cost per run, {variant} (median of the paired differences, "
                     f"worker minus `--isolation=none`): "
                     f"{paired(worker, alone, 'wall') * 1000:+.1f} ms wall, "
                     f"{paired(worker, alone) * 1000:+.1f} ms CPU.")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--before", default="", metavar="REV",
                        help="also measure ireebench as of this git revision")
    parser.add_argument("--write", action="store_true", help="write docs/performance.md")
    args = parser.parse_args()
    env = {key: value for key, value in os.environ.items()
           if key != "PYTHONDONTWRITEBYTECODE" and not key.startswith(("BENCHMARK_",
                                                                       "IREEBENCH_"))}
    python = [sys.executable, "-m", "ireebench"]
    started = datetime.datetime.now().astimezone()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="ireebench-startup-") as scratch_dir:
        scratch = Path(scratch_dir)
        files = prepare(scratch, python, env)
        measured = [Command("floor", [sys.executable, "-c", "pass"], env),
                    *[Command(f"library: {name}", [sys.executable, "-c", f"import {modules}"],
                              env) for name, modules in LIBRARIES.items()],
                    *commands(python, files, str(tool_path(BENCHMARK_TOOL)), "after", env)]
        if args.before:
            path = unpack_revision(args.before, scratch)
            before_env = {**env, "PYTHONPATH": os.pathsep.join(
                [str(path), *filter(None, [env.get("PYTHONPATH")])])}
            measured += commands(python, files, "", "before", before_env)
        for round_number in range(args.rounds + 1):  # the first one writes bytecode
            shift = round_number % len(measured)
            for command in measured[shift:] + measured[:shift]:
                sample = run_timed(command.argv, command.env, scratch, command.exit_codes)
                if round_number:
                    command.samples.append(sample)
            print(f"round {round_number}/{args.rounds}", file=sys.stderr)
    load_after = os.getloadavg()
    by_label = {command.label: command for command in measured}
    head = (f"Run on {started:%Y-%m-%d %H:%M %Z}: {machine()}.\n"
            f"Load average {load_before[0]:.2f} before, {load_after[0]:.2f} after; "
            f"{args.rounds} rounds, every command once per round in a rotating order; "
            "CPU: user + system time of the process and its waited children (`wait4`), "
            "\"floor + x\": the median over the rounds of the command's CPU time minus "
            "that of `python -c pass` in the same round"
            + (f"; before: git revision {args.before}" if args.before else "") + ".")
    section = "\n".join([head, "", *table(by_label, bool(args.before)), "",
                         *others(by_label)])
    print(section)
    if args.write:
        write_section(BEGIN, END, section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
