"""Each row of a sweep or suite says the devices and module of its point.

Through the real CLI on real compiled modules and the real store (SQLite and
PostgreSQL: ``store_url``): a two-device sweep saved, listed by ``history``,
gated and reported device by device; each suite row's module and sha256 in
the JSON and the store; the gate's baselines chosen per row device; a shard
and a compile-flag sweep name the modules they measured; error rows and
rows of points measured in processes of their own carry their point's keys;
a store of schema version 1 migrates; a plugin's ``ireebench_point_context``.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil

import ireebench as ireebench_api
import pytest
import sqlalchemy as sa
from conftest import MLIR_DIR, plugin_error_line
from ireebench.plugins.store import schema
from ireebench.plugins.store.database import Store

LEAN = ["--function=forward", "--input=2x512xf32=0.5", "--benchmark_min_time=2x",
        "--benchmark_repetitions=3"]
# Another build of one source: other bytes, the same function names.
ANOTHER_BUILD = "--iree-llvmcpu-debug-symbols=false"
SYNC = "BM_forward/device:local-sync/process_time/real_time"
TASK = "BM_forward/device:local-task/process_time/real_time"


@pytest.fixture(scope="module")
def dynamic(compile_mlir):
    return compile_mlir("dynamic")


def sha256(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def api(*args, env: dict | None = None) -> tuple[int, str]:
    """A reading command in this process (the Python API, the real plugin manager)."""
    out = io.StringIO()
    saved = {key: os.environ.get(key) for key in env or {}}
    os.environ.update(env or {})
    try:
        return ireebench_api.run([str(arg) for arg in args], stdout=out).exit_code, \
            out.getvalue()
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def api_json(*args, env: dict | None = None) -> dict:
    status, out = api(*args, env=env)
    assert status in (0, 1, 4), out  # a verdict, a regression, or cannot judge: a result
    return json.loads(out)


def _saved_id(result) -> str:
    line = next(line for line in result.stderr.splitlines() if "saved run" in line)
    return line.split("saved run ", 1)[1].split()[0]


def _device_of(row: dict) -> str:
    return "local-task" if "device:local-task" in row["name"] else "local-sync"


def test_a_device_sweep_is_saved_listed_gated_and_reported_device_by_device(
        store_url, ireebench, dynamic, tmp_path):
    """--sweep device=local-sync,local-task: the context names both devices, every row
    (repetitions, aggregates, the cold start's extra row) its own; history lists the
    local-task rows on local-task; a new run of the local-task point alone is gated
    against the stored local-task rows; the report's Inputs table shows both devices."""
    storage = f"--benchmark_storage={store_url}"
    out = tmp_path / "sweep.json"
    result = ireebench(f"--module={dynamic}", *LEAN, "--sweep=device=local-sync,local-task",
                       "--benchmark_cold_start", "--benchmark_save", storage,
                       f"--benchmark_out={out}")
    assert result.returncode == 0, result.stderr
    run_id = _saved_id(result)
    report = json.loads(out.read_text())
    context = report["context"]
    assert context["iree_devices"] == ["local-sync", "local-task"]
    assert context["iree_modules"] == [{"path": str(dynamic), "sha256": sha256(dynamic)}]
    rows = report["benchmarks"]
    assert {(r["run_type"], r["name"].endswith("/cold_start")) for r in rows} == {
        ("iteration", False), ("aggregate", False), ("iteration", True)}
    for row in rows:
        assert row["iree_devices"] == [_device_of(row)], row["name"]
        assert (row["iree_module"], row["iree_module_sha256"]) == (str(dynamic),
                                                                  sha256(dynamic))
    machine = f"{context['host_name']} ({context['num_cpus']} CPUs, %s)"

    # history: each benchmark on its own device, in the table and in JSON.
    data = api_json("history", "--json", storage)
    machines = {b["name"]: {run["machine"] for run in b["runs"]} for b in data["benchmarks"]}
    assert machines == {SYNC: {machine % "local-sync"}, TASK: {machine % "local-task"},
                        "BM_forward/device:local-sync/cold_start": {machine % "local-sync"},
                        "BM_forward/device:local-task/cold_start": {machine % "local-task"}}
    fingerprints = {b["name"]: b["runs"][0]["fingerprint"] for b in data["benchmarks"]}
    assert fingerprints[SYNC] != fingerprints[TASK]
    _, table = api("history", "device:local-task", storage)
    assert machine % "local-task" in table and "local-sync" not in table
    _, only_task = api("history", "--json", "--where=device=local-task", storage)
    assert [b["name"] for b in json.loads(only_task)["benchmarks"]] == [
        "BM_forward/device:local-task/cold_start", TASK]

    # The gate: the local-task point alone finds the stored local-task rows.
    new = tmp_path / "task.json"
    result = ireebench(f"--module={dynamic}", *LEAN, "--sweep=device=local-task",
                       f"--benchmark_out={new}")
    assert result.returncode == 0, result.stderr
    gate = api_json("compare", "stored:history", new, storage, "--reporter=json")
    assert [(b["name"], b["baseline_runs"]) for b in gate["benchmarks"]] == [
        (TASK, [f"stored:{run_id}"])]
    assert gate["only_in_new"] == [] and not any("devices" in n for n in gate["notes"])
    status, latest = api("compare", "stored:latest", new, storage)
    assert status in (0, 1, 4) and f"stored:{run_id}" in latest

    # The report of the stored run: both devices in its Inputs table.
    page = tmp_path / "report.html"
    status, _ = api("report", "stored:latest", "-o", page, env={"IREEBENCH_STORAGE": store_url})
    assert status == 0
    html = page.read_text()
    inputs = html[html.index("<th>devices</th>"):].split("</table>", 1)[0]
    assert "<td>local-sync, local-task</td>" in inputs


SUITE = """
[defaults]
device = "local-sync"
function = "forward"
input = ["{{bs}}x512xf32=0.5"]

[[benchmark]]
name = "a"
module = "{first}"
sweep = {{ bs = [1, 2] }}

[[benchmark]]
name = "m"
module = "{second}"
device = "{device}"
sweep = {{ bs = [2] }}
"""


def _suite(tmp_path, first, second, device="local-sync"):
    path = tmp_path / f"suite-{device}.toml"
    path.write_text(SUITE.format(first=first, second=second, device=device))
    return path


def test_each_suite_row_names_its_module_and_sha256_in_the_json_and_the_store(
        store_url, ireebench, compile_mlir, tmp_path):
    first = compile_mlir("dynamic")
    second = compile_mlir("dynamic", ANOTHER_BUILD)
    assert sha256(first) != sha256(second)
    storage = f"--benchmark_storage={store_url}"
    out = tmp_path / "suite.json"
    result = ireebench("run", _suite(tmp_path, first, second), "--benchmark_min_time=2x",
                       "--benchmark_repetitions=2", "--benchmark_save", storage,
                       f"--benchmark_out={out}")
    assert result.returncode == 0, result.stderr
    report = json.loads(out.read_text())
    expected = {"a": (str(first), sha256(first)), "m": (str(second), sha256(second))}
    for row in report["benchmarks"]:
        assert (row["iree_module"], row["iree_module_sha256"]) == expected[row["name"][0]]
    assert report["context"]["iree_modules"] == [
        {"path": path, "sha256": digest} for path, digest in expected.values()]

    data = api_json("history", "--json", storage)
    stored = {b["name"].split("/")[0]: {(run["module"], run["module_sha256"])
                                        for run in b["runs"]} for b in data["benchmarks"]}
    assert stored == {"a": {expected["a"]}, "m": {expected["m"]}}
    one = api_json("history", "--json", f"--where=module_sha256={sha256(second)[:12]}",
                   storage)
    assert [b["name"] for b in one["benchmarks"]] == ["m/BM_forward/bs:2/process_time/real_time"]
    _, table = api("history", "^m/", storage)
    assert f"{second.name} {sha256(second)[:12]}" in table


def test_the_gate_picks_baselines_by_each_rows_device(store_url, ireebench, compile_mlir,
                                                      tmp_path):
    """A suite entry moved from local-sync to local-task keeps its name: its stored
    local-sync history does not judge its local-task rows (only in new), while the
    entry left on local-sync is judged; --any_machine compares both."""
    first = compile_mlir("dynamic")
    second = compile_mlir("dynamic", ANOTHER_BUILD)
    storage = f"--benchmark_storage={store_url}"
    common = ["--benchmark_min_time=2x", "--benchmark_repetitions=2"]
    result = ireebench("run", _suite(tmp_path, first, second), *common, "--benchmark_save",
                       storage)
    assert result.returncode == 0, result.stderr
    new = tmp_path / "moved.json"
    result = ireebench("run", _suite(tmp_path, first, second, "local-task"), *common,
                       f"--benchmark_out={new}")
    assert result.returncode == 0, result.stderr
    moved = "m/BM_forward/bs:2/process_time/real_time"
    gate = api_json("compare", "stored:history", new, storage, "--reporter=json")
    assert sorted(b["name"] for b in gate["benchmarks"]) == [
        "a/BM_forward/bs:1/process_time/real_time", "a/BM_forward/bs:2/process_time/real_time"]
    assert gate["only_in_new"] == [moved]
    anywhere = api_json("compare", "stored:history", new, storage, "--any_machine",
                        "--reporter=json")
    assert moved in [b["name"] for b in anywhere["benchmarks"]]
    assert any("different devices (local-sync and local-task)" in note
               for note in anywhere["notes"])


def test_a_shard_and_a_compile_flag_sweep_name_the_modules_they_measured(
        ireebench, compile_mlir, tmp_path):
    """The second shard of a module sweep names its own module and a non-empty sha256
    (not the first point's module with an empty hash); merge lists both; one .mlir
    compiled under two flags gives each row the sha256 of its own build."""
    for variant, flags in (("a", ()), ("b", (ANOTHER_BUILD,))):
        shutil.copy(compile_mlir("dynamic", *flags), tmp_path / f"mod_{variant}.vmfb")
    sweep = [f"--module={tmp_path}/mod_{{v}}.vmfb", "--device=local-sync", *LEAN,
             "--sweep=v=a,b", "--shard_count=2"]
    shards = []
    for index in range(2):
        shards.append(tmp_path / f"shard{index}.json")
        result = ireebench(*sweep, f"--shard_index={index}", f"--benchmark_out={shards[-1]}")
        assert result.returncode == 0, result.stderr
    second = json.loads(shards[1].read_text())
    module = str(tmp_path / "mod_b.vmfb")
    assert (second["context"]["iree_module"], second["context"]["iree_module_sha256"]) == (
        module, sha256(module))
    assert {(r["iree_module"], r["iree_module_sha256"]) for r in second["benchmarks"]} == {
        (module, sha256(module))}
    merged = tmp_path / "all.json"
    assert ireebench("merge", *shards, "-o", merged).returncode == 0
    assert [m["path"] for m in json.loads(merged.read_text())["context"]["iree_modules"]] == [
        str(tmp_path / "mod_a.vmfb"), module]

    result = ireebench(f"--module={MLIR_DIR / 'dynamic.mlir'}", "--device=local-sync", *LEAN,
                       "--sweep=symbols=true,false", "--benchmark_format=json",
                       "--compile_flag=--iree-llvmcpu-debug-symbols={symbols}")
    assert result.returncode == 0, result.stderr
    report = result.json()
    digests = {str(r["params"]["symbols"]): r["iree_module_sha256"]
               for r in report["benchmarks"]}
    assert digests["true"] != digests["false"] and all(digests.values())
    assert [m["sha256"] for m in report["context"]["iree_modules"]] == [digests["true"],
                                                                         digests["false"]]


def test_error_rows_and_rows_of_points_in_processes_of_their_own_carry_their_point(
        ireebench, dynamic):
    result = ireebench(f"--module={dynamic}", "--device=local-sync", *LEAN[2:],
                       "--function=forward", "--sweep=shape=2x512,2x7",
                       "--input={shape}xf32=0.5", "--benchmark_format=json")
    assert result.returncode == 1
    rows = result.json()["benchmarks"]
    assert {(r["params"]["shape"], r.get("error_occurred", False), r["iree_devices"][0],
             r["iree_module"]) for r in rows} == {("2x512", False, "local-sync", str(dynamic)),
                                                  ("2x7", True, "local-sync", str(dynamic))}
    # Runtime flags that differ: each point in a process of its own.
    result = ireebench(f"--module={dynamic}", "--device=local-task", *LEAN,
                       "--sweep=task_topology_max_group_count=1,2", "--benchmark_format=json")
    assert result.returncode == 0, result.stderr
    assert {(r["iree_devices"][0], r["iree_module_sha256"])
            for r in result.json()["benchmarks"]} == {("local-task", sha256(dynamic))}
    # A plain run's rows stay Google Benchmark's: the context says it for them.
    plain = ireebench(f"--module={dynamic}", "--device=local-sync", *LEAN,
                      "--benchmark_format=json")
    assert not any(key.startswith("iree_") for r in plain.json()["benchmarks"] for key in r)


def test_a_version_1_store_migrates_its_rows_to_their_runs_provenance(store_url):
    """A store of schema version 1 (rows without their own provenance) opened by this
    ireebench: version 2, each old row with its run's fingerprint, machine and module."""
    engine = sa.create_engine(store_url.replace("postgresql://", "postgresql+psycopg://"))
    with engine.begin() as connection:
        schema.apply_migrations(connection, schema.MIGRATIONS[:1])
        connection.execute(schema.runs.insert().values(
            id=1, run_id="ab" * 16, report_sha256="0" * 64, run_time=1.0, date="2026",
            saved_at=1.0, status="complete", source="import", source_path="", host_name="h",
            fingerprint="f" * 16, machine="h (2 CPUs, local-sync)", devices='["local-sync"]',
            ireebench_version="0", iree_version="0", module="/m.vmfb", module_sha256="e" * 64,
            compile_flags="[]", plugins="[]", git_commit="", git_branch="", tags="{}",
            context="{}", report="{}"))
        connection.execute(sa.text(
            "INSERT INTO ireebench_rows (run, position, name, run_name, run_type, "
            "aggregate_name, error_occurred, time_unit, data, samples, batch_samples) VALUES "
            "(1, 0, 'BM_x', 'BM_x', 'iteration', '', false, 'ms', "
            "'{\"name\": \"BM_x\", \"real_time\": 1.0}', '[]', '[]')"))
    engine.dispose()
    store = Store(store_url)
    try:
        with store._transaction() as connection:
            assert schema.stored_version(connection) == schema.SCHEMA_VERSION == 2
            found = connection.execute(sa.select(
                schema.rows.c.fingerprint, schema.rows.c.machine, schema.rows.c.devices,
                schema.rows.c.module, schema.rows.c.module_sha256)).all()
        assert [tuple(row) for row in found] == [
            ("f" * 16, "h (2 CPUs, local-sync)", '["local-sync"]', "/m.vmfb", "e" * 64)]
        series = store.benchmarks()["BM_x"]
        assert (series[0][0].machine, series[0][0].module_sha256) == (
            "h (2 CPUs, local-sync)", "e" * 64)
    finally:
        store.close()


def test_a_plugins_point_context_reaches_every_row_and_the_store(ireebench, dynamic,
                                                                 tmp_path):
    """A plugin's host per point (as a backend measuring points on other machines would
    give) is on every row and in history's machine column (SQLite: the queries are
    those tested on both databases above); a key every row already has is refused
    naming the plugin."""
    storage = f"--benchmark_storage=sqlite:///{tmp_path / 'results.sqlite'}"
    sweep = [f"--module={dynamic}", *LEAN, "--sweep=device=local-sync,local-task",
             "-p", "point_host"]
    result = ireebench(*sweep, "--benchmark_save", storage, "--benchmark_format=json")
    assert result.returncode == 0, result.stderr
    assert {r["host_name"] for r in result.json()["benchmarks"]} == {"node-local-sync",
                                                                    "node-local-task"}
    data = api_json("history", "--json", storage)
    assert {b["name"]: b["runs"][0]["machine"].split()[0] for b in data["benchmarks"]} == {
        SYNC: "node-local-sync", TASK: "node-local-task"}
    line = plugin_error_line(ireebench(*sweep, "--benchmark_format=json",
                                       env={"POINT_HOST_KEY": "name"}))
    assert "ireebench_point_context" in line and "point_host" in line
    assert "returned the key 'name', which is a member of every row" in line
    line = plugin_error_line(ireebench(*sweep, "--benchmark_format=json",
                                       env={"POINT_HOST_NUMBER": "1"}))
    assert "returned 'host_name': int; a row's context entry is text, a list or an object" \
        in line
