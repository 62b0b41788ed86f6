"""The process's streams: closed ones, and stdout kept for the report.

* ``>&-`` / ``2>&-``: the native tool measures and exits 0 with either
  closed; so does ireebench (a closed descriptor is /dev/null), and no
  message meant for stderr ever lands on stdout.
* A plugin's ``print()`` during a run never corrupts the report on stdout:
  it goes to stderr (``config.stdout`` is the way to the report).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import FIXTURE_PLUGINS

LOCAL = ["--device=local-sync", "--benchmark_min_time=2x"]


@pytest.fixture(scope="module")
def simple(compile_mlir):
    return f"--module={compile_mlir('simple')}"


def _closed(redirect: str, *args, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    """Runs ireebench from a shell with ``redirect`` (``>&-``) applied."""
    env = dict(os.environ, IREEBENCH_DISABLE_PLUGIN_AUTOLOAD="1")
    return subprocess.run(["sh", "-c", f'exec "$@" {redirect}', "sh", sys.executable, "-m",
                           "ireebench", *map(str, args)], input=stdin, capture_output=True,
                          env=env, timeout=120, check=False)


def test_closed_stdout_still_measures(simple, tmp_path):
    out = tmp_path / "out.json"
    proc = _closed(">&-", simple, *LOCAL, f"--benchmark_out={out}")
    assert proc.returncode == 0, proc.stderr
    assert b"Traceback" not in proc.stderr and b"ireebench:" not in proc.stderr
    assert len(json.loads(out.read_text())["benchmarks"]) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


def test_closed_stderr_still_measures_and_keeps_stdout_clean(simple, native_tool):
    environment = "--environment_warnings=true"  # a plugin writing to stderr early
    proc = _closed("2>&-", simple, *LOCAL, environment, "--reporter=json")
    assert proc.returncode == 0
    assert len(json.loads(proc.stdout)["benchmarks"]) == 2  # nothing else on stdout
    for args in ([simple, *LOCAL, "--benchmark_out=/nodir/x.json"],  # an error ...
                 [simple, *LOCAL, "--strict_flags", "--no_such_flag=1"]):
        proc = _closed("2>&-", *args)
        assert proc.returncode == 1 and proc.stdout == b""  # ... never lands on stdout


def test_closed_stdin_is_empty_not_another_file(simple, tmp_path):
    flags = tmp_path / "run.flags"  # opened early: must not become "standard input"
    flags.write_text("--device=local-sync\n")
    proc = _closed("<&-", "--module=-", f"--flagfile={flags}", "--benchmark_min_time=2x")
    assert proc.returncode == 1
    assert proc.stderr.decode().splitlines()[-1] == \
        "ireebench: error: INVALID_ARGUMENT; --module=-: standard input is empty"


PRINTING_PLUGIN = '''
from ireebench import hookimpl

@hookimpl
def ireebench_configure(config):
    print("configure says hello")

@hookimpl
def ireebench_benchmark_result(config, run):
    print("result", run.name)
'''


@pytest.mark.parametrize("display", ["json", "csv", "console"])
def test_a_plugins_print_never_reaches_the_report_on_stdout(ireebench, simple, tmp_path,
                                                            display):
    plugin = tmp_path / "printing.py"
    plugin.write_text(PRINTING_PLUGIN)
    result = ireebench(simple, *LOCAL, f"--plugin={plugin}", f"--reporter={display}")
    assert result.returncode == 0, result.stderr
    assert "hello" not in result.stdout and "result BM_" not in result.stdout
    assert "configure says hello" in result.stderr
    assert "result BM_noargs" in result.stderr
    if display == "json":
        assert len(json.loads(result.stdout)["benchmarks"]) == 2


def test_print_in_the_python_api_is_left_alone(simple, tmp_path):
    """A run reporting to a stream of its own does not touch sys.stdout."""
    plugin = tmp_path / "printing.py"
    plugin.write_text(PRINTING_PLUGIN)
    code = ("import io, sys, ireebench\n"
            f"out = io.StringIO()\n"
            f"r = ireebench.run({[simple, *LOCAL, f'--plugin={plugin}', '--reporter=json']!r}, "
            "stdout=out, stderr=io.StringIO())\n"
            "assert r.exit_code == 0 and '\"benchmarks\"' in out.getvalue()\n")
    env = dict(os.environ, IREEBENCH_DISABLE_PLUGIN_AUTOLOAD="1",
               PYTHONPATH=str(FIXTURE_PLUGINS))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "configure says hello" in proc.stdout  # the host program's stdout, as it asked
