"""Example plugin: every result, and optionally every dispatch, into SQLite.

A stand-in for a company metrics store. Install it (``pip install
examples/plugins/sqlite_sink``: entry point ``sqlite_sink``) or load it
with ``--plugin examples/plugins/sqlite_sink/ireebench_sqlite.py``::

    ireebench --module=model.vmfb --sqlite_db=results.db [--sqlite_dispatches]

Tables (see ``SCHEMA``): ``runs`` (one row per ireebench run: its
``config.run_id``, the module and its sha256, devices, versions, the exit
status), ``results`` (every reported row: repetitions, aggregates, error
rows, extra rows, with times in seconds) and, with ``--sqlite_dispatches``,
``dispatches`` (per dispatch function of each benchmark, from the untimed
profiling pass this plugin's profiling sink asks for).

Hooks, in the order a run calls them: ``ireebench_addoption`` (the flags),
``ireebench_configure`` (opens the database; closed by a cleanup),
``ireebench_profiling_sinks`` (the sink), ``ireebench_report_context`` (the
run's row, with the provenance the built-in ``provenance`` plugin added),
``ireebench_benchmark_result`` (each row as it finishes),
``ireebench_sessionfinish`` (the exit status).
"""

from __future__ import annotations

import json
import sqlite3
import time

from ireebench import ProfilingSink, StashKey, UsageError, hookimpl
from ireebench.backend import PROFILING_PASSES

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, started REAL, module TEXT, module_sha256 TEXT,
    devices TEXT, ireebench_version TEXT, iree_runtime_version TEXT, exit_status INTEGER);
CREATE TABLE IF NOT EXISTS results (
    run_id TEXT, name TEXT, run_type TEXT, aggregate_name TEXT, repetition_index INTEGER,
    iterations INTEGER, real_seconds REAL, cpu_seconds REAL, time_unit TEXT,
    error_message TEXT, extra_row INTEGER, counters TEXT);
CREATE TABLE IF NOT EXISTS dispatches (
    run_id TEXT, benchmark TEXT, function TEXT, calls INTEGER, total_ns INTEGER,
    iterations INTEGER);
"""

DATABASE = StashKey[sqlite3.Connection]()


@hookimpl
def ireebench_addoption(parser):
    parser.addoption("--sqlite_db", "sqlite_db", default="", metavar="FILE.db",
                     group="sqlite_sink plugin", help="Record every result in this SQLite file.")
    parser.addoption("--sqlite_dispatches", "sqlite_dispatches", type=bool,
                     group="sqlite_sink plugin", requires=PROFILING_PASSES,
                     help="Also record per-dispatch times (an untimed profiling pass).")


@hookimpl
def ireebench_configure(config):
    path = config.getoption("sqlite_db")
    if not path:
        if config.getoption("sqlite_dispatches"):
            raise UsageError("--sqlite_dispatches: needs --sqlite_db")
        return
    try:
        connection = sqlite3.connect(path)
        connection.executescript(SCHEMA)
    except sqlite3.Error as exc:
        raise UsageError(f"--sqlite_db={path}: {exc}") from None
    config.stash[DATABASE] = connection
    config.add_cleanup(connection.close)


class DispatchSink(ProfilingSink):
    """Receives the statistics rows of each workload's profiling pass."""

    def __init__(self, config):
        self.config = config

    def receive_rows(self, profile_pass, rows):
        database = self.config.stash[DATABASE]
        database.executemany(
            "INSERT INTO dispatches VALUES (?, ?, ?, ?, ?, ?)",
            [(self.config.run_id, profile_pass.workload.name, row.key, row.sample_count,
              row.total_duration_ns, profile_pass.iterations * profile_pass.repetitions)
             for row in rows if row.is_function_row and row.total_duration_ns is not None])
        database.commit()


@hookimpl
def ireebench_profiling_sinks(config):
    if DATABASE in config.stash and config.getoption("sqlite_dispatches"):
        return [DispatchSink(config)]
    return None


@hookimpl
def ireebench_report_context(config, context):
    database = config.stash.get(DATABASE, None)
    if database is None:
        return
    extra = context.extra
    database.execute("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, NULL)", (
        config.run_id, time.time(), extra.get("iree_module", ""),
        extra.get("iree_module_sha256", ""), json.dumps(extra.get("iree_devices", [])),
        extra.get("ireebench_version", ""), extra.get("iree_runtime_version", "")))
    database.commit()


@hookimpl
def ireebench_benchmark_result(config, run):
    database = config.stash.get(DATABASE, None)
    if database is None:
        return
    database.execute("INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", (
        config.run_id, run.benchmark_name, run.run_type, run.aggregate_name or None,
        run.repetition_index, run.iterations,
        None if run.error_occurred else run.real_seconds,
        None if run.error_occurred else run.cpu_seconds,
        run.time_unit, run.error_message or None, int(run.extra_row),
        json.dumps({name: counter.value for name, counter in run.counters.items()})))
    database.commit()


@hookimpl
def ireebench_sessionfinish(config, exitstatus):
    database = config.stash.get(DATABASE, None)
    if database is not None:
        database.execute("UPDATE runs SET exit_status = ? WHERE run_id = ?",
                         (exitstatus, config.run_id))
        database.commit()
