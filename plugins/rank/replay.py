"""Whole-model ranking by replay substitution (``ireebench rank --replay=CAPTURE``).

The candidates are executable payloads (what ``iree-compile
--iree-hal-dump-executable-binaries-to`` writes) for one executable of a
captured model (``--device_replay_output``); each is measured as the
whole capture replayed by the native ``iree-benchmark-replay`` with
``--replay_executable_substitution=ID=PAYLOAD``, the baseline as the
capture replayed unchanged. The ranking around it is the ranking of
modules (:mod:`.schedule`): baselines every K candidates for drift, the
paired, interleaved re-rank, the cache, the states, ``--rank_out``.

A :class:`ReplayDevice` is what a warm worker holds instead of a
:class:`~.measure.WarmDevice`: nothing warm (a native process per
measurement cannot keep a device), only the capture, the executable and
the flags. A measurement is one native process of ``max(5,
--benchmark_repetitions)`` repetitions, more of them while
``--benchmark_min_rel_accuracy`` is not reached and ``--benchmark_max_time``
is not spent. Replay's ABI check refusing a payload (another dispatch's
exports, another format) is ``load_failed`` with the tool's own line; a
payload that crashes the tool is ``crashed``.

Replay dispatches the captured workgroup counts: a payload compiled with
other distribution tile sizes than the captured executable's passes the
ABI check and computes part of the result, or faults (docs/tuning.md).
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import tempfile
import time
from pathlib import Path

from ireebench import UsageError, names, native
from ireebench.errors import one_line
from ireebench.lib.gbench_json import runs_by_benchmark
from ireebench.lib.statistics import DEFAULT_CONFIDENCE, relative_precision
from ireebench.stats import median

from .drift import BASELINE_ID
from .measure import Job, RerankResult
from .results import Measurement, State
from .stash import RANKED_METRIC

FUNCTION = "replay"  # the rows' function: BM_replay/candidate:ID/...
CHUNK = 5  # repetitions per native process while adaptive stopping asks for more
EXECUTABLE = re.compile(r"(\d+)(@\S+)?")
DUMP_TOOL = "iree-dump-replay"


def executables(capture: str) -> dict[int, str]:
    """The executables a capture prepares (``iree-dump-replay``): id -> its format and
    exports as the capture records them (``embedded-elf-x86_64: main_dispatch_0_...``)."""
    proc = native.run_tool(DUMP_TOOL, ["--format=jsonl", capture])
    if proc.returncode != 0:
        raise UsageError(f"--replay={capture}: {DUMP_TOOL} failed: "
                         f"{native.native_error_line(proc.stderr, proc.returncode)}")
    found = {}
    with open(capture, "rb") as handle:
        for line in proc.stdout.splitlines():
            if '"executable_cache.prepare_executable"' not in line:
                continue
            record = json.loads(line)
            payload = record.get("payload") or {}
            # The metadata ends with the exports' names (uncompressed in ireebench's
            # captures; a compressed range is left unnamed).
            described = []
            for key, tail in (("format_range", None),
                              ("metadata_range", "metadata_function_name_storage_length")):
                where = payload.get(key) or {}
                if where.get("compression_type", 0) or not where.get("length"):
                    continue
                handle.seek(where["offset"])
                data = handle.read(where["length"])
                if tail is not None:
                    data = data[len(data) - int(payload.get(tail) or 0):]
                described.append(data.decode("utf-8", "replace"))
            found[int(record["related_object_id"])] = ": ".join(filter(None, described))
    return found


def check_executable(capture: str, executable: str) -> None:
    """``--executable`` names one of the capture's executables (one line, listing
    them, if not)."""
    known = executables(capture)
    listed = "; ".join(f"{key} ({what})" if what else str(key) for key, what in known.items())
    match = EXECUTABLE.fullmatch(executable or "")
    if match is None or int(match.group(1)) not in known:
        said = f"--executable={executable}: " if executable else "rank: --replay needs " \
            "--executable=ID[@FORMAT], the captured executable the candidates replace: "
        raise UsageError(f"{said}{capture}'s executables: {listed or 'none'}")


class ReplayDevice:
    """One device's measurements of the capture, each in a native process."""

    def __init__(self, config, uri: str, function: str, baseline: Job,
                 check_outputs: bool = False):
        self.config = config
        self.uri = uri
        self.capture = baseline.path
        self.executable = config.getoption("executable")
        self.scope = config.getoption("replay_scope")
        accuracy = str(config.getoption("benchmark_min_rel_accuracy") or "").strip()
        self.accuracy = float(accuracy) if accuracy else None
        self.max_time = float(str(config.getoption("benchmark_max_time") or "10s")
                              .removesuffix("s"))
        self.confidence = float(config.getoption("confidence") or DEFAULT_CONFIDENCE)
        self.repetitions = int(config.getoption("benchmark_repetitions") or 1)
        # Adaptive stopping judges the time ranked (--rank_by).
        self.cpu = config.stash.get(RANKED_METRIC, None) == "cpu_time"

    def open(self) -> ReplayDevice:
        return self

    def describe(self) -> str:
        return f"{native.REPLAY_TOOL} --device={self.uri}"

    def _args(self, job: Job, repetitions: int, out: str) -> list[str]:
        args = [f"--device={self.uri}"]
        if self.scope:
            args.append(f"--replay_scope={self.scope}")
        if job.id != BASELINE_ID:
            args.append(f"--replay_executable_substitution={self.executable}={job.path}")
        flags = [flag for flag in native.benchmark_flags(self.config, user_filter=False)
                 if not flag.startswith("--benchmark_repetitions=")]
        return [*args, *self.config.runtime_flags, *flags,
                f"--benchmark_repetitions={repetitions}", f"--benchmark_out={out}",
                "--benchmark_out_format=json", self.capture]

    def _run(self, job: Job, repetitions: int) -> tuple[list, State | None, str]:
        """One native process: its repetition rows, or a failure state and its line."""
        with tempfile.TemporaryDirectory(prefix="ireebench-replay-rank-") as scratch:
            out = os.path.join(scratch, "report.json")
            proc = native.run_tool(native.REPLAY_TOOL, self._args(job, repetitions, out))
            text = Path(out).read_text() if os.path.exists(out) else ""
        try:
            report = json.loads(text) if text else None
        except ValueError:
            report = None
        status = native.native_status_line(proc.stderr)
        if proc.returncode == 0 and report is not None:
            groups = runs_by_benchmark(report)
            rows = [run for group in groups for run in group if run.run_type == "iteration"]
            failed = next((run for run in rows if run.error_occurred), None)
            if failed is None and rows:
                return rows, None, ""
            return [], State.RUNTIME_ERROR, one_line(failed.error_message if failed
                                                     else "no benchmark ran")
        if status is not None:
            # Replay's checks of a substituted payload (exports, ABI, format) fail
            # when it is prepared, before anything runs: the candidate did not load.
            state = State.LOAD_FAILED if "executable" in status or "substitut" in status \
                else State.RUNTIME_ERROR
            return [], state, status
        if proc.returncode < 0:
            number = -proc.returncode
            name = signal.Signals(number).name if number in signal.valid_signals() \
                else f"signal {number}"
            return [], State.CRASHED, (f"{native.REPLAY_TOOL} died: {name} "
                                       f"({signal.strsignal(number) or name})")
        return [], State.RUNTIME_ERROR, native.native_error_line(proc.stderr, proc.returncode)

    def _rows(self, job: Job, rows: list) -> list:
        """The native rows named as a ranking's (``BM_replay/candidate:ID/scope:...``)."""
        family = names.family_name(FUNCTION, job.params)
        for index, row in enumerate(rows):
            native_name = row.run_name
            row.name, row.function, row.params = family, FUNCTION, dict(job.params)
            row.run_name = family + native_name[native_name.find("/"):] \
                if "/" in native_name else family
            row.repetition_index, row.repetitions = index, len(rows)
        return rows

    def measure(self, job: Job) -> Measurement:
        start = time.perf_counter()
        rows: list = []
        imprecise = False
        load = None
        while True:
            chunk = max(CHUNK, self.repetitions) if self.accuracy else self.repetitions
            measured, state, message = self._run(job, chunk)
            if state is not None:
                return Measurement(state, message, elapsed=time.perf_counter() - start)
            if load is None:  # the native process's start, not its repetitions (timeouts)
                load = max(0.0, time.perf_counter() - start
                           - sum(row.real_accumulated_time for row in measured))
            rows += measured
            if self.accuracy is None:
                break
            precision = relative_precision([row.cpu_seconds if self.cpu else row.real_seconds
                                            for row in rows], self.confidence)
            if precision is not None and precision <= self.accuracy:
                break
            if time.perf_counter() - start >= self.max_time:
                imprecise = True
                break
        rows = self._rows(job, rows)
        samples = [row.real_seconds for row in rows]
        cpu = [row.cpu_seconds for row in rows]
        return Measurement(
            State.OK, rows=rows + native.aggregates(self.config, rows), samples=samples,
            seconds=median(samples), cpu_samples=cpu, cpu_seconds=median(cpu),
            precision=relative_precision(samples, self.confidence),
            cpu_precision=relative_precision(cpu, self.confidence),
            elapsed=time.perf_counter() - start, load_seconds=load or 0.0, imprecise=imprecise)

    def rerank(self, jobs: list[Job], rounds: int, seed: int) -> RerankResult:
        """``rounds`` rounds, each one native process of one repetition per job, in an
        order drawn from ``seed``; a job that fails leaves."""
        start = time.perf_counter()
        result = RerankResult()
        for job in jobs:
            result.rows[job.id] = []
            result.seconds[job.id] = [None] * rounds
            result.cpu_seconds[job.id] = [None] * rounds
        shuffle = random.Random(seed).shuffle
        for index in range(rounds):
            order = [job for job in jobs if job.id not in result.failed]
            shuffle(order)
            for job in order:
                rows, state, message = self._run(job, 1)
                if state is not None:
                    result.failed[job.id] = f"{state}: {message}"
                    continue
                result.rows[job.id] += rows
                result.seconds[job.id][index] = rows[0].real_seconds
                result.cpu_seconds[job.id][index] = rows[0].cpu_seconds
        for job in jobs:
            rows = self._rows(job, result.rows[job.id])
            result.rows[job.id] = rows + native.aggregates(self.config, rows) if rows else []
        result.elapsed = time.perf_counter() - start
        return result
