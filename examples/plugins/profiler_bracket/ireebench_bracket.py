"""Example plugin: an in-process profiler's bracket around each measured repetition.

An in-process profiler (VTune/ITT, Tracy, NVTX, Linux perf) must run exactly
while the benchmark is measured, not during calibration or warm-up. This
plugin wraps ``ireebench_measure_repetition``, whose wrappers bracket
exactly the measured iterations of one repetition, and:

* writes one JSON line per event to ``--bracket_log=FILE``: ``begin`` and
  ``end`` with a ``time.perf_counter_ns()`` timestamp, the benchmark, the
  repetition and, at ``end``, the repetition's reported time — so a test (or
  you) can check the bracket against the report;
* with ``--bracket_perf_control=CTL[,ACK]``, drives Linux ``perf`` through
  its control FIFOs: run ``perf record --control=fifo:CTL,ACK -D -1 --
  ireebench ... --bracket_perf_control=CTL,ACK`` and perf records only the
  measured iterations (``enable`` before, ``disable`` after; each waits for
  perf's ``ack`` when an ACK FIFO is given).

Install it (``pip install examples/plugins/profiler_bracket``: entry point
``profiler_bracket``) or load it with ``--plugin
examples/plugins/profiler_bracket/ireebench_bracket.py``. The bracket adds
nothing inside the timed loop: it runs once before and once after it.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

from ireebench import StashKey, UsageError, hookimpl
from ireebench.backend import IN_PROCESS


@dataclass
class Bracket:
    log: object | None = None  # the open --bracket_log file
    control: object | None = None  # perf's control FIFO, opened for writing
    ack: object | None = None  # perf's ack FIFO, opened for reading

    def event(self, **fields) -> None:
        if self.log is not None:
            self.log.write(json.dumps(fields) + "\n")
            self.log.flush()

    def perf(self, command: str) -> None:
        if self.control is None:
            return
        self.control.write(command + "\n")
        self.control.flush()
        if self.ack is not None:
            self.ack.readline()  # perf answers "ack" once it acted

    def close(self) -> None:
        for handle in (self.log, self.control, self.ack):
            if handle is not None:
                handle.close()


BRACKET = StashKey[Bracket]()


@hookimpl
def ireebench_addoption(parser):
    group = "profiler_bracket plugin"
    # The bracket is a wrapper of the in-process measurement: a backend that
    # measures elsewhere never calls it, so the flags are refused there.
    parser.addoption("--bracket_log", "bracket_log", default="", metavar="FILE.jsonl",
                     group=group, requires=IN_PROCESS,
                     help="Write begin/end events of each measured repetition.")
    parser.addoption("--bracket_perf_control", "bracket_perf_control", default="",
                     metavar="CTL[,ACK]", group=group, requires=IN_PROCESS,
                     help="Enable/disable Linux perf through its --control=fifo:CTL,ACK FIFOs.")


@hookimpl
def ireebench_configure(config):
    log_path = config.getoption("bracket_log")
    control = config.getoption("bracket_perf_control")
    if not (log_path or control):
        return
    bracket = Bracket()
    config.add_cleanup(bracket.close)
    config.stash[BRACKET] = bracket
    try:
        if log_path:
            bracket.log = open(log_path, "a")  # noqa: SIM115 - closed by the cleanup
        if control:
            ctl, _, ack = control.partition(",")
            bracket.control = open(ctl, "w")  # noqa: SIM115
            bracket.ack = open(ack) if ack else None  # noqa: SIM115
    except OSError as exc:
        raise UsageError(f"profiler_bracket: cannot open {exc.filename}: {exc.strerror}") \
            from None


@hookimpl(wrapper=True)
def ireebench_measure_repetition(config, workload, repetition):
    bracket = config.stash.get(BRACKET, None)
    if bracket is None:
        return (yield)
    bracket.perf("enable")
    bracket.event(event="begin", benchmark=workload.name, repetition=repetition.index,
                  time_ns=time.perf_counter_ns())
    try:
        run = yield
    finally:
        end = time.perf_counter_ns()
        bracket.perf("disable")
    bracket.event(event="end", benchmark=workload.name, repetition=repetition.index,
                  time_ns=end, iterations=run.iterations,
                  measured_seconds=run.real_accumulated_time)
    return run
