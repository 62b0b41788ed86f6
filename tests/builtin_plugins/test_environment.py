"""The ``environment`` plugin: warnings when the machine makes numbers suspect.

The suite turns the warnings off (conftest: IREEBENCH_ENVIRONMENT_WARNINGS),
so these tests turn them on with the flag. Conditions that depend on the
machine (governor, load, other processes) are checked on the plugin's
functions with made-up inputs; the CLI checks that what is found is both
in the context and on stderr.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys

import ireebench
import pytest
from ireebench._context import gather
from ireebench.plugins import environment
from ireebench.plugins.environment import ProcessSnapshot, busy_processes, read_processes

LOCAL = "--device=local-sync"


def _context(**changes):
    return dataclasses.replace(gather(), **changes)


def test_load_and_aslr(monkeypatch, tmp_path):
    monkeypatch.setattr(environment, "CPU_DIR", str(tmp_path))  # no cpufreq: no governor
    quiet = environment.environment_warnings(
        _context(num_cpus=2, load_avg=[1.5, 1.0, 1.0], aslr_enabled=False), None, None)
    assert "load_average" not in quiet and "aslr" not in quiet
    noisy = environment.environment_warnings(
        _context(num_cpus=2, load_avg=[3.25, 1.0, 1.0], aslr_enabled=True), None, None)
    assert noisy["load_average"] == ("load average 3.25 is above the 2 CPUs: other work "
                                     "competes for them")
    assert noisy["aslr"].startswith("ASLR is enabled")


def test_governor(monkeypatch, tmp_path):
    for cpu, governor in enumerate(["powersave", "performance", "powersave", "schedutil"]):
        folder = tmp_path / f"cpu{cpu}" / "cpufreq"
        folder.mkdir(parents=True)
        (folder / "scaling_governor").write_text(governor + "\n")
    monkeypatch.setattr(environment, "CPU_DIR", str(tmp_path))
    found = environment.environment_warnings(_context(num_cpus=4, load_avg=[]), None, None)
    assert found["cpu_governor"] == ("CPU frequency governor 'powersave' on 2 of 4, "
                                     "'schedutil' on 1 of 4 CPUs, not 'performance': the clock "
                                     "changes under the benchmark")
    for cpu in range(4):
        (tmp_path / f"cpu{cpu}" / "cpufreq" / "scaling_governor").write_text("performance\n")
    assert "cpu_governor" not in environment.environment_warnings(
        _context(num_cpus=4, load_avg=[]), None, None)


def test_busy_processes_leave_out_this_process_and_its_children():
    hertz = os.sysconf("SC_CLK_TCK")
    me, child, other, idle = os.getpid(), 10_000_001, 10_000_002, 10_000_003
    before = ProcessSnapshot(10.0, {me: ("python", 1, 0), child: ("tool", me, 0),
                                    other: ("stress", 1, 0), idle: ("sshd", 1, 0)})
    after = ProcessSnapshot(10.5, {me: ("python", 1, hertz), child: ("tool", me, hertz),
                                   other: ("stress", 1, int(0.45 * hertz)),
                                   idle: ("sshd", 1, 1)})
    assert busy_processes(before, after) == [("stress", other, pytest.approx(0.9, abs=0.05))]
    message = environment.environment_warnings(_context(load_avg=[]), before, after)
    assert message["busy_processes"].startswith(f"other busy processes: stress (pid {other}, ")


def test_read_processes_sees_this_process():
    snapshot = read_processes()
    name, ppid, ticks = snapshot.ticks[os.getpid()]
    assert ppid == os.getppid() and ticks >= 0 and name


def test_warnings_go_to_the_context_and_stderr(compile_mlir, ireebench):
    result = ireebench(f"--module={compile_mlir('stateful')}", LOCAL, "--benchmark_min_time=3x",
                       "--benchmark_format=json", "--environment_warnings=true")
    assert result.returncode == 0, result.stderr
    context = json.loads(result.stdout)["context"]
    warnings = context["environment_warnings"]
    assert list(context)[-1] == "environment_warnings"  # after Google Benchmark's keys
    assert ("aslr" in warnings) == context["aslr_enabled"]
    assert set(warnings) <= {"cpu_governor", "load_average", "busy_processes", "aslr",
                             "debug_runtime"}
    lines = [line for line in result.stderr.splitlines() if line]
    assert lines == [f"ireebench: warning: {message}" for message in warnings.values()]


def test_warnings_off(compile_mlir, ireebench):
    result = ireebench(f"--module={compile_mlir('stateful')}", LOCAL, "--benchmark_min_time=3x",
                       "--benchmark_format=json", "--environment_warnings=false")
    assert result.returncode == 0 and result.stderr == ""
    assert "environment_warnings" not in json.loads(result.stdout)["context"]


def test_a_python_tracer_is_a_debug_runtime(compile_mlir):
    """A tracer (coverage, a debugger) slows the timed loop: it is reported."""
    args = [f"--module={compile_mlir('stateful')}", LOCAL, "--benchmark_min_time=3x",
            "--environment_warnings=true"]
    previous = sys.gettrace()
    sys.settrace(lambda frame, event, arg: None)
    try:
        traced = ireebench.run(args)
    finally:
        sys.settrace(previous)
    assert "a Python tracer or profiler" in \
        traced.context.extra["environment_warnings"]["debug_runtime"]
    if previous is None:
        plain = ireebench.run(args)
        assert "debug_runtime" not in plain.context.extra["environment_warnings"]
