"""``--benchmark_processes=N``: a run's repetitions measured by N processes of its own.

Through the real CLI on a compiled module: each benchmark is reported once
with every repetition (renumbered, each with the process that measured it,
really another process) and the aggregates of all of them, in JSON, CSV and
the store alike; R split as evenly as possible; a sweep spreads each point;
a failing process is an error row and the others count; an interrupt leaves
a complete file; what cannot be honoured is one line naming the flag.
Nothing here depends on timing: counts, names and provenance only.
"""

from __future__ import annotations

import csv
import json
import os
import select
import signal
import statistics
import subprocess
import sys

import pytest
from conftest import _env, one_error_line

RUN = ["--device=local-sync", "--benchmark_min_time=3x", "-p", "process_probe"]
NAMES = ["BM_first/process_time/real_time", "BM_second/process_time/real_time"]


@pytest.fixture(scope="module")
def module(compile_mlir):
    return compile_mlir("two_functions")


def _rows(report: dict, name: str) -> tuple[list[dict], dict]:
    rows = [row for row in report["benchmarks"] if row["run_name"] == name]
    repetitions = [row for row in rows if row["run_type"] == "iteration"]
    aggregates = {row["aggregate_name"]: row for row in rows if row["run_type"] == "aggregate"}
    return repetitions, aggregates


def test_six_repetitions_in_three_processes_are_one_benchmark(ireebench, module, tmp_path):
    out, store = tmp_path / "out.csv", tmp_path / "store.sqlite"
    result = ireebench(f"--module={module}", *RUN, "--benchmark_repetitions=6",
                       "--benchmark_processes=3", "--benchmark_format=json",
                       f"--benchmark_out={out}", "--benchmark_out_format=csv",
                       "--benchmark_save", f"--benchmark_storage={store}")
    assert result.returncode == 0, result.stderr
    report = result.json()
    assert report["context"]["benchmark_processes"] == 3
    assert [row["run_name"] for row in report["benchmarks"]
            if row["run_type"] == "iteration"] == [NAMES[0]] * 6 + [NAMES[1]] * 6
    pids = set()
    for name in NAMES:
        repetitions, aggregates = _rows(report, name)
        assert [row["repetition_index"] for row in repetitions] == list(range(6))
        assert all(row["repetitions"] == 6 for row in repetitions)
        assert [row["process_index"] for row in repetitions] == ["0", "0", "1", "1", "2", "2"]
        # Each process is another OS process: one pid per process, three in all.
        by_process = {}
        for row in repetitions:
            by_process.setdefault(row["process_index"], set()).add(row["label"])
        assert all(len(labels) == 1 for labels in by_process.values()), by_process
        pids |= {label for labels in by_process.values() for label in labels}
        assert list(aggregates) == ["mean", "median", "stddev", "cv"]
        assert all(row["iterations"] == 6 and row["repetitions"] == 6
                   for row in aggregates.values())
        times = [row["real_time"] for row in repetitions]
        assert aggregates["mean"]["real_time"] == pytest.approx(statistics.mean(times), rel=1e-6)
        assert aggregates["median"]["real_time"] == pytest.approx(statistics.median(times),
                                                                  rel=1e-6)
        assert aggregates["stddev"]["real_time"] == pytest.approx(statistics.stdev(times),
                                                                  rel=1e-6)
    assert len(pids) == 3, pids
    # The CSV file and the store see the same ordinary rows, once.
    lines = out.read_text().splitlines()
    table = lines[next(i for i, line in enumerate(lines) if line.startswith("name,")):]
    assert len(list(csv.DictReader(table))) == len(report["benchmarks"]) == 20
    assert result.stderr.count("ireebench: saved run ") == 1, result.stderr
    history = ireebench("history", "--json", f"--benchmark_storage={store}")
    assert history.returncode == 0, history.stderr
    assert len({run["run_id"] for b in history.json()["benchmarks"] for run in b["runs"]}) == 1


def test_repetitions_are_split_as_evenly_as_possible(ireebench, module):
    result = ireebench(f"--module={module}", *RUN, "--benchmark_repetitions=7",
                       "--benchmark_processes=3", "--benchmark_filter=first",
                       "--benchmark_format=json")
    assert result.returncode == 0, result.stderr
    repetitions, aggregates = _rows(result.json(), NAMES[0])
    assert [row["process_index"] for row in repetitions] == ["0"] * 3 + ["1"] * 2 + ["2"] * 2
    assert aggregates["median"]["iterations"] == 7


def test_a_sweep_spreads_each_points_repetitions(ireebench, module):
    result = ireebench(f"--module={module}", *RUN, "--benchmark_repetitions=2",
                       "--benchmark_processes=2", "--benchmark_filter=first",
                       "--sweep=batch_size=1,2", "--benchmark_format=json")
    assert result.returncode == 0, result.stderr
    report = result.json()
    for batch in (1, 2):
        name = f"BM_first/batch_size:{batch}/process_time/real_time"
        repetitions, aggregates = _rows(report, name)
        assert [row["process_index"] for row in repetitions] == ["0", "1"]
        assert all(row["params"] == {"batch_size": batch} for row in repetitions)
        assert "median" in aggregates
    # The run shows the progress, once; its processes do not.
    assert result.stderr.count("BM_first/batch_size:1/process_time/real_time done") == 1


def test_a_failing_process_is_an_error_row_and_the_others_count(ireebench, module):
    result = ireebench(f"--module={module}", *RUN, "--benchmark_repetitions=6",
                       "--benchmark_processes=3", "--probe_fail_process=1",
                       "--benchmark_format=json")
    assert result.returncode == 1, result.stderr
    report = result.json()
    for name in NAMES:
        repetitions, aggregates = _rows(report, name)
        assert [row["process_index"] for row in repetitions] == ["0", "0", "1", "2", "2"]
        failed = [row for row in repetitions if row.get("error_occurred")]
        assert len(failed) == 1 and failed[0]["process_index"] == "1"
        assert failed[0]["error_message"] == \
            "process 2 of 3 failed: probe: process 1 refuses to measure"
        assert aggregates["mean"]["iterations"] == 5  # Google Benchmark counts failed ones


def test_list_tests_and_dry_run_measure_in_one_process(ireebench, module):
    listed = ireebench(f"--module={module}", *RUN, "--benchmark_repetitions=4",
                       "--benchmark_processes=2", "--benchmark_list_tests")
    assert listed.returncode == 0 and listed.stdout.split() == NAMES, listed.stderr
    dry = ireebench(f"--module={module}", *RUN, "--benchmark_repetitions=4",
                    "--benchmark_processes=2", "--benchmark_dry_run", "--benchmark_format=json")
    assert dry.returncode == 0, dry.stderr
    rows = dry.json()["benchmarks"]
    assert len(rows) == 2 and all("process_index" not in row for row in rows)


@pytest.mark.parametrize(("flags", "expected"), [
    (["--benchmark_processes=0"], "--benchmark_processes=0: must be positive"),
    (["--benchmark_processes=4", "--benchmark_repetitions=3"],
     ("--benchmark_processes=4: more processes than --benchmark_repetitions=3 (each process "
      "measures at least one repetition)")),
    (["--benchmark_processes=2", "--benchmark_repetitions=4", "--backend=native"],
     ("--benchmark_processes=2: needs a backend that spreads a benchmark's repetitions over "
      "several processes (capability 'process_repetitions'); --backend=native does not have "
      "it")),
    (["--benchmark_processes=2", "--benchmark_repetitions=4",
      "--benchmark_min_rel_accuracy=0.05"],
     ("--benchmark_min_rel_accuracy=0.05: cannot be used with --benchmark_processes=2 "
      "(adaptive stopping decides the repetitions one at a time, in one process)")),
    (["--benchmark_processes=2", "--benchmark_repetitions=4", "--enable_output_processing"],
     ("--enable_output_processing: concerns the whole run of one configuration and cannot be "
      "used with --benchmark_processes=2 (each process measures a share of the repetitions)")),
    (["--benchmark_processes=2", "--benchmark_repetitions=4", "--dispatch_statistics",
      "--profile_output=PROFILE"],
     ("--profile_output=PROFILE: each of the --benchmark_processes=2 processes would write "
      "it; measure in one process to write it")),
])
def test_what_cannot_be_honoured_is_one_line(ireebench, module, tmp_path, flags, expected):
    profile = str(tmp_path / "profile.json")
    flags = [flag.replace("PROFILE", profile) for flag in flags]
    line = one_error_line(ireebench(f"--module={module}", *RUN, *flags))
    assert line == "ireebench: error: " + expected.replace("PROFILE", profile)


def test_an_interrupt_leaves_a_complete_file(module, tmp_path):
    """SIGINT while process 2 of 3 measures (it says so on a FIFO, then waits): the
    file holds process 1's repetitions and the interrupted process's error row."""
    fifo, out = tmp_path / "fifo", tmp_path / "out.json"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # before any writer: never blocks
    proc = subprocess.Popen(
        [sys.executable, "-m", "ireebench", f"--module={module}", *RUN,
         "--benchmark_repetitions=3", "--benchmark_processes=3", f"--probe_fifo={fifo}",
         f"--benchmark_out={out}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(), text=True)
    try:
        said = b""
        while b"\n" not in said:
            ready, _, _ = select.select([reader], [], [], 240)
            assert ready, "process 2 never started measuring"
            said += os.read(reader, 64)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=240)
    finally:
        os.close(reader)
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    assert stderr.splitlines()[-1] == "ireebench: interrupted"
    report = json.loads(out.read_text())
    for name in NAMES:
        repetitions, aggregates = _rows(report, name)
        assert [row["process_index"] for row in repetitions] == ["0", "1"]
        assert repetitions[1]["error_message"] == \
            "interrupted by SIGINT while running (process 2 of 3)"
        assert aggregates == {}  # one measured repetition
