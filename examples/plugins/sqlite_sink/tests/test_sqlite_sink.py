"""The SQLite sink's tests, through ireebench.testing (pip install the example first)."""

import sqlite3

import ireebench_sqlite
import pytest
from ireebench.testing import TINY


def test_every_row_and_dispatch_is_recorded(ireebench_tester):
    database = ireebench_tester.tmp_path / "results.db"
    result = ireebench_tester.run("--benchmark_repetitions=2", f"--sqlite_db={database}",
                                  "--sqlite_dispatches", "--dispatch_statistics",
                                  plugins=[ireebench_sqlite])
    assert result.exit_code == 0, result.stderr
    with sqlite3.connect(database) as connection:
        runs = connection.execute("SELECT run_id, module_sha256, exit_status FROM runs").fetchall()
        results = connection.execute(
            "SELECT name, real_seconds, extra_row FROM results").fetchall()
        dispatches = connection.execute("SELECT benchmark, calls FROM dispatches").fetchall()
    [(run_id, sha256, status)] = runs
    assert status == 0 and sha256 == result.context.extra["iree_module_sha256"]
    assert run_id == result.context.extra["ireebench_run_id"]
    assert [row[0] for row in results] == [row.benchmark_name for row in result.rows]
    assert results[0][1] == pytest.approx(result.rows[0].real_seconds)
    assert sum(row[2] for row in results) == sum(row.extra_row for row in result.rows) >= 1
    assert dispatches and all(row == ("BM_tiny", 2 * 2) for row in dispatches)  # 2 x 2 reps
    assert result.rows[0].benchmark_name == TINY


def test_dispatches_need_a_database(ireebench_tester):
    result = ireebench_tester.run("--sqlite_dispatches", plugins=[ireebench_sqlite])
    assert result.error_lines == ["ireebench: error: --sqlite_dispatches: needs --sqlite_db"]


def test_dispatches_need_a_backend_that_reruns_workloads(ireebench_tester):
    database = ireebench_tester.tmp_path / "results.db"
    result = ireebench_tester.run("--backend=native", f"--sqlite_db={database}",
                                  "--sqlite_dispatches", plugins=[ireebench_sqlite])
    assert result.error_lines == [
        ("ireebench: error: --sqlite_dispatches=true: needs a backend that can rerun its "
        "workloads in an untimed profiling pass (capability 'profiling_passes'); "
        "--backend=native does not have it")]
