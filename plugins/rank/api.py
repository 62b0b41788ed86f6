"""``benchmark_module``: ``iree.runtime.benchmark_module`` measured through a warm worker.

A tuner that calls ``iree.runtime.benchmark_module(module, entry_function,
inputs, timeout, device=..., **flags)`` once per candidate (sharktuner's
libtuner does) starts the native tool once per candidate: a process, a
device, the inputs, every time. This function has the same signature and
returns the same type (a list of ``iree.runtime.benchmark.BenchmarkResult``,
one per row of the native tool's JSON report: name, time and CPU time as
``"<value> <unit>"`` strings, iterations, and the row itself), but keeps
one warm worker per device, function, inputs and flags (:class:`WarmBenchmark`),
which loads each module into the device it already holds. So a tuner
changes one import::

    from ireebench.plugins.rank import benchmark_module   # was: from iree.runtime import ...

The flags are ireebench's (the native tool's: ``benchmark_repetitions=3``,
``benchmark_min_time="0.1s"``, runtime flags; ireebench's own, such as
``benchmark_min_rel_accuracy``, too). A timeout raises
``BenchmarkTimeoutError`` and kills the worker (the next call starts a new
one); a failed or crashed benchmark raises ``BenchmarkToolError``, as the
wrapper does. ``executable`` is accepted and not used: nothing runs the
native tool. Workers end with the process, or with :func:`close_workers`.

Threads: one lock serialises the calls (a tuner's thread pool gets each
caller's own result; the device measures one candidate at a time anyway).
A ``fork()``ed child (a ``multiprocessing`` fork pool) forgets its parent's
workers and scratch folder without closing them: its first call starts a
worker of its own, and its exit leaves its parent's.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import io
import json
import os
import select
import sys
import tempfile
import threading
import time
from collections import deque
from pathlib import Path

import iree.runtime as rt
import numpy as np
from iree.runtime.benchmark import BenchmarkResult, BenchmarkTimeoutError, BenchmarkToolError
from ireebench import UsageError
from ireebench.backend import Scratch, file_sha256
from ireebench.commands import build_command_group, load_plugins, parse_args
from ireebench.lib.channel import decode_error
from ireebench.lib.gbench_json import run_lines

from .devices import DeviceSpec
from .losses import START_SECONDS
from .measure import Job
from .results import Measurement, State
from .worker import WorkerProcess

DEFAULT_DEVICE = "local-task"

_WORKERS: dict[tuple, WarmBenchmark] = {}
_LOCK = threading.RLock()


def _flag_values(kwargs: dict) -> list[str]:
    """``--key=value`` per value, as the wrapper writes them (lists repeat the flag)."""
    flags = []
    for key, value in kwargs.items():
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(item, bool):
                item = "true" if item else "false"
            flags.append(f"--{key}={item}")
    return flags


class WarmBenchmark:
    """One warm worker: a device, a function, its inputs and flags, kept for every module."""

    def __init__(self, device: str, function: str, first_module: str, flags: list[str]):
        self.device = device
        self.function = function
        self.flags = flags
        self.first_module = first_module
        self.worker: WorkerProcess | None = None
        self.config = None
        # Messages read but not yet taken: one read may bring several (``begin`` and
        # ``result`` together, when the measurement is quick).
        self.pending: deque = deque()

    def _configure(self):
        argv = [f"--module={self.first_module}", f"--device={self.device}",
                f"--function={self.function}", *self.flags]
        invocation = load_plugins(argv, io.StringIO(), sys.stderr)
        invocation.commands = build_command_group(invocation.pm)
        config = parse_args(invocation.argv, invocation)
        if config is None:
            raise ValueError(f"benchmark_module: {' '.join(self.flags)}: not a measurement")
        return config

    def _start(self) -> None:
        if self.config is None:
            self.config = self._configure()
        baseline = Job("baseline", self.first_module, file_sha256(self.first_module),
                       baseline=True)
        self.worker = WorkerProcess.start(self.config, DeviceSpec(self.device, self.device),
                                          self.function, baseline, False)
        kind, args = self._next(time.monotonic() + START_SECONDS)
        if kind != "ready":
            self.close()
            error = decode_error(args[0]) if kind == "failed" and args else None
            raise BenchmarkToolError(f"cannot start a worker on {self.device}: "
                                     f"{error if error is not None else kind}")

    def _next(self, deadline: float | None) -> tuple[str, list]:
        """The worker's next message (``("timeout", [])``, ``("ended", [])``)."""
        worker = self.worker
        while True:
            while self.pending:
                kind, args = self.pending.popleft()
                if kind == "write":
                    stream = sys.stdout if args[0] == "stdout" else sys.stderr
                    stream.write(args[1])
                    continue
                return kind, args
            self.pending.extend(worker.receive())
            if self.pending:
                continue
            if worker.ended:
                return "ended", []
            timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
            if timeout == 0.0:
                return "timeout", []
            select.select([worker.replies], [], [], timeout)

    def measure(self, path: str, timeout: float | None) -> Measurement:
        """One module measured (a new worker first, if the last one is gone)."""
        if self.worker is None:
            self._start()
        worker = self.worker
        if not worker.send("measure", Job(Path(path).stem, path, file_sha256(path)).to_data()):
            return self._lost(f"the worker process {worker.death()}")
        deadline = None
        while True:
            kind, args = self._next(deadline)
            if kind == "begin":
                deadline = None if timeout is None else time.monotonic() + timeout
            elif kind == "result":
                return Measurement.from_data(args[0])
            elif kind == "error":
                self.close()
                raise decode_error(args[0])
            elif kind == "timeout":
                self.close()
                raise BenchmarkTimeoutError(f"Benchmark timed out after {timeout} seconds")
            elif kind == "ended":
                return self._lost(f"the worker process {worker.death()} while running {path}")

    def _lost(self, message: str) -> Measurement:
        self.close()
        return Measurement(State.CRASHED, message)

    def close(self) -> None:
        if self.worker is not None:
            self.worker.close(stop=self.worker.busy is None and not self.worker.ended)
            self.worker = None
        self.pending.clear()


def warm_workers() -> list[WarmBenchmark]:
    """The warm workers :func:`benchmark_module` keeps (one per device)."""
    return list(_WORKERS.values())


def close_workers() -> None:
    """Ends every warm worker :func:`benchmark_module` started, and removes the files
    it wrote for them."""
    while _WORKERS:
        _, warm = _WORKERS.popitem()
        warm.close()
    while _SCRATCH:
        scratch = _SCRATCH.pop()
        if scratch.pid == os.getpid():  # a forked child at its exit leaves its parent's
            scratch.remove()


atexit.register(close_workers)


def _forget_the_parents() -> None:
    """In a forked child: the parent's workers and scratch are the parent's to close."""
    global _LOCK
    _LOCK = threading.RLock()  # another thread of the parent may have held it
    _WORKERS.clear()
    _SCRATCH.clear()


os.register_at_fork(after_in_child=_forget_the_parents)


def _write_once(path: Path, data: bytes) -> None:
    """``data`` at ``path`` whole or not at all: a copy cut short (a full disk) would
    otherwise stay under its hash name and fail every later call with that module."""
    if path.exists():
        return
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".partial-")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _module_file(module, scratch: Path) -> str:
    """A file with the module's bytes (a ``VmModule``'s stashed flatbuffer)."""
    if isinstance(module, rt.VmModule):
        data = bytes(module.stashed_flatbuffer_blob)
        path = scratch / f"{hashlib.sha256(data).hexdigest()[:24]}.vmfb"
        _write_once(path, data)
        return str(path)
    return os.fspath(module)


def _input_flags(inputs, scratch: Path) -> list[str]:
    """``--input`` values: strings as they are, arrays as .npy files (exact values)."""
    flags = []
    for value in inputs or []:
        if isinstance(value, str):
            flags.append(f"--input={value}")
            continue
        array = np.asarray(value)
        buffer = io.BytesIO()
        np.save(buffer, array, allow_pickle=False)
        data = buffer.getvalue()
        path = scratch / f"input-{hashlib.sha256(data).hexdigest()[:24]}.npy"
        _write_once(path, data)
        flags.append(f"--input=@{path}")
    return flags


def _entry_function(module, path: str, entry_function: str | None) -> str:
    """The function to measure, as the wrapper chooses it (its ValueErrors too)."""
    if isinstance(module, rt.VmModule):
        functions = [name for name in module.function_names if name != "__init"]
    else:
        loaded = rt.VmModule.copy_buffer(rt.VmInstance(), Path(path).read_bytes())
        functions = [name for name in loaded.function_names if name != "__init"]
    if entry_function is None:
        if len(functions) != 1:
            raise ValueError(f"No function specified with multiple options {functions}")
        return functions[0]
    if entry_function not in functions:
        raise ValueError(f"Attempted to benchmark unknown function {entry_function} of "
                         f"options {functions}")
    return entry_function


_SCRATCH: list[Scratch] = []


def _scratch() -> Path:
    """Where the modules and inputs given as objects are written for the worker: removed
    at exit (:func:`close_workers`), or by the next process's if this one is killed."""
    if not _SCRATCH:
        _SCRATCH.append(Scratch("ireebench-warm-"))
    return Path(_SCRATCH[0].path)


def _results(measurement: Measurement) -> list:
    """The rows as ``BenchmarkResult`` s, exactly as the wrapper parses the native JSON."""
    results = []
    fields = BenchmarkResult._fields
    for run in measurement.rows:
        row = json.loads("{" + ",".join(run_lines(run)) + "}")
        unit = row["time_unit"]
        real_time, cpu_time = row["real_time"], row["cpu_time"]
        if row.get("aggregate_unit") == "percentage":
            unit, real_time, cpu_time = "%", real_time * 100, cpu_time * 100
        values = {"benchmark_name": row["name"], "time": f"{real_time} {unit}",
                  "cpu_time": f"{cpu_time} {unit}", "iterations": str(row["iterations"]),
                  "report": row,
                  "user_counters": {name: counter.value for name, counter in
                                    run.counters.items()}}
        results.append(BenchmarkResult(**{name: values.get(name) for name in fields}))
    return results


def _measure(key: tuple, warm: WarmBenchmark, path: str, timeout) -> Measurement:
    device, function, flags = key[0], key[1], list(key[2])
    try:
        measurement = warm.measure(path, timeout)
    except UsageError as exc:
        _WORKERS.pop(key, None)
        warm.close()
        raise BenchmarkToolError(str(exc)) from None
    if measurement.state is State.LOAD_FAILED and "other arguments" in measurement.message:
        # Another signature than the worker's first module: a worker of its own.
        _WORKERS.pop(key).close()
        _WORKERS[key] = WarmBenchmark(device, function, path, flags)
        measurement = _WORKERS[key].measure(path, timeout)
    return measurement


def benchmark_module(module, entry_function=None, inputs=None, timeout=None, executable=None,
                     **kwargs) -> list:
    """``iree.runtime.benchmark_module``, measured by a warm worker (see the module docstring)."""
    if "benchmark_out" in kwargs or "benchmark_out_format" in kwargs:
        raise ValueError("benchmark_module reads results from its own JSON file")
    with _LOCK:
        return _benchmark_module(module, entry_function, inputs, timeout, kwargs)


def _benchmark_module(module, entry_function, inputs, timeout, kwargs) -> list:
    scratch = _scratch()
    path = _module_file(module, scratch)
    function = _entry_function(module, path, entry_function)
    device = str(kwargs.pop("device", None) or DEFAULT_DEVICE)
    flags = _input_flags(inputs, scratch) + _flag_values(kwargs)
    key = (device, function, tuple(flags))
    warm = _WORKERS.get(key)
    if warm is None:
        for other in [k for k in _WORKERS if k[0] == device]:  # one worker per device
            _WORKERS.pop(other).close()
        warm = _WORKERS[key] = WarmBenchmark(device, function, path, flags)
    try:
        measurement = _measure(key, warm, path, timeout)
    finally:
        # A module given as an object was written for this call only: a tuner's thousands
        # of candidates are not all kept (a worker's first one is: a new worker reads it).
        if isinstance(module, rt.VmModule) and \
                path not in {kept.first_module for kept in _WORKERS.values()}:
            with contextlib.suppress(OSError):
                os.unlink(path)
    if measurement.state is not State.OK and measurement.state is not State.WRONG_OUTPUT:
        failed = [run for run in measurement.rows if run.error_occurred]
        name = failed[0].benchmark_name if failed else f"BM_{function}"
        raise BenchmarkToolError(f"{name}: {measurement.message}")
    return _results(measurement)
