"""``ireebench rank``: the ranking, every failure state, the cache and resume, the Python API.

Every candidate is a real module compiled from MLIR (tests/fixtures/mlir/rank_*.mlir
and below): one function,
``main(tensor<1048576xi32>) -> tensor<i32>``, summing the first N inputs, so
its work is a compile-time constant; the failing ones fail for real (a
gather 4 TiB out of bounds crashes the worker with SIGSEGV, an endless
``scf.while`` hangs it, a ``cf.assert`` is a runtime error...). The
ranking's timing is never asserted, only its order on candidates whose
work differs by 8x, and the states.
"""

from __future__ import annotations

import hashlib
import html
import json
import math
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import ireebench
import pytest
from conftest import FIXTURE_PLUGINS, MLIR_DIR, one_error_line

# A second user, as in test_store.py: setpriv as root (it may read root's Python).
SECOND_USER = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
               "--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search"]
needs_root = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                                reason="a second user (setpriv as root) owns the files")
from iree.runtime.benchmark import (
    BenchmarkResult,
    BenchmarkTimeoutError,
    BenchmarkToolError,
)
from ireebench.plugins.rank import (
    Ranking,
    State,
    benchmark_module,
    close_workers,
    warm_workers,
)
from ireebench.plugins.rank.measure import RerankResult
from ireebench.plugins.rank.ordering import interpolate, kendall_tau, signed_rank_test
from ireebench.plugins.rank.race import stages
from ireebench.plugins.rank.rerank import judge
from ireebench.plugins.rank.results import Rerank

INPUTS = 1 << 20
INPUT = f"--input={INPUTS}xi32=0"  # zeros: every correct candidate returns 0


# Candidates of clearly different work: 8x steps.
WORK = {"fast": 1 << 14, "mid": 1 << 17, "slow": 1 << 20}


def fixture(name: str, work: int = 0, extra: int = 0) -> str:
    """tests/fixtures/mlir/rank_NAME.mlir, shared with benchmarks/rank_vs_loop.py."""
    text = (MLIR_DIR / f"rank_{name}.mlir").read_text()
    return (text.replace("INPUTS", str(INPUTS)).replace("WORK", str(work))
            .replace("EXTRA", str(extra)))


RUNTIME_ERROR = """
func.func @main(%x: tensor<{m}xi32>) -> tensor<i32> {{
  %false = util.unfoldable_constant false
  cf.assert %false, "ireebench test: the candidate's assertion"
  %c0 = arith.constant 0 : i32
  %r = tensor.from_elements %c0 : tensor<i32>
  return %r : tensor<i32>
}}
"""

NO_MAIN = """
func.func @other(%x: tensor<{m}xi32>) -> tensor<i32> {{
  %c0 = arith.constant 0 : i32
  %r = tensor.from_elements %c0 : tensor<i32>
  return %r : tensor<i32>
}}
"""

OTHER_SIGNATURE = """
func.func @main(%x: tensor<8xi32>, %y: tensor<8xi32>) -> tensor<i32> {{
  %c0 = arith.constant 0 : i32
  %r = tensor.from_elements %c0 : tensor<i32>
  return %r : tensor<i32>
}}
"""

# iree-compile refuses it (the return type is not the function's).
DOES_NOT_COMPILE = """
func.func @main(%x: tensor<{m}xi32>) -> tensor<i32> {{
  return %x : tensor<{m}xi32>
}}
"""

# A candidate's timeout that no loaded machine reaches in these tests' measurements
# (the derived one, 3x the baseline's time plus 0.5 s, is under a second here, and a
# healthy candidate held its device a fifth of that at a load of 10 on 2 CPUs). Only
# the hang meets a timeout: the derived one, in a ranking of its own.
NO_TIMEOUT = "--candidate_timeout=600s"
# Fixed, short measurements (no adaptive stopping), no cache: the tests' cost.
FAST = ["--devices=local-sync", INPUT, "--benchmark_min_time=0.005s",
        "--benchmark_repetitions=3", "--benchmark_min_rel_accuracy=", "--rank_cache=off",
        NO_TIMEOUT]


@pytest.fixture(scope="module")
def modules(compile_mlir, tmp_path_factory) -> dict:
    """Every candidate, compiled once (fast, mid, slow: the sum of WORK[name] inputs)."""
    # The VM's few microseconds per call are small beside these (about 4, 30, 230 us).
    found = {name: compile_mlir(fixture("sum", work)) for name, work in WORK.items()}
    found["wrong"] = compile_mlir(fixture("sum", WORK["mid"], extra=1))
    found["crash"], found["hang"] = compile_mlir(fixture("crash")), compile_mlir(fixture("hang"))
    for name, source in (("runtime_error", RUNTIME_ERROR), ("no_main", NO_MAIN),
                         ("other_signature", OTHER_SIGNATURE)):
        found[name] = compile_mlir(source.format(m=INPUTS))
    folder = tmp_path_factory.mktemp("rank")
    found["bad_mlir"] = folder / "does_not_compile.mlir"
    found["bad_mlir"].write_text(DOES_NOT_COMPILE.format(m=INPUTS))
    found["not_a_module"] = folder / "not_a_module.vmfb"
    found["not_a_module"].write_text("not an IREE module\n")
    return found


def _candidates(modules, tmp_path, *names) -> list[str]:
    """Copies named after their role (a candidate's id is its file's stem)."""
    paths = []
    for name in names:
        source = modules[name]
        target = tmp_path / f"{name}{source.suffix}"
        if not target.exists():
            target.write_bytes(source.read_bytes())
        paths.append(str(target))
    return paths


def _ranking(path) -> dict:
    return json.loads(path.read_text())


def _states(ranking: dict) -> dict:
    return {candidate["id"]: candidate["state"] for candidate in ranking["candidates"]}


def _why(ranking: dict) -> str:
    """What a failed order assertion shows: each candidate's numbers."""
    return json.dumps([{key: c[key] for key in ("id", "state", "seconds", "device_seconds",
                                                "first_pass_ratio",
                                                "ratio", "device", "samples")}
                       for c in ranking["candidates"]], indent=1)


def _order(ranking: dict) -> list[str]:
    ranked = [c for c in ranking["candidates"] if c["rank"] is not None]
    return [c["id"] for c in sorted(ranked, key=lambda c: c["rank"])]


# --- the ranking -----------------------------------------------------------------


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="two pinned workers need 2 CPUs")
def test_rank_orders_candidates_by_their_work_on_two_pinned_workers(ireebench, modules,
                                                                    tmp_path):
    """Ranked by the workers' CPU time: the candidates' work, 8x apart, whatever else
    runs (ranked by real time, as by default, the order is the load's as much as the
    work's on a busy machine: benchmarks/rank_vs_loop.py measures a real-time ranking
    against the true order)."""
    fast, mid, slow = _candidates(modules, tmp_path, "fast", "mid", "slow")
    out, rows = tmp_path / "ranking.json", tmp_path / "rows.json"
    # Adaptive stopping (a ranking's default) with a short budget per candidate.
    result = ireebench("rank", slow, fast, mid, f"--baseline={mid}", "--devices=local-sync",
                       "--cpu_workers=2", INPUT, "--benchmark_max_time=0.2s",
                       "--rank_cache=off", "--rerank_rounds=5", "--rank_by=cpu_time",
                       NO_TIMEOUT, f"--rank_out={out}", f"--benchmark_out={rows}")
    assert result.returncode == 0, result.stderr
    ranking = _ranking(out)
    assert ranking["metric"] == "cpu_time"
    assert _order(ranking) == ["fast", "mid", "slow"], _why(ranking)
    assert set(_states(ranking).values()) == {"ok"}
    # Each repetition's wall and CPU time (what --rank_by=real_time or cpu_time ranks).
    for candidate in ranking["candidates"]:
        assert len(candidate["cpu_samples"]) == len(candidate["samples"]) > 0
        # (no interval from too few repetitions: neither has a precision)
        assert (candidate["cpu_precision"] is None) == (candidate["precision"] is None)
    # Two workers, each pinned to a CPU of its own.
    assert [device["label"] for device in ranking["devices"]] == ["local-sync#0",
                                                                  "local-sync#1"]
    pinned = [tuple(device["worker"]["cpus"]) for device in ranking["devices"]]
    assert len(pinned) == 2 and all(len(cpus) == 1 for cpus in pinned)
    assert pinned[0] != pinned[1]
    # The re-rank (all three) is paired and ordered; Kendall's tau is recorded.
    rerank = ranking["rerank"]
    assert rerank["order"] == ["fast", "mid", "slow"], rerank
    assert all(len(rerank["round_seconds"][member]) == 5 for member in rerank["members"])
    assert -1.0 <= ranking["kendall_tau"] <= 1.0
    # Every device measured the baseline before and after its candidates.
    for device in ranking["devices"]:
        assert device["baselines"] >= 2 or device["candidates"] == 0
    # Google Benchmark rows per measurement, named after the candidate.
    names = {row["name"] for row in json.loads(rows.read_text())["benchmarks"]}
    for candidate in ("fast", "mid", "slow"):
        assert f"BM_main/candidate:{candidate}/process_time/real_time" in names
        assert f"BM_main/candidate:{candidate}/pass:rerank/process_time/real_time_median" \
            in names
    # The console's table, after the rows.
    # Ranked by the CPU time: on local-sync the metric that measured the work.
    assert "Ranking of 3 candidates (BM_main, CPU time)" in result.stdout
    assert ranking["metric"] == "cpu_time"
    assert "Kendall tau, first pass vs re-rank" in result.stdout


def test_with_device_time_candidates_are_ranked_by_the_devices_busy_time(ireebench, modules,
                                                                        tmp_path):
    # No --function: the ranking's function is the baseline's, which the native
    # profiling pass of --device_time must be told (it runs no function with arguments
    # by itself).
    fast, mid, slow = _candidates(modules, tmp_path, "fast", "mid", "slow")
    out = tmp_path / "ranking.json"
    result = ireebench("rank", slow, fast, f"--baseline={mid}", *FAST, "--device_time",
                       "--rerank_top=0", f"--rank_out={out}")
    assert result.returncode == 0, result.stderr
    ranking = _ranking(out)
    assert ranking["metric"] == "device_time"
    assert _order(ranking) == ["fast", "slow"], _why(ranking)
    for candidate in ranking["candidates"]:
        assert candidate["device_seconds"] > 0, _why(ranking)
    assert "Ranking of 2 candidates (BM_main, device time)" in result.stdout


def test_every_failure_state_comes_from_a_real_module(ireebench, modules, tmp_path):
    """Every state but the timeout, in a ranking no candidate's timeout can end (a
    healthy candidate on a busy machine could meet a derived one): the hang's is
    the next test's."""
    names = ["crash", "mid", "wrong", "runtime_error", "no_main",
             "other_signature", "bad_mlir", "not_a_module"]
    candidates = _candidates(modules, tmp_path, *names)
    baseline = _candidates(modules, tmp_path, "fast")[0]
    out, rows = tmp_path / "ranking.json", tmp_path / "rows.json"
    result = ireebench("rank", *candidates, f"--baseline={baseline}", *FAST, "--check_outputs",
                       "--rerank_top=0", f"--rank_out={out}", f"--benchmark_out={rows}")
    assert result.returncode == 0, result.stderr
    ranking = _ranking(out)
    assert _states(ranking) == {
        "crash": "crashed", "mid": "ok", "wrong": "wrong_output",
        "runtime_error": "runtime_error", "no_main": "load_failed",
        "other_signature": "load_failed", "bad_mlir": "compile_failed",
        "not_a_module": "load_failed"}
    by_id = {candidate["id"]: candidate for candidate in ranking["candidates"]}
    assert "SIGSEGV" in by_id["crash"]["message"]
    assert "ireebench test: the candidate's assertion" in by_id["runtime_error"]["message"]
    assert "does not match the expected" in by_id["wrong"]["message"]
    assert "no function 'main'" in by_id["no_main"]["message"]
    assert "other arguments" in by_id["other_signature"]["message"]
    assert "not a valid IREE module" in by_id["not_a_module"]["message"]
    assert "doesn't match function result type" in by_id["bad_mlir"]["message"]
    assert _order(ranking) == ["mid"]
    # A candidate without rows of its own is an error row in the reports, as a
    # failed benchmark is.
    errors = {row["name"]: row["error_message"] for row in
              json.loads(rows.read_text())["benchmarks"] if row.get("error_occurred")}
    for name, state in (("crash", "crashed"), ("no_main", "load_failed"),
                        ("bad_mlir", "compile_failed")):
        assert errors[f"BM_main/candidate:{name}/process_time/real_time"].startswith(state)
    assert "ireebench test" in errors["BM_main/candidate:runtime_error/process_time/real_time"]
    # The crash cost a worker: a new one measured the baseline again (and the last).
    device = ranking["devices"][0]
    assert device["baselines"] >= 3
    assert "Traceback" not in result.stderr


def test_a_hang_is_a_timeout_derived_from_the_baseline(ireebench, modules, tmp_path):
    """An endless loop never returns: it ends at its timeout, whenever that falls
    (derived from the baseline's measurement on the device, counted from the
    candidate's start), its worker killed and replaced. Alone in its ranking: a
    healthy candidate's derived timeout is one a busy machine can reach."""
    (hang,) = _candidates(modules, tmp_path, "hang")
    baseline = _candidates(modules, tmp_path, "fast")[0]
    out, rows = tmp_path / "ranking.json", tmp_path / "rows.json"
    derived = [flag for flag in FAST if flag != NO_TIMEOUT]
    result = ireebench("rank", hang, f"--baseline={baseline}", *derived, "--rerank_top=0",
                       f"--rank_out={out}", f"--benchmark_out={rows}")
    assert result.returncode == 0, result.stderr
    ranking = _ranking(out)
    assert _states(ranking) == {"hang": "timeout"}
    [candidate] = ranking["candidates"]
    assert "the worker was killed" in candidate["message"]
    assert candidate["timeout"] is not None and 0 < candidate["timeout"] < 600
    errors = [row["error_message"] for row in json.loads(rows.read_text())["benchmarks"]
              if row.get("error_occurred")]
    assert errors == [errors[0]] and errors[0].startswith("timeout")
    # The hang cost a worker: a new one measured the baseline again.
    assert ranking["devices"][0]["baselines"] == 2
    assert _order(ranking) == []


def test_without_check_outputs_a_wrong_output_is_ranked(ireebench, modules, tmp_path):
    """Outputs are checked by default (issue 41); --check_outputs=false ranks them all."""
    wrong, good = _candidates(modules, tmp_path, "wrong", "mid")
    out = tmp_path / "ranking.json"
    result = ireebench("rank", wrong, good, f"--baseline={good}", *FAST, "--rerank_top=0",
                       f"--rank_out={out}", "--check_outputs=false")
    assert result.returncode == 0, result.stderr
    assert set(_states(_ranking(out)).values()) == {"ok"}


# --- the cache and resume ------------------------------------------------------------


def test_a_rerun_takes_every_result_from_the_cache(ireebench, modules, tmp_path):
    candidates = _candidates(modules, tmp_path, "fast", "mid", "crash")
    baseline = candidates[1]
    # The candidates in a manifest (ID PATH lines, paths relative to it).
    manifest = tmp_path / "candidates.txt"
    manifest.write_text("# id path\nfast fast.vmfb\nmid mid.vmfb\ncrash crash.vmfb\n")
    cache, out = tmp_path / "cache.jsonl", tmp_path / "ranking.json"
    args = ["rank", manifest, f"--baseline={baseline}", *FAST, f"--rank_cache={cache}",
            "--rerank_top=2", "--rerank_rounds=3", f"--rank_out={out}"]
    first = ireebench(*args)
    assert first.returncode == 0, first.stderr
    before = _ranking(out)
    assert before["measured"] > 0 and before["from_cache"] == 0
    second = ireebench(*args)
    assert second.returncode == 0, second.stderr
    after = _ranking(out)
    assert after["measured"] == 0 and after["device_seconds"] == 0
    assert after["from_cache"] == 3
    assert all(candidate["cached"] for candidate in after["candidates"])
    assert _states(after) == _states(before) == {"fast": "ok", "mid": "ok",
                                                 "crash": "crashed"}
    assert _order(after) == _order(before)
    assert after["rerank"]["cached"] and after["rerank"]["order"] == before["rerank"]["order"]
    # --remeasure measures again.
    third = ireebench(*args, "--remeasure")
    assert third.returncode == 0, third.stderr
    assert _ranking(out)["measured"] > 0 and _ranking(out)["from_cache"] == 0


class StreamReader:
    """The JSON lines of a ``--rank_stream`` FIFO, opened read-write so that neither
    end waits for the other to open; each read waits for a line (or the process's
    end, or ``limit`` seconds: a test fails rather than hangs)."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_RDWR | os.O_NONBLOCK)
        self.buffer = b""

    def next_event(self, proc, limit: float = 120) -> dict | None:
        deadline = time.monotonic() + limit
        while b"\n" not in self.buffer:
            readable = select.select([self.fd], [], [], 1.0)[0]
            if readable:
                self.buffer += os.read(self.fd, 1 << 16)
            elif proc.poll() is not None or time.monotonic() > deadline:
                return None
        line, _, self.buffer = self.buffer.partition(b"\n")
        return json.loads(line)

    def close(self) -> None:
        os.close(self.fd)


def test_an_interrupted_ranking_resumes_where_it_stopped(modules, tmp_path):
    """The second candidate waits for the signal in its worker (worker_probe's
    PROBE_HOLD, given to the first run only): the first is done, the others are not,
    however fast the machine got through them."""
    names = ["fast", "mid", "wrong", "slow"]
    candidates = _candidates(modules, tmp_path, *names)
    cache, out, stream = tmp_path / "cache.jsonl", tmp_path / "ranking.json", \
        tmp_path / "stream.fifo"
    os.mkfifo(stream)
    args = [sys.executable, "-m", "ireebench", "-p", "worker_probe", "rank", *candidates,
            f"--baseline={candidates[0]}", *FAST, f"--rank_cache={cache}", "--rerank_top=0",
            f"--rank_out={out}", "--check_outputs=false"]
    env = dict(os.environ, IREEBENCH_DISABLE_PLUGIN_AUTOLOAD="1",
               PYTHONPATH=os.pathsep.join([str(FIXTURE_PLUGINS),
                                           os.environ.get("PYTHONPATH", "")]))
    reader = StreamReader(stream)
    proc = subprocess.Popen([*args, f"--rank_stream={stream}"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env=dict(env, PROBE_HOLD="BM_main/candidate:mid"))
    try:
        # The stream says when the first candidate is done: then Ctrl-C.
        event = reader.next_event(proc)
        while event is not None and event["event"] != "candidate":
            event = reader.next_event(proc)
        assert event is not None, proc.stderr.read() if proc.poll() is not None else ""
        # --rank_out holds what is known while it runs (issue 41): the first candidate.
        running = _ranking(out)
        assert running["stopped"] == "running" and not running["complete"]
        assert [c["id"] for c in running["candidates"] if c["state"] == "ok"] == ["fast"]
        proc.send_signal(signal.SIGINT)
        events = []
        while (event := reader.next_event(proc)) is not None:
            events.append(event)
            if event["event"] == "ranking":
                break
        _, stderr = proc.communicate(timeout=120)
    finally:
        proc.kill()
        proc.wait()
        reader.close()
    assert proc.returncode == 130, stderr
    assert events[-1]["event"] == "ranking"  # the stream ends with the partial ranking
    stopped = _ranking(out)
    assert stopped["stopped"] == "interrupted" and not stopped["complete"]
    done = [c["id"] for c in stopped["candidates"] if c["state"] != "not_measured"]
    assert done == ["fast"], stopped["candidates"]
    resumed = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300,
                             check=False)
    assert resumed.returncode == 0, resumed.stderr
    ranking = _ranking(out)
    assert ranking["complete"]
    assert {c["id"] for c in ranking["candidates"] if c["cached"]} == set(done)
    assert ranking["from_cache"] == len(done)
    assert _states(ranking) == {name: "ok" for name in names}


def test_a_spent_budget_keeps_what_it_has_and_says_so(ireebench, modules, tmp_path):
    candidates = _candidates(modules, tmp_path, "fast", "mid")
    out = tmp_path / "ranking.json"
    result = ireebench("rank", *candidates, f"--baseline={candidates[0]}", *FAST,
                       "--rank_budget=0.000001", f"--rank_out={out}")
    assert result.returncode == 0, result.stderr
    ranking = _ranking(out)
    assert ranking["stopped"] == "budget" and not ranking["complete"]
    assert set(_states(ranking).values()) == {"not_measured"}
    assert "--rank_budget=1e-06s spent: 2 candidate(s) not measured" in result.stderr


def test_benchmark_save_keeps_every_candidates_rows(ireebench, modules, tmp_path):
    pytest.importorskip("sqlalchemy")
    candidates = _candidates(modules, tmp_path, "fast", "mid")
    store = f"sqlite:///{tmp_path / 'results.sqlite'}"
    result = ireebench("rank", *candidates, f"--baseline={candidates[0]}", *FAST,
                       "--rerank_top=0", "--benchmark_save", f"--benchmark_storage={store}")
    assert result.returncode == 0, result.stderr
    history = ireebench("history", f"--benchmark_storage={store}")
    assert history.returncode == 0, history.stderr
    blocks = dict(block.split("\n", 1) for block in history.stdout.strip().split("\n\n"))
    for path in candidates:  # each candidate's rows stored as its module's, not the baseline's
        digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()[:12]
        stem = os.path.basename(path).removesuffix(".vmfb")
        assert f"{os.path.basename(path)} {digest}" in \
            blocks[f"BM_main/candidate:{stem}/process_time/real_time"], history.stdout


def test_a_stored_ranking_keeps_each_candidates_ratio_interval_and_state(ireebench, modules,
                                                                         tmp_path):
    """Saved to the results store (SQLite), read back by a report section from the
    documented fields (``latest.findings["rank"]["candidates"]``): every candidate's
    state, ratio and interval, as --rank_out has them; the re-ranked ones' intervals
    are their rounds', the others' their repetitions'."""
    pytest.importorskip("sqlalchemy")
    pytest.importorskip("matplotlib")
    candidates = _candidates(modules, tmp_path, "fast", "mid", "slow", "no_main")
    out, page = tmp_path / "ranking.json", tmp_path / "page.html"
    storage = f"--benchmark_storage=sqlite:///{tmp_path / 'results.sqlite'}"
    fast = [flag for flag in FAST if not flag.startswith("--benchmark_repetitions")]
    result = ireebench("rank", *candidates, f"--baseline={candidates[1]}", *fast,
                       "--benchmark_repetitions=6", "--rerank_top=2", "--benchmark_save",
                       storage, f"--rank_out={out}")
    assert result.returncode == 0, result.stderr
    drawn = ireebench("report", "stored:latest", storage, "-p", "report_ranking", "-o", page)
    assert drawn.returncode == 0, drawn.stderr
    section = page.read_text().split('<section id="report_ranking-Ranking">', 1)[1]
    rows = [[html.unescape(cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row)]
            for row in re.findall(r"<tr>(.*?)</tr>", section.split("</section>", 1)[0])]
    stored = {cells[0]: (cells[1], json.loads(cells[2]), json.loads(cells[3]))
              for cells in rows if cells}
    ranking = _ranking(out)
    assert stored == {c["id"]: (c["state"], pytest.approx(c["ratio"]),
                                pytest.approx(c["interval"]))
                      for c in ranking["candidates"]}, _why(ranking)
    assert stored["no_main"] == ("load_failed", None, None)
    for name in ("fast", "mid", "slow"):
        state, ratio, (low, high) = stored[name]
        assert state == "ok" and low <= ratio <= high, stored
    assert ranking["rerank"]["members"] == ["fast", "mid"], _why(ranking)


# --- the Python API --------------------------------------------------------------------


def test_the_python_api_returns_typed_results(modules, tmp_path):
    good, missing = _candidates(modules, tmp_path, "mid", "no_main")
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"candidates": [{"id": "mid", "path": "mid.vmfb"},
                                                   {"id": "no_main", "path": missing}]}))
    ranking = ireebench.rank([manifest], good, *FAST, rerank_top=0)
    assert isinstance(ranking, Ranking) and ranking.exit_code == 0
    assert ranking.by_id("mid").state is State.OK
    assert ranking.by_id("no_main").state is State.LOAD_FAILED
    assert ranking.winner.id == "mid" and ranking.winner.rank == 1
    assert ranking.winner.seconds > 0 and math.isfinite(ranking.winner.ratio)
    # Its rows are the run's (a RunResult): the candidate's, by name.
    assert ranking.by_name("BM_main/candidate:mid/process_time/real_time_median")
    # The same command through ireebench.run returns the same type.
    again = ireebench.run(["rank", good, f"--baseline={good}", *FAST, "--rerank_top=0",
                           "--rank_by=cpu_time"])
    assert isinstance(again, Ranking) and again.winner.id == "mid"
    assert again.metric == "cpu_time" and again.winner.measurement.cpu_seconds > 0
    # winner.seconds is the metric it was ranked by, not its wall time.
    assert again.winner.seconds == again.winner.measurement.cpu_seconds \
        != again.winner.measurement.seconds


def test_one_path_is_one_candidate(modules, tmp_path):
    """``candidates="mid.vmfb"``: one candidate, not one per character."""
    base, mid = _candidates(modules, tmp_path, "fast", "mid")
    ranking = ireebench.rank(mid, base, *FAST, rerank_top=0)
    assert [candidate.id for candidate in ranking.candidates] == ["mid"]


def test_terminal_bytes_in_a_candidates_name_are_escaped(ireebench, modules, tmp_path):
    """ESC and BEL in a file name (its id) never reach the terminal raw."""
    base, mid = _candidates(modules, tmp_path, "fast", "mid")
    named = tmp_path / "m\x1b[31mid\x07.vmfb"
    named.write_bytes(Path(mid).read_bytes())
    result = ireebench("rank", named, f"--baseline={base}", *FAST[:-2], NO_TIMEOUT,
                       "--rerank_top=0", "--rank_cache=off")
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout + result.stderr
    assert "\x07" not in result.stdout + result.stderr
    assert "m\\x1b[31mid\\x07" in result.stdout


def test_benchmark_module_is_the_wrappers_drop_in(modules):
    import iree.runtime as rt

    flags = {"device": "local-sync", "benchmark_repetitions": 2,
             "benchmark_min_time": "0.005s"}
    inputs = [f"{INPUTS}xi32=0"]
    try:
        theirs = rt.benchmark_module(str(modules["fast"]), entry_function="main",
                                     inputs=inputs, **flags)
        ours = benchmark_module(str(modules["fast"]), entry_function="main",
                                inputs=inputs, **flags)
        assert all(isinstance(result, BenchmarkResult) for result in ours)
        assert [r.benchmark_name for r in ours] == [r.benchmark_name for r in theirs]
        for result in ours:
            value, unit = result.time.split(" ")  # as libtuner reads it
            assert float(value) >= 0 and unit in ("ms", "%")
            assert result.report["name"] == result.benchmark_name
        assert int(ours[0].iterations) > 0
        # One warm worker: a VmModule of another candidate is measured by the same process.
        (warm,) = warm_workers()
        pid = warm.worker.pid
        module = rt.VmModule.copy_buffer(rt.VmInstance(), modules["mid"].read_bytes())
        other = benchmark_module(module, inputs=inputs, **flags)
        assert other[0].benchmark_name == "BM_main/process_time/real_time"
        assert [w.worker.pid for w in warm_workers()] == [pid]
        # A hang is the wrapper's timeout, a crash its tool error; the next call goes on.
        with pytest.raises(BenchmarkTimeoutError):
            benchmark_module(str(modules["hang"]), inputs=inputs, timeout=0.5, **flags)
        with pytest.raises(BenchmarkToolError, match="SIGSEGV"):
            benchmark_module(str(modules["crash"]), inputs=inputs, **flags)
        assert benchmark_module(str(modules["fast"]), inputs=inputs, **flags)
        with pytest.raises(ValueError, match="unknown function"):
            benchmark_module(module, entry_function="nope", inputs=inputs, **flags)
    finally:
        close_workers()


def test_benchmark_module_keeps_no_candidates_module_and_misses_no_quick_reply(modules):
    """A tuner's loop: many modules given as objects, each measured in microseconds (its
    worker's ``begin`` and ``result`` arrive in one read). Each call answers (a dropped
    reply is the timeout's error, not a hang), and only the worker's first module stays
    written; nothing once the workers are closed."""
    import iree.runtime as rt

    instance = rt.VmInstance()
    objects = [rt.VmModule.copy_buffer(instance, modules[name].read_bytes())
               for name in ("fast", "mid")]
    flags = {"device": "local-sync", "benchmark_min_time": "1x"}
    try:
        for number in range(20):
            assert benchmark_module(objects[number % 2], entry_function="main",
                                    inputs=[f"{INPUTS}xi32=0"], timeout=60, **flags)
            (warm,) = warm_workers()
            folder = Path(warm.first_module).parent
            assert sorted(path.suffix for path in folder.iterdir()) == [".lock", ".vmfb"]
    finally:
        close_workers()
    assert not folder.exists()


def _two_functions(module, function):
    """One tuner's call: its rows name the function it asked for."""
    rows = benchmark_module(module, entry_function=function,
                            device="local-sync", benchmark_min_time="2x", timeout=120)
    return function, {row.benchmark_name.split("/")[0] for row in rows}


def test_benchmark_module_from_threads_gives_each_caller_its_own_result(compile_mlir):
    """A tuner's thread pool: 8 threads, 16 calls, two functions; each caller's rows are its
    own function's (no swapped reply, no worker closed under another call)."""
    from concurrent.futures import ThreadPoolExecutor

    module = str(compile_mlir("two_functions"))
    try:
        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(_two_functions, [module] * 16, ["first", "second"] * 8))
    finally:
        close_workers()
    assert [names for _, names in answers] == [{f"BM_{function}"} for function, _ in answers]


def _in_a_forked_child(module) -> int:
    """A forked pool's task: a call, then the child's exit (its atexit: close_workers)."""
    _two_functions(module, "first")
    close_workers()
    return os.getpid()


def test_benchmark_module_after_fork_leaves_the_parents_worker(compile_mlir):
    """libtuner's layout: the baseline in the main process, candidates in a forked pool.
    A child measures with a worker of its own; its exit leaves the parent's, which the
    parent's next call reuses."""
    import multiprocessing

    module = str(compile_mlir("two_functions"))
    try:
        _two_functions(module, "first")
        (warm,) = warm_workers()
        pid = warm.worker.pid
        child = os.fork()
        if child == 0:  # a bare fork, as a tuner may do it
            try:
                _in_a_forked_child(module)
            finally:
                os._exit(0)
        assert os.waitpid(child, 0)[1] == 0
        with multiprocessing.get_context("fork").Pool(2) as pool:
            children = pool.map(_in_a_forked_child, [module] * 2)
        assert os.getpid() not in children
        assert _two_functions(module, "first") == ("first", {"BM_first"})
        assert [w.worker.pid for w in warm_workers()] == [pid]
    finally:
        close_workers()


def test_a_module_copy_that_fails_to_write_is_not_kept(compile_mlir):
    """A full disk (a file size limit here) while a module object is written: the call
    fails, and the next one, with room again, measures it (no partial copy under the
    module's hash name)."""
    script = f"""
import resource, signal, iree.runtime as rt
from ireebench.plugins.rank import benchmark_module, close_workers
module = rt.VmModule.copy_buffer(rt.VmInstance(), open({str(compile_mlir("two_functions"))!r}, "rb").read())
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
limits = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (1024, limits[1]))
try:
    benchmark_module(module, entry_function="first", device="local-sync")
    raise SystemExit("written with a 1 KiB file size limit")
except OSError as exc:
    print("refused:", exc.strerror)
resource.setrlimit(resource.RLIMIT_FSIZE, limits)
print(benchmark_module(module, entry_function="first", device="local-sync",
                       benchmark_min_time="2x")[0].benchmark_name)
close_workers()
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1].startswith("BM_first"), proc.stdout


# --- bad input ---------------------------------------------------------------------------


@pytest.mark.parametrize(("args", "expected"), [
    ([], "--baseline=BASE.vmfb is required"),
    (["--baseline={base}", "--devices=nope://0"], "unknown driver 'nope'"),
])
def test_bad_input_is_one_line(ireebench, modules, tmp_path, args, expected):
    base, candidate = _candidates(modules, tmp_path, "fast", "mid")
    result = ireebench("rank", candidate, *(arg.format(base=base) for arg in args), INPUT,
                       "--rank_cache=off")
    assert expected in one_error_line(result)


@pytest.mark.parametrize(("args", "expected"), [
    (["{zero}", "--baseline={base}"], "{zero}: is not a regular file"),
    (["{fifo}", "--baseline={base}"], "{fifo}: is not a regular file"),
    (["{link}", "--baseline={base}"], "{link}: is not a regular file"),
    (["{fifo_mlir}", "--baseline={base}"], "{fifo_mlir}: is not a regular file"),
    (["{mid}", "--baseline={zero}"], "--baseline={zero}: is not a regular file"),
    (["{mid}", "--baseline={fifo}"], "--baseline={fifo}: is not a regular file"),
    (["{mid}", "--baseline={base}", "--input=@{zero}"], "--input=@{zero}"),
    (["{mid}", "--baseline={base}", "--rank_cache={zero}"],
     "--rank_cache={zero}: is not a regular file"),
    (["{mid}", "--baseline={base}", "--rank_cache={fifo}"],
     "--rank_cache={fifo}: is not a regular file"),
])
def test_a_file_that_is_not_a_regular_file_is_one_line(ireebench, modules, tmp_path, args,
                                                       expected):
    """A device, a FIFO or a link to one, where a file is read: one line (not a
    read that never ends or fills the memory)."""
    base, mid = _candidates(modules, tmp_path, "fast", "mid")
    fill = {"base": base, "mid": mid, "zero": "/dev/zero", "fifo": tmp_path / "pipe.vmfb",
            "fifo_mlir": tmp_path / "pipe.mlir", "link": tmp_path / "link.vmfb"}
    os.mkfifo(fill["fifo"])
    os.mkfifo(fill["fifo_mlir"])
    fill["link"].symlink_to(fill["fifo"])
    args = [arg.format(**fill) for arg in args]
    if not any(arg.startswith("--input") for arg in args):
        args.append(INPUT)
    if not any(arg.startswith("--rank_cache") for arg in args):
        args.append("--rank_cache=off")
    result = ireebench("rank", *args, timeout=120)  # the timeout: a safety net for a hang
    assert expected.format(**fill) in one_error_line(result)


def test_a_poisoned_cache_record_is_skipped_with_one_warning(ireebench, modules, tmp_path):
    """A record whose measurement is not one (a string, an unknown state): skipped, one
    warning naming the file and line, measured again (not a plugin error every time)."""
    base, mid = _candidates(modules, tmp_path, "fast", "mid")
    cache = tmp_path / "rank.jsonl"
    args = ["rank", mid, f"--baseline={base}", *FAST[:-2], NO_TIMEOUT, "--rerank_top=0",
            f"--rank_cache={cache}"]
    assert ireebench(*args).returncode == 0
    lines = cache.read_text().splitlines()
    record = next(json.loads(line) for line in lines if '"measurement"' in line)
    poisoned = [{**record, "measurement": "fast"},
                {**record, "measurement": {**record["measurement"], "state": "excellent"}}]
    cache.write_text("\n".join([*lines, *map(json.dumps, poisoned)]) + "\n")
    again = ireebench(*args)
    assert again.returncode == 0, again.stderr
    warnings = [line for line in again.stderr.splitlines() if "warning" in line]
    assert warnings == [f"ireebench: warning: --rank_cache={cache}: line {number}: not a "
                        "measurement record; skipped" for number in (len(lines) + 1,
                                                                     len(lines) + 2)]


def test_an_unwritable_cache_is_refused_before_anything_is_measured(ireebench, modules,
                                                                   tmp_path):
    """A cache that cannot be created (in /proc, even for root) is one line
    before the first measurement, not after the first candidates were measured."""
    base, mid = _candidates(modules, tmp_path, "fast", "mid")
    stream = tmp_path / "stream.jsonl"
    result = ireebench("rank", mid, f"--baseline={base}", *FAST[:-2], NO_TIMEOUT,
                       "--rank_cache=/proc/rank.jsonl", f"--rank_stream={stream}")
    assert "--rank_cache=/proc/rank.jsonl: cannot write" in one_error_line(result)
    assert not stream.exists() or stream.read_text() == ""


@needs_root
def test_a_cache_of_another_user_is_refused(ireebench, modules, tmp_path):
    """A shared folder: a cache file another user planted is not read as results, and a
    link planted at the cache's path is not written through."""
    base, mid = _candidates(modules, tmp_path, "fast", "mid")
    shared = tmp_path / "shared"
    shared.mkdir()
    cache = shared / "rank.jsonl"
    args = ["rank", mid, f"--baseline={base}", *FAST[:-2], NO_TIMEOUT, "--rerank_top=0"]
    assert ireebench(*args, f"--rank_cache={cache}").returncode == 0
    os.chmod(shared, 0o1777)
    subprocess.run([*SECOND_USER, "cp", str(cache), str(shared / "planted.jsonl")],
                   check=True)
    cache.unlink()
    subprocess.run([*SECOND_USER, "mv", str(shared / "planted.jsonl"), str(cache)],
                   check=True)
    planted = ireebench(*args, f"--rank_cache={cache}")
    assert f"--rank_cache={cache}: is owned by uid 65534" in one_error_line(planted)
    victim = tmp_path / "victim.txt"
    victim.write_text("mine\n")
    link = shared / "link.jsonl"
    subprocess.run([*SECOND_USER, "ln", "-s", str(victim), str(link)], check=True)
    linked = ireebench(*args, f"--rank_cache={link}")
    assert f"--rank_cache={link}: is a symbolic link" in one_error_line(linked)
    assert victim.read_text() == "mine\n"


@pytest.mark.parametrize(("arguments", "options", "expected"), [
    (["{mid}"], {"module": "{base}"}, "--module is not a ranking's option"),
    (["{mid}"], {"cpu_workers": 64}, "lower --cpu_workers"),
    (["{mid}"], {"function": "nope"}, "exports no such function"),
    (["{mid}"], {"rank_out": "{base}"}, "is the same file as --baseline={base} (an input"),
    (["{mid}"], {"rerank_rounds": 1}, "--rerank_rounds=1: must be at least 2"),
    (["{mid}"], {"cpu_sets": "0:0"}, "the sets overlap"),
    (["{mid}"], {"rank_by": "device_time"}, "--rank_by=device_time: needs --device_time"),
    (["{mid}"], {"executor": "ray"}, "--executor=ray: which Ray cluster?"),
    (["{mid}"], {"ray_point_timeout": 5}, "rank: --ray_point_timeout is not a ranking's option"),
    (["{mid}"], {"executor": "ssh"}, ("--executor=ssh: a ranking's warm workers, one per "
                                     "--devices device, run on this machine (local) or on a "
                                     "Ray cluster (ray)")),
    (["{folder}/none-*.vmfb"], {}, "no file matches"),
    (["{folder}/fast.vmfb", "{folder}/sub/fast.vmfb"], {}, "have the same id 'fast'"),
    (["{folder}/bad.json"], {}, "manifest {folder}/bad.json: invalid JSON"),
])
def test_bad_input_from_python_is_a_usage_error(modules, tmp_path, arguments, options,
                                                expected):
    base, mid = _candidates(modules, tmp_path, "fast", "mid")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "fast.vmfb").write_bytes(modules["fast"].read_bytes())
    (tmp_path / "bad.json").write_text("[{")
    fill = {"base": base, "mid": mid, "folder": tmp_path}
    with pytest.raises(ireebench.UsageError, match=re.escape(expected.format(**fill))):
        ireebench.rank([argument.format(**fill) for argument in arguments], base, INPUT,
                       rank_cache="off", **{key: str(value).format(**fill)
                                            for key, value in options.items()})


# --- the arithmetic, against scipy -----------------------------------------------------


def test_kendall_tau_is_scipys():
    scipy_stats = pytest.importorskip("scipy.stats")
    first = list("abcdefgh")
    for second in (list("abcdefgh"), list("hgfedcba"), list("bacdfegh"), list("cabdhgef")):
        expected = scipy_stats.kendalltau([first.index(x) for x in first],
                                          [second.index(x) for x in first]).statistic
        assert kendall_tau(first, second) == pytest.approx(expected)
    assert kendall_tau(["a"], ["a"]) is None


@pytest.mark.parametrize("differences", [
    [0.1, 0.2, -0.05, 0.3, 0.15, 0.25, 0.05, -0.02],  # exact
    [0.1, 0.1, -0.1, 0.2, 0.3, 0.3, 0.1, 0.2, -0.2, 0.4],  # ties: the normal approximation
    [float(i % 7 - 2) + 0.01 * i for i in range(60)],  # many: the normal approximation
])
def test_signed_rank_test_is_scipys(differences):
    scipy_stats = pytest.importorskip("scipy.stats")
    method = "exact" if len(set(map(abs, differences))) == len(differences) \
        and len(differences) <= 50 else "approx"
    expected = scipy_stats.wilcoxon(differences, method=method, correction=False).pvalue
    assert signed_rank_test(differences) == pytest.approx(expected, rel=1e-6)


def test_the_baseline_is_interpolated_between_its_measurements():
    points = [(1, 10.0), (5, 20.0)]
    assert interpolate(points, 3) == 15.0
    assert interpolate(points, 0) == 10.0 and interpolate(points, 9) == 20.0
    assert interpolate([], 1) is None


def test_a_process_running_local_task_is_refused_a_forked_local_task_worker(modules, tmp_path):
    # Its task system's threads do not survive a fork: the worker would wait forever.
    (good,) = _candidates(modules, tmp_path, "fast")
    script = f"""
import ireebench
ireebench.run(["--module={good}", "--device=local-task", "{INPUT}", "--benchmark_min_time=1x"])
try:
    ireebench.rank(["{good}"], "{good}", "{INPUT}", devices="local-task", rank_cache="off")
except ireebench.UsageError as exc:
    print(exc)
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, check=False)
    assert "cannot use: rank from a fresh process" in proc.stdout, proc.stderr


def test_loading_the_plugin_imports_none_of_its_measuring_modules():
    # Every ireebench process loads the plugin: only a ranking (or the Python API)
    # pays for the coordinator, the workers and benchmark_module (issue 27's rule).
    measuring = ["ireebench.plugins.rank." + name
                 for name in ("schedule", "measure", "worker", "api")]
    script = f"""
import sys, ireebench._pluginmanager as pm
pm.build_plugin_manager(pm.PluginSelection(), autoload=False)
print([name for name in {measuring!r} if name in sys.modules])
from ireebench.plugins.rank import benchmark_module
print(benchmark_module.__module__)
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, check=True)
    assert proc.stdout.splitlines() == ["[]", "ireebench.plugins.rank.api"]


def test_several_mlir_candidates_compile_together_each_to_its_own_state(ireebench, modules,
                                                                         tmp_path):
    """Several ``.mlir`` candidates compile on a thread pool (issue 39): each keeps
    its own module and state, a refused one among them included."""
    for name, work in (("fast_src", WORK["fast"]), ("mid_src", WORK["mid"])):
        (tmp_path / f"{name}.mlir").write_text(fixture("sum", work))
    bad = tmp_path / "bad_src.mlir"
    bad.write_text(modules["bad_mlir"].read_text())
    baseline = _candidates(modules, tmp_path, "slow")[0]
    out = tmp_path / "ranking.json"
    result = ireebench("rank", *(str(tmp_path / f"{n}.mlir") for n in ("mid_src", "bad_src",
                                                                        "fast_src")),
                       f"--baseline={baseline}", *FAST, "--rerank_top=0", f"--rank_out={out}")
    assert result.returncode == 0, result.stderr
    ranking = _ranking(out)
    assert _states(ranking) == {"mid_src": "ok", "bad_src": "compile_failed",
                                "fast_src": "ok"}, _why(ranking)
    assert _order(ranking) == ["fast_src", "mid_src"], _why(ranking)


def test_rank_help_offers_only_what_a_ranking_takes(ireebench):
    """``rank --help`` lists no option the ranking refuses (issue 39): ``--module``
    among them, which is still refused in one line when given."""
    from ireebench.plugins.rank.command import REFUSED

    result = ireebench("rank", "--help")
    assert result.returncode == 0, result.stderr
    offered = set(re.findall(r"^\s+(--\w+)", result.stdout, re.MULTILINE))
    assert "--baseline" in offered and "--device" in offered
    assert not offered & {f"--{name}" for name in REFUSED}, offered & {f"--{n}" for n in REFUSED}
    refused = ireebench("rank", "--module=x.vmfb", "--baseline=y.vmfb")
    assert refused.returncode != 0
    assert "--module is not a ranking's option" in refused.stderr


def test_a_baseline_that_hangs_ends_at_candidate_timeout(ireebench, modules, tmp_path):
    """The baseline's measurement obeys an explicit ``--candidate_timeout`` too (issue 40):
    one line naming the baseline, not a ranking that runs until something outside kills
    it. (A derived timeout needs the baseline's own time, so only an explicit one applies.)"""
    (fast,) = _candidates(modules, tmp_path, "fast")
    hang = _candidates(modules, tmp_path, "hang")[0]
    flags = [flag for flag in FAST if flag != NO_TIMEOUT]
    result = ireebench("rank", fast, f"--baseline={hang}", *flags, "--candidate_timeout=1s",
                       "--rerank_top=0", timeout=300)
    assert result.returncode != 0 and "Traceback" not in result.stderr, result.stderr
    [line] = [line for line in result.stderr.splitlines() if line.startswith("ireebench: error")]
    assert line.startswith(f"ireebench: error: --baseline={hang}: timeout on "), line
    assert "(its timeout: 1.00 s); the worker was killed" in line, line


# --- the console: a ranking reads like an answer (issue 39 item 4) -------------------


def _table(stdout: str) -> list[dict]:
    """The console table's rows (columns two or more spaces apart)."""
    lines = stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.lstrip().startswith("rank "))
    names = re.split(r"\s{2,}", lines[header].strip())
    rows = []
    for line in lines[header + 2:]:
        cells = re.split(r"\s{2,}", line.strip())
        if not re.fullmatch(r"\d+|-", cells[0]):
            break
        rows.append(dict(zip(names, cells)))
    return rows


def _seconds(shown: str) -> float:
    value, unit = shown.split()
    return float(value) / {"s": 1, "ms": 1e3, "us": 1e6, "ns": 1e9}[unit]


def test_a_ranking_of_twelve_is_the_ranking_in_few_lines(ireebench, compile_mlir, tmp_path):
    """The console shows the ranking, not every measurement's rows; one progress line per
    candidate on stderr; one line for the measurements short of the precision asked; each
    row's time and ratio from the pass that ranked it, so ranks and times agree."""
    candidates = []
    for index in range(12):
        path = tmp_path / f"candidate_with_a_long_name_{index:02}.vmfb"
        path.write_bytes(compile_mlir(fixture("sum", (1 << 12) * (index + 1))).read_bytes())
        candidates.append(str(path))
    out, rows = tmp_path / "ranking.json", tmp_path / "rows.json"
    # Adaptive stopping (the default) with a budget too short for most to reach it.
    result = ireebench("rank", *candidates, f"--baseline={candidates[5]}",
                       "--devices=local-sync", INPUT, "--benchmark_max_time=0.05s",
                       "--rank_cache=off", "--rerank_top=4", "--rerank_rounds=5", NO_TIMEOUT,
                       f"--rank_out={out}", f"--benchmark_out={rows}")
    assert result.returncode == 0, result.stderr
    ranking = _ranking(out)
    lines = result.stdout.splitlines()
    assert len(lines) <= 30 and lines[0].startswith("Ranking of 12 candidates"), result.stdout
    assert "BM_main/candidate" not in result.stdout  # the rows are in --benchmark_out
    assert "BM_main/candidate:candidate_with_a_long_name_00/process_time/real_time" in {
        row["name"] for row in json.loads(rows.read_text())["benchmarks"]}
    progress = [line for line in result.stderr.splitlines() if line.startswith("rank: [")]
    assert len(progress) == 12 and len({line.split()[2] for line in progress}) == 12, progress
    precision = [line for line in result.stderr.splitlines() if "not reached" in line]
    assert len(precision) == (1 if ranking["imprecise"] else 0), result.stderr
    if precision:
        assert f"for {ranking['imprecise']} of {ranking['measured']} measurements" \
            in precision[0]
    table = _table(result.stdout)
    assert [row["rank"] for row in table] == [str(rank) for rank in range(1, 13)], table
    assert [row["pass"] for row in table] == ["re-rank"] * 4 + ["first"] * 8, table
    for passed in ("re-rank", "first"):  # within a pass, times and ratios as ranked
        ranked = [row for row in table if row["pass"] == passed]
        times = [_seconds(row["time"]) for row in ranked]
        ratios = [float(row["vs baseline"]) for row in ranked]
        assert times == sorted(times) and ratios == sorted(ratios), result.stdout
    # --rank_rows: the rows too, on the console before the ranking.
    shown = ireebench("rank", *candidates[:2], f"--baseline={candidates[0]}", *FAST,
                      "--rerank_top=0", "--rank_rows")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.index("BM_main/candidate") < shown.stdout.index("Ranking of 2")


def test_ctrl_c_prints_the_partial_ranking(modules, tmp_path):
    """SIGINT once the first candidate's progress line is out (the second is held in its
    worker until a signal, whose HOLD line comes after it): the ranking of what was measured, exit 130 as any run's."""
    candidates = _candidates(modules, tmp_path, "fast", "mid", "slow")
    env = dict(os.environ, IREEBENCH_DISABLE_PLUGIN_AUTOLOAD="1",
               PROBE_HOLD="BM_main/candidate:mid",
               PYTHONPATH=os.pathsep.join([str(FIXTURE_PLUGINS),
                                           os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen([sys.executable, "-m", "ireebench", "-p", "worker_probe", "rank",
                             *candidates, f"--baseline={candidates[0]}", *FAST,
                             "--rerank_top=0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        seen = []
        for line in proc.stderr:
            seen.append(line)
            # The held candidate's line ends the wait too: no progress line, a failure
            # (not a test waiting for ever).
            if line.startswith(("rank: [1/3] fast ok", "HOLD ")):
                proc.send_signal(signal.SIGINT)
                break
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        proc.kill()
        proc.wait()
    assert seen and seen[-1].startswith("rank: [1/3]"), "".join(seen)
    assert proc.returncode == 130, stderr
    assert "(incomplete: interrupted)" in stdout.splitlines()[0], stdout
    table = _table(stdout)
    assert [(row["rank"], row["candidate"], row["state"]) for row in table] == [
        ("1", "fast", "ok"), ("-", "mid", "not_measured"), ("-", "slow", "not_measured")], stdout


CHEATS = ("constant", "stale", "half", "nothing")


def test_candidates_that_win_by_doing_less_are_wrong_output(ireebench, compile_mlir, tmp_path):
    """Issue 41's four cheats (tests/fixtures/mlir/cheat_*.mlir), each right for the
    --input of ones or faster by skipping work: a constant, a result kept from the
    first call, half the output, a buffer never written. Outputs are checked by
    default and the inputs rotate: every cheat is wrong_output, the honest candidate
    (another schedule of the same values) and a copy of the baseline are ranked."""
    paths = {}
    for name in ("base", "honest", *CHEATS):
        paths[name] = tmp_path / f"{name}.vmfb"
        paths[name].write_bytes(compile_mlir(
            (MLIR_DIR / f"cheat_{name}.mlir").read_text()).read_bytes())
    out = tmp_path / "ranking.json"
    result = ireebench("rank", paths["honest"], paths["base"], *(paths[n] for n in CHEATS),
                       f"--baseline={paths['base']}", "--devices=local-sync",
                       "--input=1024xf32=1", "--benchmark_min_time=0.005s",
                       "--benchmark_repetitions=3", "--benchmark_min_rel_accuracy=",
                       "--rank_cache=off", NO_TIMEOUT, "--rerank_top=0", f"--rank_out={out}")
    assert result.returncode == 0, result.stderr
    ranking = _ranking(out)
    assert _states(ranking) == {"honest": "ok", "base": "ok",
                                **{name: "wrong_output" for name in CHEATS}}, _why(ranking)
    messages = {c["id"]: c["message"] for c in ranking["candidates"]}
    # The constant and the kept result are right on the --input values: the other sets
    # catch them.
    assert messages["constant"].startswith("input set 2 of 3: "), messages
    assert messages["stale"].startswith("input set 2 of 3: "), messages
    # Without the rotation, only the cheats that are wrong on the --input values are seen.
    single = ireebench("rank", paths["constant"], paths["stale"],
                       f"--baseline={paths['base']}", "--devices=local-sync",
                       "--input=1024xf32=1", "--benchmark_min_time=0.005s",
                       "--benchmark_repetitions=3", "--benchmark_min_rel_accuracy=",
                       "--rank_cache=off", NO_TIMEOUT, "--rerank_top=0", "--rotate_inputs=1",
                       f"--rank_out={out}")
    assert single.returncode == 0, single.stderr
    assert set(_states(_ranking(out)).values()) == {"ok"}


def test_a_race_under_a_budget_picks_the_true_winner(ireebench, compile_mlir, tmp_path):
    """--race_budget (issue 41): candidates 10 % apart in work; a brief first pass, the
    finalists re-ranked paired with the rest of the budget; the least work wins."""
    work = {f"w{index}": int((1 << 17) * 1.1 ** index) // 64 * 64 for index in range(4)}
    paths = []
    for name in ("w2", "w0", "w3", "w1"):  # not in the order of their work
        paths.append(tmp_path / f"{name}.vmfb")
        paths[-1].write_bytes(compile_mlir(fixture("sum", work[name])).read_bytes())
    out = tmp_path / "ranking.json"
    result = ireebench("rank", *paths, f"--baseline={paths[2]}", "--devices=local-sync",
                       INPUT, "--race_budget=2", "--rank_cache=off", NO_TIMEOUT,
                       f"--rank_out={out}")
    assert result.returncode == 0, result.stderr
    ranking = _ranking(out)
    assert _order(ranking)[0] == "w0", _why(ranking)
    # The finalists re-ranked, unless the first pass already left the leader alone.
    assert ranking["rerank"] is None or ("w0" in ranking["rerank"]["members"]
                                         and ranking["rerank"]["rounds"] >= 5), ranking["rerank"]
    rerank = ranking["rerank"]
    if rerank is not None and len(rerank["members"]) > 2:  # halved down to the last two
        assert [len(stage) for stage in rerank["stages"]][-1] == 2, rerank["stages"]
        assert set(rerank["stages"][-1]) == set(rerank["order"][:2]), rerank


def test_a_race_halves_its_finalists_down_to_two():
    """Successive halving: each stage the better half of the last, down to two; the
    budget left split evenly, so the fewer members the more rounds."""
    plan = stages(budget=10.0, spent=1.0, members=8, repetition=0.01)
    assert [count for count, _ in plan] == [8, 4, 2]
    assert [rounds for _, rounds in plan] == sorted(rounds for _, rounds in plan)
    assert [count for count, _ in stages(10.0, 1.0, 5, 0.01)] == [5, 3, 2]
    assert [count for count, _ in stages(10.0, 1.0, 2, 0.01)] == [2]


def test_a_halving_stage_pools_its_rounds_and_ranks_who_went_further_first():
    """The second stage's members keep their first-stage rounds (paired with the
    baseline's first rounds); one left out at stage 1 ranks after them even with a
    better ratio over the rounds it ran."""
    rerank = Rerank("local-sync", 6, 0, ["a", "b", "c"], stages=[["a", "b", "c"]])
    seconds = {"a": [1.0, 1.0], "b": [2.0, 2.0], "c": [3.0, 3.0], "baseline": [2.0, 2.0]}
    judge(rerank, RerankResult(seconds=seconds, cpu_seconds=seconds), "real_time")
    assert rerank.order == ["a", "b", "c"]
    rerank.stages.append(["a", "b"])
    seconds = {"a": [3.0, 3.0, 3.0, 3.0], "b": [1.0] * 4, "baseline": [2.0] * 4}
    judge(rerank, RerankResult(seconds=seconds, cpu_seconds=seconds), "real_time")
    assert rerank.round_seconds["a"] == [1.0, 1.0, 3.0, 3.0, 3.0, 3.0]
    assert rerank.round_seconds["baseline"] == [2.0] * 6
    assert rerank.order == ["b", "a", "c"], rerank.ratios
    assert rerank.ratios["c"] == 1.5 and rerank.ratios["b"] == 0.5
