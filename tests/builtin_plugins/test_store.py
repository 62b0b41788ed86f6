"""The results store end to end, on SQLite and on a real PostgreSQL server.

Runs are saved from the real CLI (``--benchmark_save``) and read back with
``ireebench history``, ``store export`` and ``compare stored:...``; four
processes save at once; a process killed (SIGKILL) in the middle of its
save's transaction leaves no partial run; the gate (``compare
stored:history``) passes the same module and fails one 8x heavier. Every
test runs on both databases (``store_url``, ``store_kind``).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import ireebench as ireebench_api
import pytest
from conftest import MLIR_DIR, ROOT, STORE_KINDS, _env, new_store_url, one_error_line, slow_function
from ireebench.plugins.store.git import git_state
from ireebench.plugins.store.schema import SCHEMA_VERSION

LOOP = (MLIR_DIR / "loop.mlir").read_text()  # TRIPS: its trip count
TRIPS = 200
RUN = ["--device=local-sync", "--function=work", "--input=64xf32=1",
       "--benchmark_repetitions=9", "--benchmark_min_time=5x"]
NAME = "BM_work/process_time/real_time"
# A tiny run: what is tested is the save, not the measurement.
QUICK = ["--device=local-sync", "--function=noargs", "--benchmark_min_time=1x"]
TIMEOUT = 120


@pytest.fixture(scope="module")
def modules(compile_mlir):
    return {"light": compile_mlir(LOOP.replace("TRIPS", str(TRIPS))),
            "heavy": compile_mlir(LOOP.replace("TRIPS", str(8 * TRIPS))),
            "simple": compile_mlir("simple")}


def _saved_id(result) -> str:
    line = next(line for line in result.stderr.splitlines() if "saved run" in line)
    return line.split("saved run ", 1)[1].split()[0]


def api(*args) -> tuple[int, str]:
    """The command in this process (the Python API, the real plugin manager): its exit
    status and stdout, or 2 and the error's message. For reading back what the CLI
    saved without starting an interpreter each time."""
    out = io.StringIO()
    try:
        return ireebench_api.run([str(arg) for arg in args], stdout=out).exit_code, \
            out.getvalue()
    except ireebench_api.UsageError as exc:
        return 2, str(exc)


def api_json(*args) -> dict:
    status, out = api(*args)
    assert status in (0, 1), out
    return json.loads(out)


def _stored_ids(url) -> set[str]:
    data = api_json("history", "--json", f"--benchmark_storage={url}")
    return {run["run_id"][:12] for bench in data["benchmarks"] for run in bench["runs"]}


@pytest.mark.parametrize("store_kind", STORE_KINDS)
def test_saved_runs_are_read_back_and_gate_the_next_run(store_kind, request, modules,
                                                        ireebench, tmp_path):
    """Three runs of the light module saved from the CLI, read back with history and
    export; then the gate (compare stored:history) passes a new run of the same module
    (exit 0) and fails one 8x heavier (exit 1); stored:latest on either side."""
    url = new_store_url(request, store_kind, tmp_path)
    storage = f"--benchmark_storage={url}"
    saved0 = tmp_path / "saved0.json"

    def save(index):
        out = [f"--benchmark_out={saved0}"] if index == 0 else []
        return ireebench(f"--module={modules['light']}", *RUN, "--benchmark_save", storage,
                         "--benchmark_context=suite=gate", *out, timeout=TIMEOUT)

    def new(name):
        out = tmp_path / f"{name}.json"
        result = ireebench(f"--module={modules[name]}", *RUN, f"--benchmark_out={out}",
                           "--benchmark_format=json", timeout=TIMEOUT)
        assert result.returncode == 0, result.stderr
        return out

    with ThreadPoolExecutor(2) as pool:
        saves = list(pool.map(save, range(3)))
        for result in saves:
            assert result.returncode == 0, result.stderr
        light, heavy = pool.map(new, ["light", "heavy"])
    ids = [_saved_id(result) for result in saves]

    # history: the three runs, with their provenance.
    result = ireebench("history", "work", storage)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == NAME
    for run_id in ids:
        row = next(line for line in result.stdout.splitlines() if run_id in line)
        assert "suite=gate" in row and "complete" in row and "local-sync" in row
    [bench] = api_json("history", "work", "--json", storage)["benchmarks"]
    assert bench["name"] == NAME and {run["run_id"][:12] for run in bench["runs"]} == set(ids)
    for run in bench["runs"]:
        assert run["repetitions"] == 9 and run["status"] == "complete"
        assert run["low_seconds"] <= run["median_seconds"] <= run["high_seconds"]
        assert run["tags"] == {"suite": "gate"} and run["commit"] == git_state(ROOT).commit
    assert "no stored benchmark" in api("history", storage, "--where", "suite=other")[1]

    # export: byte for byte what --benchmark_out wrote.
    exported = tmp_path / "exported.json"
    assert api("store", "export", ids[0], f"--out={exported}", storage)[0] == 0
    assert exported.read_bytes() == saved0.read_bytes()

    # The gate, on the CPU time: on this loaded shared machine the wall time of the
    # same module moves by several times from one moment to the next (the band and
    # the test are checked on fixed data in tests/core/test_comparison_history.py);
    # 8x the work is about +700% of either.
    gate = ["--metric=cpu_time", "--threshold=100%", storage]
    # Three runs whose CPU times jumped apart on this machine cannot show a
    # change of 100% (exit 4, "cannot judge"); accepted, it passes, never a regression.
    same = ireebench("compare", "stored:history", light, *gate, "--accept_cannot_judge")
    assert same.returncode == 0, same.stdout + same.stderr
    assert "3 stored run(s)" in same.stdout and all(i in same.stdout for i in ids)
    heavier = ireebench("compare", "stored:history", heavy, *gate, "--reporter=json")
    assert heavier.returncode == 1, heavier.stdout + heavier.stderr
    data = json.loads(heavier.stdout)
    [bench] = data["benchmarks"]
    assert bench["regression"] and bench["new_median_seconds"] > bench["band_high_seconds"]
    assert {run.removeprefix("stored:") for run in bench["baseline_runs"]} == set(ids)
    assert len(data["history"]) == 3

    # stored:latest and stored:RUN_ID, on either side; a filter that names nothing.
    assert api("compare", "stored:latest", heavy, *gate)[0] == 1
    # Both sides named in the store count in one list: ~1 is the run before the newest
    # (as store export names them), as `stored:latest stored:latest` compares them too.
    newest, before = (json.loads(api("store", "export", f"stored:{which}", storage)[1])
                      ["context"]["ireebench_run_id"][:12] for which in ("latest", "latest~1"))
    for old in ("stored:latest~1", "stored:latest"):
        status, out = api("compare", old, "stored:latest", *gate, "--accept_cannot_judge")
        assert status == 0 and out.startswith(
            f"Comparing stored:{before} (old) with stored:{newest} (new)"), out
    status, out = api("compare", heavy, f"stored:{ids[1]}", *gate)
    assert status == 0 and "faster" in out
    status, message = api("compare", "stored:latest?branch=none", light, storage)
    assert status == 2 and "no stored run of these benchmarks matches branch=none" in message
    assert api("history", storage, "--where", "device=local")[0] == 0  # a driver's prefix

    # A report of another machine: its stored:latest says so in one line;
    # --any_machine uses the other machine's runs; its gate has no history yet.
    report = json.loads(light.read_text())
    report["context"]["host_name"] = "another-host"
    other = tmp_path / "other.json"
    other.write_text(json.dumps(report))
    status, message = api("compare", "stored:latest", other, storage)
    assert status == 2 and "no stored run on this machine (another-host" in message
    assert "--any_machine" in message
    status, out = api("compare", "stored:latest", other, *gate, "--any_machine")
    assert status == 0 and "different hosts" in out
    status, out = api("compare", "stored:history", other, storage)
    assert status == 0 and "no stored run on this machine" in out


def _wait_for(proc, text: str, timeout: float = TIMEOUT) -> str:
    """Reads ``proc``'s stderr until a line containing ``text`` (a timeout fails)."""
    def read():
        for line in proc.stderr:
            if text in line:
                return line
        return ""

    with ThreadPoolExecutor(1) as pool:
        line = pool.submit(read).result(timeout=timeout)
    assert line, f"{text!r} never came"
    return line


def _paused_run(module, url, where: str) -> subprocess.Popen:
    env = dict(_env(), IREEBENCH_TEST_PAUSE=where)
    return subprocess.Popen(
        [sys.executable, "-m", "ireebench", f"--module={module}", *QUICK, "--benchmark_save",
         f"--benchmark_storage={url}", "-p", "store_pause"],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env=env)


def test_four_processes_saving_at_once_all_land(store_url, modules):
    """Four runs held just before their saves, then let go together: four runs stored."""
    procs = [_paused_run(modules["simple"], store_url, "before_save") for _ in range(4)]
    try:
        for proc in procs:
            _wait_for(proc, "PAUSED before_save")
        for proc in procs:
            proc.stdin.close()
        saved = {_wait_for(proc, "saved run").split("saved run ", 1)[1].split()[0]
                 for proc in procs}
        assert [proc.wait(timeout=TIMEOUT) for proc in procs] == [0, 0, 0, 0]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert len(saved) == 4
    assert _stored_ids(store_url) == saved


def test_a_save_that_measured_nothing_fails(compile_mlir, ireebench, tmp_path):
    """--input without --function: nothing runs, so --benchmark_save fails (exit 1)
    instead of passing a CI job that measured nothing."""
    storage = f"--benchmark_storage={tmp_path / 'r.sqlite'}"
    result = ireebench(f"--module={compile_mlir('inputs_only')}", "--device=local-sync",
                       "--input=4xf32=1", "--benchmark_save", storage)
    assert result.returncode == 1, result.stderr
    assert "Failed to match any benchmarks" in result.stderr
    assert "ireebench: error: --benchmark_save: no benchmark was measured" in result.stderr
    assert "Traceback" not in result.stderr
    assert "nothing saved" not in result.stderr  # said once, by the error line


def test_sigkill_during_a_save_leaves_no_partial_run(store_url, modules, ireebench):
    first = ireebench(f"--module={modules['simple']}", *QUICK, "--benchmark_save",
                      f"--benchmark_storage={store_url}")
    assert first.returncode == 0, first.stderr
    proc = _paused_run(modules["simple"], store_url, "mid_save")
    try:
        _wait_for(proc, "PAUSED mid_save")  # the run's row inserted, its rows next
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=TIMEOUT)
    assert proc.returncode == -signal.SIGKILL
    assert _stored_ids(store_url) == {_saved_id(first)}
    # No run without its rows either: the newest stored run is still the first.
    status, out = api("store", "export", "stored:latest", f"--benchmark_storage={store_url}")
    assert status == 0
    assert json.loads(out)["context"]["ireebench_run_id"].startswith(_saved_id(first))
    # Usable: the next save lands (in this process, through the Python API).
    after = ireebench_api.run([f"--module={modules['simple']}", *QUICK, "--benchmark_save",
                               f"--benchmark_storage={store_url}"])
    assert after.exit_code == 0
    assert len(_stored_ids(store_url)) == 2
    if store_url.startswith("sqlite:///"):
        with sqlite3.connect(store_url.removeprefix("sqlite:///")) as connection:
            assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
            orphans = connection.execute(
                "SELECT count(*) FROM ireebench_rows WHERE run NOT IN "
                "(SELECT id FROM ireebench_runs)").fetchone()
            assert orphans == (0,)


def test_import_the_native_tools_report_once_and_export_it(store_url, modules, native_tool,
                                                           ireebench, tmp_path):
    native = tmp_path / "native.json"
    run = native_tool("iree-benchmark-module", f"--module={modules['simple']}",
                      "--device=local-sync", "--function=noargs", "--benchmark_min_time=1x",
                      "--benchmark_context=machine=pool-a", f"--benchmark_out={native}",
                      "--benchmark_out_format=json")
    assert run.returncode == 0, run.stderr
    storage = f"--benchmark_storage={store_url}"
    first = ireebench("store", "import", native, storage)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith(f"stored {native} as run ")
    status, out = api("store", "import", native, storage)
    assert status == 0 and "already stored as run" in out
    [bench] = api_json("history", "--json", storage)["benchmarks"]
    [stored] = bench["runs"]
    assert stored["source"] == "import" and stored["tags"] == {"machine": "pool-a"}
    assert api("store", "export", "stored:latest", storage)[1] == native.read_text()


def test_history_changes_finds_the_shift_and_its_commits(store_url, tmp_path):
    """Six imported runs, the last three 8x slower: one change, between runs 3 and 4."""
    base = {"host_name": "h", "num_cpus": 2, "date": "2026-01-01T00:00:00+00:00",
            "library_version": "v1.9.5"}
    files = []
    for index in range(6):
        level = 1.0 if index < 3 else 8.0
        rows = [{"name": NAME, "run_name": NAME, "run_type": "iteration", "repetitions": 9,
                 "repetition_index": rep, "iterations": 5, "time_unit": "ms",
                 "real_time": level * (1 + 0.01 * ((rep * 7 + index) % 5)),
                 "cpu_time": level} for rep in range(9)]
        context = dict(base, date=f"2026-01-0{index + 1}T00:00:00+00:00",
                       ireebench_git_commit=f"{index}" * 40)
        path = tmp_path / f"run{index}.json"
        path.write_text(json.dumps({"context": context, "benchmarks": rows}))
        files.append(path)
    storage = f"--benchmark_storage={store_url}"
    assert api("store", "import", *files, storage)[0] == 0
    status, out = api("history", "--changes", storage)
    assert status == 0, out
    row = next(line for line in out.splitlines() if line.startswith(NAME))
    assert "2222222222 -> 3333333333" in row and "+7" in row
    data = api_json("history", "--json", "--changes", storage)
    [change] = data["benchmarks"][0]["changes"]
    assert change["before_commit"] == "2" * 40 and change["after_commit"] == "3" * 40
    assert 6.0 < change["change"] < 8.0


def test_bad_store_input_is_one_line(ireebench, tmp_path, modules):
    missing = ireebench("history", f"--benchmark_storage={tmp_path / 'none.sqlite'}")
    assert "no results store there yet" in one_error_line(missing)
    kind = ireebench(f"--module={modules['simple']}", *QUICK, "--benchmark_save",
                     "--benchmark_storage=ftp://somewhere/db")
    assert "unknown kind of store 'ftp'" in one_error_line(kind)
    status, message = api(f"--module={modules['simple']}", *QUICK, "--benchmark_save",
                          "--benchmark_dry_run", f"--benchmark_storage={tmp_path / 'r.sqlite'}")
    assert status == 2 and "--benchmark_save: a --benchmark_dry_run" in message
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"context": {}, "benchmarks": []}))
    unknown = ireebench("compare", "stored:nonsense!", report,
                        f"--benchmark_storage={tmp_path / 'none.sqlite'}")
    assert unknown.returncode == 2 and "unknown stored reference" in one_error_line(unknown)


def test_a_newer_schema_is_refused_in_one_line(ireebench, tmp_path):
    path = tmp_path / "results.sqlite"
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"context": {"host_name": "h"}, "benchmarks": []}))
    assert api("store", "import", report, f"--benchmark_storage={path}")[0] == 0
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE ireebench_schema SET version = 99")
    result = ireebench("history", f"--benchmark_storage={path}")
    assert "schema version 99 is newer than this ireebench knows" in one_error_line(result)


def test_a_store_that_is_not_a_database_is_refused_and_left_as_it_was(ireebench, tmp_path):
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"context": {"host_name": "h"}, "benchmarks": []}))
    text, broken = tmp_path / "text.sqlite", tmp_path / "broken.sqlite"
    text.write_text("not a database\n" * 50)
    assert api("store", "import", report, f"--benchmark_storage={broken}")[0] == 0
    with broken.open("r+b") as file:  # a real store whose pages are overwritten
        file.seek(4096)
        file.write(bytes(range(256)) * 32)
    for path, why in ((text, "file is not a database"),
                      (broken, "database disk image is malformed")):
        result = ireebench("store", "import", report, f"--benchmark_storage={path}")
        assert why in one_error_line(result)
        assert sorted(p.name for p in tmp_path.iterdir() if p.stem == path.stem) == [path.name]


def test_without_the_extra_one_line_names_it(modules, tmp_path):
    """SQLAlchemy missing (made unimportable): --benchmark_save says which extra to install."""
    code = ("import sys; sys.modules['sqlalchemy'] = None; "
            "from ireebench._cli import main; sys.exit(main())")
    proc = subprocess.run(
        [sys.executable, "-c", code, f"--module={modules['simple']}", *QUICK,
         "--benchmark_save", f"--benchmark_storage={tmp_path / 'r.sqlite'}"],
        capture_output=True, text=True, env=_env(), timeout=TIMEOUT, check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    expected = ("ireebench: error: the results store needs the 'store' extra: "
                'pip install "ireebench[store]"')
    assert proc.stderr.strip().splitlines() == [expected]
    # history of a store not there yet: the extra first (not "no results store there yet").
    proc = subprocess.run(
        [sys.executable, "-c", code, "history", f"--benchmark_storage={tmp_path / 'no.sqlite'}"],
        capture_output=True, text=True, env=_env(), timeout=TIMEOUT, check=False)
    assert proc.returncode == 1 and proc.stderr.strip().splitlines() == [expected]


def test_an_interrupted_run_is_saved_as_interrupted(store_url, compile_mlir):
    """SIGINT during the second function: the first one's rows are saved, flagged, and
    never a baseline (stored:latest skips it)."""
    module = compile_mlir(slow_function("a_fast", 1000) + slow_function("b_slow", 100_000_000))
    env = dict(_env())
    proc = subprocess.Popen(
        [sys.executable, "-m", "ireebench", f"--module={module}", "--device=local-sync",
         "--benchmark_min_time=1x", "--benchmark_save", f"--benchmark_storage={store_url}",
         "--benchmark_format=json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        def read():
            for line in proc.stdout:
                if '"run_name": "BM_a_fast' in line:
                    return line
            return ""

        with ThreadPoolExecutor(1) as pool:
            assert pool.submit(read).result(timeout=TIMEOUT)
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 130, err
    assert "saved interrupted run" in err
    storage = f"--benchmark_storage={store_url}"
    benches = {bench["name"]: bench for bench in
               api_json("history", "--json", storage)["benchmarks"]}
    fast = benches.pop("BM_a_fast/process_time/real_time")
    assert [run["status"] for run in fast["runs"]] == ["interrupted"]
    assert fast["runs"][0]["median_seconds"] > 0
    # The function running when the signal came is an error row (none when the
    # signal came between the two functions).
    for name, bench in benches.items():
        assert name == "BM_b_slow/process_time/real_time", benches
        [[error]] = [run["errors"] for run in bench["runs"]]
        # "... (the function did not return; the worker was killed)" when it went on
        assert error.startswith("interrupted by SIGINT while running"), error
    status, message = api("store", "export", "stored:latest", storage)
    assert status == 2 and "no stored run matches status=complete" in message
    status, out = api("store", "export", "stored:latest?status=interrupted", storage)
    assert status == 0 and '"BM_a_fast' in out


# --- a save that waits for another writer's lock (SQLite) -------------------


def _locked_store(tmp_path):
    """An SQLite store whose write lock this process holds (BEGIN IMMEDIATE): (its
    path, the connection holding it)."""
    path = tmp_path / "results.sqlite"
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"context": {"host_name": "h"}, "benchmarks": []}))
    assert api("store", "import", report, f"--benchmark_storage={path}")[0] == 0
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    return path, holder


def _saving_behind_a_lock(modules, tmp_path):
    """A store whose write lock this process holds (BEGIN IMMEDIATE), and a run saving
    into it, waiting: ``(connection, process)``, once the run said it waits."""
    path, holder = _locked_store(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "ireebench", f"--module={modules['simple']}", *QUICK,
         "--benchmark_save", f"--benchmark_storage={path}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=_env())
    try:
        _wait_for(proc, "--benchmark_save: waiting for another process's write lock")
    except BaseException:
        proc.kill()
        proc.wait()
        holder.close()
        raise
    return holder, proc


@pytest.mark.parametrize("second", [False, True])
def test_a_signal_while_the_save_waits_for_a_lock_saves_or_says_so(modules, tmp_path, second):
    """SIGINT while the save waits for another writer: held back (the worker handles it
    in Python between slices of the wait, so its supervisor never kills it), the run
    is saved once the lock comes, and the run exits 130. A second SIGINT abandons the
    save, in one line: never exit 0, never silent."""
    holder, proc = _saving_behind_a_lock(modules, tmp_path)
    try:
        proc.send_signal(signal.SIGINT)
        _wait_for(proc, "SIGINT received: saving the run first (a second one abandons the save)")
        if second:
            proc.send_signal(signal.SIGINT)
            line = _wait_for(proc, "the run was not saved")
        holder.execute("ROLLBACK")  # the lock comes
        _, err = proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        holder.close()
    assert proc.returncode == 130, err
    storage = f"--benchmark_storage={tmp_path / 'results.sqlite'}"
    if second:
        assert line.strip() == ("ireebench: error: --benchmark_save: the run was not saved: a "
                                "second SIGINT abandoned the save")
        assert "saved run" not in err
        assert api("history", storage, "noargs")[0] == 2  # nothing stored
    else:
        assert "ireebench: saved run " in err and err.splitlines()[-1] == "ireebench: interrupted"
        assert api("history", storage, "noargs")[0] == 0


def test_a_lock_that_never_comes_is_one_line(modules, tmp_path, monkeypatch):
    """The save waits BUSY_TIMEOUT_S (60 s; here 0.3 s), then one line: not saved."""
    from ireebench.plugins.store import database

    monkeypatch.setattr(database, "BUSY_TIMEOUT_S", 0.3)
    path, holder = _locked_store(tmp_path)
    try:
        status, message = api(f"--module={modules['simple']}", *QUICK, "--benchmark_save",
                              f"--benchmark_storage={path}")
    finally:
        holder.close()
    assert status == 2 and message == (
        f"--benchmark_storage=sqlite:///{path}: cannot save the run: another process held "
        "the store's write lock for 0.3 s (SQLite: database is locked)")


# --- what reaches the store, and what is shown of it -----------------------


# A second user, for what depends on who owns a file. It may have to run this
# Python from a directory only root can search (pyenv under /root): it gets
# CAP_DAC_READ_SEARCH, which lets it read and search everything but write
# nothing it could not write anyway.
SECOND_USER = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
               "--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search"]
needs_root = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                                reason="a second user (setpriv as root) owns or reads the files")


@needs_root
def test_a_git_folder_planted_by_another_user_reaches_no_report(modules, ireebench, tmp_path):
    """A .git in a parent folder, owned by someone else, whose HEAD names a file of
    yours: the run is saved without a commit, one note says why (CVE-2022-24765),
    and the file's content is in neither --benchmark_out nor the store."""
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET-1234\n")
    planted = tmp_path / "shared" / ".git"
    planted.mkdir(parents=True)
    (planted / "HEAD").write_text(f"ref: {secret}\n")
    os.chown(planted, 65534, 65534)
    work = tmp_path / "shared" / "work"
    work.mkdir()
    url = f"sqlite:///{tmp_path / 'results.sqlite'}"
    out = tmp_path / "out.json"
    result = ireebench(f"--module={modules['simple']}", *QUICK, "--benchmark_save",
                       f"--benchmark_storage={url}", f"--benchmark_out={out}", cwd=work)
    assert result.returncode == 0, result.stderr
    [note] = [line for line in result.stderr.splitlines() if "git:" in line]
    assert note.startswith(f"ireebench: note: --benchmark_save: git: {planted} is owned by "
                           "uid 65534")
    assert note.endswith("; the run is saved without a commit")
    assert "TOPSECRET" not in out.read_text()
    exported = api("store", "export", f"--benchmark_storage={url}")[1]
    assert "TOPSECRET" not in exported and "ireebench_git_commit" not in exported


@pytest.mark.parametrize("form", ["query", "slash"])
def test_no_password_is_printed(form, request, modules, ireebench, tmp_path):
    """libpq's ?password= and a password with a raw '/': masked in the saved line,
    every store error, history --json and compare's errors; a port that is not a
    number is one usage line (exit 1)."""
    base = request.getfixturevalue("postgres_server").create_database()  # trust auth
    secret = "s3cr/et-pw" if form == "slash" else "s3cret-pw"
    path, _, query = base.partition("?")
    url = (f"{path}?{query}&password={secret}" if form == "query"
           else path.replace("bench@", f"bench:{secret}@") + "?" + query)
    storage = f"--benchmark_storage={url}"
    saved = ireebench(f"--module={modules['simple']}", *QUICK, "--benchmark_save", storage)
    assert saved.returncode == 0, saved.stderr
    line = next(line for line in saved.stderr.splitlines() if "saved run" in line)
    assert "***" in line and secret not in saved.stderr
    listed = ireebench("history", "--json", storage)
    assert listed.returncode == 0 and secret not in listed.stdout
    assert "***" in json.loads(listed.stdout)["storage"]
    missing = ireebench("store", "export", "stored:abcdef12", storage)
    assert "no stored run has that id in" in one_error_line(missing)
    assert secret not in missing.stderr
    unreachable = ireebench("history", storage.replace("host=", "host=/nonexistent"))
    assert "cannot open it" in one_error_line(unreachable) and secret not in unreachable.stderr
    bad_port = ireebench("history", f"--benchmark_storage=postgresql://u:{secret}@h:abc/db")
    assert bad_port.returncode == 1
    assert one_error_line(bad_port) == ("ireebench: error: --benchmark_storage="
                                        "postgresql://u:***@h:abc/db: the port is not a number")


@needs_root
def test_a_store_another_user_may_only_read_is_read(modules, ireebench, tmp_path):
    """A 0644 store in a 0755 directory of its owner: history, store export and
    compare stored:latest work for a reader (read-only, immutable without a WAL);
    the file is not changed."""
    directory = tmp_path / "team"
    directory.mkdir()
    path = directory / "results.sqlite"
    saved = ireebench(f"--module={modules['simple']}", *QUICK, "--benchmark_save",
                      f"--benchmark_storage={path}", "--benchmark_format=json")
    assert saved.returncode == 0, saved.stderr
    report = json.loads(saved.stdout)
    report["context"]["ireebench_run_id"] = "another run"  # never its own baseline
    new = tmp_path / "new.json"
    new.write_text(json.dumps(report))
    for each in (tmp_path, directory, path, new):
        os.chmod(each, 0o755 if each.is_dir() else 0o644)
    before = path.read_bytes()
    env = dict(_env(), HOME=str(tmp_path))
    for command in (["history"], ["store", "export"],
                    ["compare", "stored:latest", str(new), "--accept_cannot_judge"]):
        proc = subprocess.run([*SECOND_USER, sys.executable, "-m", "ireebench", *command,
                               f"--benchmark_storage={path}"], capture_output=True, text=True,
                              env=env, timeout=TIMEOUT, check=False)
        assert proc.returncode == 0, (command, proc.stderr)
        assert "Traceback" not in proc.stderr
    assert path.read_bytes() == before
    assert sorted(p.name for p in directory.iterdir()) == ["results.sqlite"]
    # A store older than this ireebench: its reader cannot migrate it, and says so.
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE ireebench_schema SET version = 1")
    connection.close()
    proc = subprocess.run([*SECOND_USER, sys.executable, "-m", "ireebench", "history",
                           f"--benchmark_storage={path}"], capture_output=True, text=True,
                          env=env, timeout=TIMEOUT, check=False)
    assert proc.returncode == 1 and proc.stderr.splitlines() == [
        (f"ireebench: error: --benchmark_storage=sqlite:///{path}: the store's schema version "
        f"1 is older than this ireebench's ({SCHEMA_VERSION}), and you may not write it to "
        "migrate it: its owner's next save or import will")]


def test_imports_are_checked_as_compare_reads_them_and_history_survives_a_bad_run(
        store_url, tmp_path):
    """A report whose row name is a number is refused in one line (nothing stored); a
    run stored before imports were checked is left out of history with a warning,
    the others listed."""
    rows = [{"name": NAME, "run_name": NAME, "run_type": "iteration", "iterations": 1,
             "time_unit": "ms", "real_time": 1.0, "cpu_time": 1.0}]
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"context": {"host_name": "h"}, "benchmarks": rows}))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"context": {"host_name": "h", "date": "x"},
                               "benchmarks": [dict(rows[0], name=5, run_name=5)]}))
    storage = f"--benchmark_storage={store_url}"
    status, message = api("store", "import", good, bad, storage)
    assert status == 2 and message == f"store import: {bad}: benchmark #1: no name"
    assert api("store", "import", good, storage)[0] == 0
    # A store poisoned before the check: the bad run straight through the Store.
    from ireebench.plugins.store.database import Store
    from ireebench.plugins.store.records import record_of_report

    store = Store(store_url)
    store.save(record_of_report(bad.read_text(), json.loads(bad.read_text())))
    store.close()
    out, err = io.StringIO(), io.StringIO()
    result = ireebench_api.run(["history", storage], stdout=out, stderr=err)
    assert result.exit_code == 0
    assert NAME in out.getvalue()
    [warning] = err.getvalue().splitlines()
    assert warning.startswith("ireebench: warning: history: stored:") and \
        warning.endswith("left out, its rows cannot be read: benchmark #1: no name")


def test_report_and_merge_take_the_store_option_as_compare_does(modules, ireebench, tmp_path):
    url = f"sqlite:///{tmp_path / 'results.sqlite'}"
    saved = ireebench(f"--module={modules['simple']}", *QUICK, "--benchmark_save",
                      f"--benchmark_storage={url}")
    assert saved.returncode == 0, saved.stderr
    merged = tmp_path / "merged.json"
    result = ireebench("merge", "stored:latest", "-o", merged, f"--benchmark_storage={url}")
    assert result.returncode == 0, result.stderr
    assert json.loads(merged.read_text())["benchmarks"][0]["name"].startswith("BM_noargs")
    # The report reads the store given (its message names it); nothing to draw here.
    status, message = api("report", "stored:abcdef12", "-o", tmp_path / "r.html",
                          f"--benchmark_storage={url}")
    assert status == 2 and message == f"stored:abcdef12: no stored run has that id in {url}"
