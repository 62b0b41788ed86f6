"""``--executor=ray`` on a real local Ray cluster (the ``ray_executor`` plugin).

One cluster for the whole session (tests/ray_cluster.py): a head offering
``iree:local-sync`` and two worker nodes offering ``iree:local-task`` each,
every node with a host name of its own, all in a network namespace with
only loopback up, as are the ireebench runs under test. With pytest-xdist
the tests of this module run on one worker (``xdist_group``, ``--dist
loadgroup`` in pyproject.toml), so one cluster serves them all; a cluster
left by a crashed session is cleaned up first.

What is checked: a sweep and a suite give the rows a local run gives, with
each row's host and node; the device's resource keeps two points off one
device at once (each node's measurements never overlap: the intervals the
node's own clock recorded); a node killed while it measures loses no point
and duplicates none; a point that crashes is its error row, one that hangs
is its error row at its timeout (whenever that falls); Ctrl-C
writes what finished; a node with another ireebench is refused in one
line; bad flags, a missing cluster and a missing extra are one line each.
And ``ireebench rank`` on the cluster (one warm worker per device, each an
actor on a node holding it): the order and states of a local ranking, each
row with its node; a node killed while its worker measures a candidate
loses none (measured again elsewhere, reported once); more workers than the
cluster has devices for is one line.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import ray_cluster
from conftest import MLIR_DIR, ROOT, CliResult, _env, one_error_line

pytestmark = pytest.mark.xdist_group("ray")

HEAD = {"iree:local-sync": 1}
WORKERS = [{"iree:local-task": 1}, {"iree:local-task": 1}]
RAY = ["--executor=ray", f"--ray_address={ray_cluster.ADDRESS}"]
LEAN = ["--benchmark_min_time=2x", "--function=forward"]
OTHER = """
func.func @other() -> i32 {
  %c = arith.constant 7 : i32
  return %c : i32
}
"""


def _cannot(why: str):
    """A missing component: a failure in CI, elsewhere a skip saying why."""
    if os.environ.get("CI") == "true":
        pytest.fail(why)
    pytest.skip(why)


@pytest.fixture(scope="session")
def session_cluster():
    why = ray_cluster.missing()
    if why:
        _cannot(why)
    ray_cluster.clean_stale()
    made = ray_cluster.RayCluster(_env())
    try:
        made.start(HEAD, WORKERS)
    except ray_cluster.Unavailable as exc:
        made.stop()
        _cannot(str(exc))
    except BaseException:
        made.stop()
        raise
    yield made
    made.stop()


@pytest.fixture
def cluster(session_cluster):
    """The session's cluster, with its two worker nodes (one a test killed is replaced)."""
    while len(session_cluster.workers) < len(WORKERS):
        session_cluster.add_worker(WORKERS[0])
    return session_cluster


@pytest.fixture(scope="module")
def dynamic(compile_mlir):
    return compile_mlir("dynamic")


# A ranking's candidates (tests/fixtures/mlir/rank_*.mlir, as tests/builtin_plugins/
# test_rank.py makes them): main(tensor<1048576xi32>) -> tensor<i32> summing the
# first WORK inputs.
RANK_INPUTS = 1 << 20
# A candidate's timeout no loaded machine reaches (a derived one, under a second for
# these measurements, a busy machine can: a healthy candidate is then "timeout").
RANK = ["--input=1048576xi32=0", "--benchmark_min_time=0.005s", "--benchmark_repetitions=3",
        "--benchmark_min_rel_accuracy=", "--rank_cache=off", "--candidate_timeout=600s"]


def _rank_source(name: str, work: int = 0) -> str:
    text = (MLIR_DIR / f"rank_{name}.mlir").read_text()
    return (text.replace("INPUTS", str(RANK_INPUTS)).replace("WORK", str(work))
            .replace("EXTRA", "0"))


@pytest.fixture(scope="module")
def candidates(compile_mlir, tmp_path_factory) -> dict:
    """fast, mid, slow (16x then 4x the work: local-task's own overhead, some tens of
    microseconds, is small beside mid's), crash (SIGSEGV), and c0..c5 (close, distinct),
    each a file named after its id."""
    folder = tmp_path_factory.mktemp("candidates")
    sources = {"fast": _rank_source("sum", 1 << 14), "mid": _rank_source("sum", 1 << 18),
               "slow": _rank_source("sum", 1 << 20), "crash": _rank_source("crash")}
    sources.update({f"c{i}": _rank_source("sum", (1 << 16) + 4096 * i) for i in range(6)})
    found = {}
    for name, source in sources.items():
        found[name] = folder / f"{name}.vmfb"
        shutil.copy(compile_mlir(source), found[name])
    return found


def on_cluster(cluster, *args, cwd=None, timeout=300) -> CliResult:
    """``python -m ireebench ARGS`` in the cluster's network namespace."""
    proc = cluster.run([sys.executable, "-m", "ireebench", *map(str, args)], cwd=cwd,
                       timeout=timeout)
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


def rows_of(result: CliResult) -> list[dict]:
    assert result.returncode == 0, result.stderr
    return result.json()["benchmarks"]


def shape_of(rows: list[dict]) -> list[tuple]:
    """What a row is, wherever it was measured: name, params, kind, module, devices."""
    return sorted((row["name"], json.dumps(row["params"], sort_keys=True), row["run_type"],
                   row.get("aggregate_name", ""), row.get("iree_module"),
                   row.get("iree_module_sha256"), tuple(row.get("iree_devices", ())))
                  for row in rows)


def _worker_hosts(cluster) -> set[str]:
    return {f"ray-worker-{number}" for number in range(1, cluster.started + 1)}


def test_a_sweep_gives_the_rows_of_a_local_run_each_with_its_node(cluster, ireebench,
                                                                   dynamic, tmp_path):
    for bs in (1, 2, 3):  # each point reads its own .npy: shipped to its node
        np.save(tmp_path / f"in_{bs}.npy", np.full((bs, 512), 0.5, dtype=np.float32))
    sweep = [f"--module={dynamic}", *LEAN, "--device=local-task", "--sweep=bs=1,2,3",
             "--input=@in_{bs}.npy", "--benchmark_repetitions=2", "--benchmark_format=json"]
    local = rows_of(ireebench(*sweep, cwd=tmp_path))
    out = tmp_path / "ray.json"
    store = f"sqlite:///{tmp_path / 'results.sqlite'}"
    result = on_cluster(cluster, *sweep, *RAY, f"--benchmark_out={out}", "--benchmark_save",
                        f"--benchmark_storage={store}", cwd=tmp_path)
    remote = rows_of(result)
    assert shape_of(remote) == shape_of(local)
    assert {row["host_name"] for row in remote} <= _worker_hosts(cluster)
    assert all(re.fullmatch(r"[0-9a-f]{56}", row["ray_node_id"]) for row in remote)
    # The driver wrote the file once, the same rows; its context is the driver's.
    written = json.loads(out.read_text())
    assert shape_of(written["benchmarks"]) == shape_of(remote)
    assert written["context"]["host_name"] not in _worker_hosts(cluster)
    assert "ireebench: ray: 3 points on the cluster at 127.0.0.1:6390: iree:local-task on " \
           "2 nodes" in result.stderr
    # Stored once, each row with its own machine: `history` says which node measured it.
    history = ireebench("history", f"--benchmark_storage={store}")
    assert history.returncode == 0, history.stderr
    machines = re.findall(r"(ray-worker-\d+) \(\d+ CPUs, local-task\)", history.stdout)
    assert len(machines) == 3 and set(machines) <= _worker_hosts(cluster), history.stdout
    # Numbered in the points' order, whatever order they finished in.
    by_name = {row["name"]: row["per_family_instance_index"] for row in remote}
    assert [by_name[f"BM_forward/bs:{bs}/process_time/real_time"] for bs in (1, 2, 3)] == \
        [0, 1, 2]


def test_a_suite_gives_the_rows_of_a_local_run(cluster, ireebench, dynamic, tmp_path):
    shutil.copy(dynamic, tmp_path / "model.vmfb")
    (tmp_path / "suite.toml").write_text("""
[defaults]
module = "model.vmfb"
function = "forward"
input = ["{bs}x512xf32=0.5"]

[[benchmark]]
name = "sync"
device = "local-sync"
sweep = { bs = [1, 2] }

[[benchmark]]
name = "task"
device = "local-task"
sweep = { bs = [4] }
""")
    folder = tmp_path / "elsewhere"  # the suite's paths are its own, not the cwd's
    folder.mkdir()
    args = ["run", tmp_path / "suite.toml", "--benchmark_min_time=2x", "--benchmark_format=json"]
    local = rows_of(ireebench(*args, cwd=folder))
    remote = rows_of(on_cluster(cluster, *args, *RAY, cwd=folder))
    assert shape_of(remote) == shape_of(local)
    hosts = {row["name"].split("/", 1)[0]: row["host_name"] for row in remote}
    assert hosts["sync"] == "ray-head"  # the only node offering iree:local-sync
    assert hosts["task"] in _worker_hosts(cluster)


def test_a_plain_run_is_one_point_on_the_cluster(cluster, dynamic, tmp_path):
    plain = [f"--module={dynamic}", *LEAN, "--input=2x512xf32=0.5", "--device=local-sync"]
    listed = on_cluster(cluster, *plain, *RAY, "--benchmark_list_tests")  # planned here
    assert listed.returncode == 0 and listed.stdout == "BM_forward/process_time/real_time\n"
    assert "ireebench: ray:" not in listed.stderr
    [row] = rows_of(on_cluster(cluster, *plain, *RAY, "--benchmark_format=json"))
    assert row["name"] == "BM_forward/process_time/real_time" and not row.get("params")
    assert row["host_name"] == "ray-head"  # the node offering iree:local-sync


def test_a_device_holds_one_point_at_a_time(cluster, dynamic):
    result = on_cluster(cluster, f"--module={dynamic}", "--function=forward",
                        "--device=local-task", "--input={bs}x512xf32=0.5",
                        "--sweep=bs=1,2,3,4,5,6", "--benchmark_min_time=0.2s",
                        "--benchmark_format=json", "-p", "point_interval", *RAY)
    rows = rows_of(result)
    measured: dict[str, list] = {}
    for row in rows:
        measured.setdefault(row["ray_node_id"], []).append(tuple(row["interval"]))
    for intervals in measured.values():
        ordered = sorted(set(intervals))
        for (_, end), (start, _) in itertools.pairwise(ordered):
            assert end <= start, ordered  # one node's device: one measurement at a time
    assert len(rows) == 6


def test_a_point_that_crashes_is_its_error_row_and_the_others_run(cluster, compile_mlir):
    """No timeout here (nothing hangs): the crash is the point's own, whatever the load."""
    module = compile_mlir((MLIR_DIR / "simple.mlir").read_text() + OTHER)
    result = on_cluster(cluster, f"--module={module}", "--sweep=function=noargs,other",
                        "--device=local-task", "--benchmark_min_time=2x", "-p", "worker_probe",
                        "--probe_abort=BM_noargs/function:noargs", "--benchmark_format=json",
                        *RAY)
    assert result.returncode == 1, result.stderr
    rows = {row["name"]: row for row in result.json()["benchmarks"]}
    crashed = rows["BM_noargs/function:noargs/process_time/real_time"]
    other = rows["BM_other/function:other/process_time/real_time"]
    assert crashed["error_occurred"] and "SIGABRT" in crashed["error_message"]
    assert not other.get("error_occurred") and other["iterations"] == 2
    assert {crashed["host_name"], other["host_name"]} <= _worker_hosts(cluster)


@pytest.mark.parametrize("timeout", ["3", "0.001"])
def test_a_point_that_hangs_is_its_error_row_at_its_timeout(cluster, compile_mlir, timeout):
    """A function that never returns (an endless scf.while): the point ends only at
    --ray_point_timeout, and says so whenever the timeout falls, in the call or while
    its process still starts on a busy node (then before any benchmark ran: always so
    at 1 ms, which no Python process starts in)."""
    module = compile_mlir("hang")
    result = on_cluster(cluster, f"--module={module}", "--function=hang",
                        "--device=local-task", "--benchmark_min_time=2x",
                        "--benchmark_format=json", f"--ray_point_timeout={timeout}", *RAY)
    assert result.returncode == 1, result.stderr
    [hung] = result.json()["benchmarks"]
    assert hung["name"] == "BM_hang/process_time/real_time" and hung["error_occurred"]
    assert hung["error_message"].startswith(
        f"timed out: still running after {timeout} s on node 127.0.0.1 "
        "(--ray_point_timeout)"), hung
    if timeout == "0.001":
        assert hung["error_message"].endswith(", before any of its benchmarks ran"), hung
    assert hung["host_name"] in _worker_hosts(cluster)


def test_ctrl_c_cancels_the_rest_and_writes_what_finished(cluster, dynamic, tmp_path):
    out = tmp_path / "out.json"
    proc = subprocess.Popen(
        [*cluster.enter(), sys.executable, "-m", "ireebench", f"--module={dynamic}",
         "--function=forward", "--device=local-task", "--input={bs}x512xf32=0.5",
         "--sweep=bs=1..12", "--benchmark_min_time=1s", f"--benchmark_out={out}", *RAY],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cluster.env,
        stdin=subprocess.DEVNULL)
    seen = b""
    while b"BM_forward/bs:" not in seen:  # a point's row is on the console: reported
        line = proc.stdout.readline()
        assert line, seen.decode()
        seen += line
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr.decode()
    rows = json.loads(out.read_text())["benchmarks"]
    assert 1 <= len(rows) < 12
    assert not any(row.get("error_occurred") for row in rows)
    # Nothing goes on measuring on the nodes.
    deadline = time.monotonic() + 300
    while cluster.point_processes() and time.monotonic() < deadline:
        time.sleep(0.1)  # polling the nodes' processes, with a deadline
    assert cluster.point_processes() == []
    # A task cancelled before its cleanup leaves its folder to the node's next task.
    after = on_cluster(cluster, f"--module={dynamic}", *LEAN, "--input=2x512xf32=0.5",
                       "--device=local-task", *RAY)
    assert after.returncode == 0, after.stderr
    assert cluster.node_scratch() == []


def test_a_node_with_another_ireebench_is_refused_in_one_line(cluster, dynamic, tmp_path):
    # Another installation of ireebench, first on the node's path: version 0.0.0.
    other = tmp_path / "other"
    shutil.copytree(ROOT / "core", other / "ireebench")
    shutil.copytree(ROOT / "plugins", other / "ireebench" / "plugins")
    version = other / "ireebench" / "version.py"
    version.write_text(version.read_text().replace('__version__ = "', '__version__ = "0.0.0+'))
    env = {"PYTHONPATH": os.pathsep.join([str(other), cluster.env["PYTHONPATH"]])}
    node_id = cluster.add_worker({"test:other-ireebench": 1}, env=env)
    try:
        result = on_cluster(cluster, f"--module={dynamic}", *LEAN, "--input=1x512xf32=0",
                            "--ray_resource=test:other-ireebench", *RAY)
        # A ranking's worker there likewise (checked when it starts on the node).
        ranking = on_cluster(cluster, "rank", dynamic, f"--baseline={dynamic}",
                             "--function=forward", "--input=1x512xf32=0", "--rank_cache=off",
                             "--ray_resource=test:other-ireebench", *RAY)
    finally:
        cluster.kill_node(node_id)
    for line in (one_error_line(result), one_error_line(ranking)):
        assert re.search(r"--executor=ray: node 127\.0\.0\.1 \(host ray-worker-\d+, id "
                         + node_id[:8] + r"\) runs another ireebench or other plugins \(it "
                         r"has ireebench 0\.0\.0\+0\.1\.0; this driver has ireebench "
                         r"0\.1\.0\)", line), line


def test_a_point_no_node_can_run_is_one_line(cluster, dynamic):
    line = one_error_line(on_cluster(cluster, f"--module={dynamic}", *LEAN,
                                     "--input=1x512xf32=0", "--device=local-task",
                                     "--sweep=board=pixel8,pixel9",
                                     "--ray_resource=board:{board}", *RAY))
    assert line.startswith("ireebench: error: --executor=ray: no node of the cluster at "
                           "127.0.0.1:6390 offers board:pixel8 (point board=pixel8); a node "
                           "offers it with ray start --resources='{\"board:pixel8\": 1}' (the "
                           "cluster offers: CPU, "), line


def test_a_killed_node_loses_no_point_and_duplicates_none(cluster, dynamic, tmp_path):
    markers = tmp_path / "markers"
    markers.mkdir()
    out = tmp_path / "out.json"
    proc = subprocess.Popen(
        [*cluster.enter(), sys.executable, "-m", "ireebench", f"--module={dynamic}",
         "--function=forward", "--device=local-task", "--input={bs}x512xf32=0.5",
         "--sweep=bs=1,2,3,4", "--benchmark_min_time=0.3s", f"--benchmark_out={out}",
         "-p", "point_interval", f"--interval_markers={markers}", *RAY],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cluster.env,
        stdin=subprocess.DEVNULL)
    try:
        victim, _ = cluster.kill_when_measuring(markers, proc)  # a worker node dies
        _stdout, stderr = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert victim is not None, "no worker node started a point"
    assert proc.returncode == 0, stderr.decode()
    rows = json.loads(out.read_text())["benchmarks"]
    names = [row["name"] for row in rows]
    assert sorted(names) == sorted(f"BM_forward/bs:{bs}/process_time/real_time"
                                   for bs in range(1, 5))  # each once
    assert not any(row.get("error_occurred") for row in rows)
    # What the dead node was measuring was measured again, elsewhere.
    killed = {marker.split("@", 1)[1] for marker in os.listdir(markers)
              if marker.startswith(victim)}
    assert killed
    assert all(row["ray_node_id"] != victim for row in rows
               if row["name"].replace("/", "_") in killed)


def test_a_ranking_on_the_cluster_orders_as_a_local_one(cluster, ireebench, candidates,
                                                        tmp_path):
    """Ranked by the workers' CPU time: the candidates' work, whatever else runs (by
    real time, the default, the load orders them as much as the work on a busy
    machine; benchmarks/rank_vs_loop.py measures a real-time ranking against the true
    order)."""
    given = [candidates[name] for name in ("slow", "fast", "crash", "mid")]
    np.save(tmp_path / "zeros.npy", np.zeros(RANK_INPUTS, dtype=np.int32))  # shipped to nodes
    args = ["rank", *given, f"--baseline={candidates['mid']}", "--input=@zeros.npy",
            *(flag for flag in RANK if not flag.startswith("--input=")),
            "--rank_by=cpu_time", "--benchmark_format=json"]
    local_out, ray_out = tmp_path / "local.json", tmp_path / "ray.json"
    local = ireebench(*args, "--devices=local-sync", "--cpu_workers=2",
                      f"--rank_out={local_out}", cwd=tmp_path)
    result = on_cluster(cluster, *args, "--devices=local-task,local-task", *RAY,
                        f"--rank_out={ray_out}", cwd=tmp_path)
    assert local.returncode == 0 and result.returncode == 0, result.stderr
    assert "ireebench: ray: rank: 2 warm workers on the cluster at 127.0.0.1:6390: " \
           "local-task#0 (iree:local-task), local-task#1 (iree:local-task)" in result.stderr

    def order(path):
        ranking = json.loads(path.read_text())
        return [(entry["id"], entry["state"], entry["rank"]) for entry in ranking["candidates"]]

    assert order(ray_out) == order(local_out) == [
        ("fast", "ok", 1), ("mid", "ok", 2), ("slow", "ok", 3), ("crash", "crashed", None)]
    ranking = json.loads(ray_out.read_text())
    # One actor per device, each on a worker node of its own (one iree:local-task each).
    hosts = [device["worker"]["host_name"] for device in ranking["devices"]]
    assert sorted(hosts) == sorted(set(hosts)) and set(hosts) <= _worker_hosts(cluster)
    assert {device["ray_resource"] for device in ranking["devices"]} == {"iree:local-task"}
    # Every row says the node it was measured on; the crash's error row too.
    rows = result.json()["benchmarks"]
    assert {row["host_name"] for row in rows} <= _worker_hosts(cluster)
    assert all(re.fullmatch(r"[0-9a-f]{56}", row["ray_node_id"]) for row in rows)
    [crashed] = [row for row in rows if row.get("error_occurred")]
    assert "SIGSEGV" in crashed["error_message"]

    def measured(report_rows):  # the candidates' own rows (not the baselines' rounds)
        return sorted(row["name"] for row in report_rows if "candidate:baseline" not in
                      row["name"] and "pass:rerank" not in row["name"])

    assert measured(rows) == measured(local.json()["benchmarks"])


def test_a_killed_node_loses_no_candidate_of_a_ranking(cluster, candidates, tmp_path):
    markers = tmp_path / "markers"
    markers.mkdir()
    out = tmp_path / "ranking.json"
    ids = [f"c{i}" for i in range(6)]
    proc = subprocess.Popen(
        [*cluster.enter(), sys.executable, "-m", "ireebench", "-p", "point_interval", "rank",
         *(candidates[name] for name in ids), f"--baseline={candidates['mid']}", *RANK,
         "--benchmark_min_time=0.2s", "--devices=local-task,local-task", "--rerank_top=0",
         # What is lost is told by the node's death, not by a timeout: none that a node's
         # death loading the machine could reach (the derived one is ~2.6 s here).
         "--candidate_timeout=120s",
         f"--interval_markers={markers}", f"--rank_out={out}", "--benchmark_format=json",
         *RAY], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cluster.env,
        stdin=subprocess.DEVNULL)
    try:  # a node whose worker measures a candidate dies
        victim, killed = cluster.kill_when_measuring(
            markers, proc, lambda name: "candidate:baseline" not in name)
        stdout, stderr = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert victim is not None, "no worker node started a candidate"
    assert proc.returncode == 0, stderr.decode()
    lost = re.search(r"candidate:(c\d)", killed).group(1)
    assert re.search(rf"ireebench: ray: rank: the worker of local-task#\d was lost with its "
                     rf"node \(ray-worker-\d+\): \w+: .*; candidate {lost} is measured again "
                     r"\(1 of 3\)", stderr.decode()), stderr.decode()
    ranking = json.loads(out.read_text())
    assert sorted((entry["id"], entry["state"]) for entry in ranking["candidates"]) == \
        [(name, "ok") for name in ids], (ranking["candidates"], stderr.decode())
    rows = json.loads(stdout)["benchmarks"]
    for name in ids:  # each reported once (a ranking shows its aggregates)
        own = [row.get("aggregate_name") for row in rows if f"candidate:{name}/" in row["name"]]
        assert sorted(own) == ["cv", "mean", "median", "stddev"], (name, own)
    assert {row["ray_node_id"] for row in rows if f"candidate:{lost}/" in row["name"]} \
        .isdisjoint({victim})
    # The dead node's actor left its folder (a machine that dies cleans nothing up); the
    # next ranking's actor removes it, and every actor its own.
    assert [name for name in cluster.node_scratch() if name.startswith("ireebench-rank-")]
    after = cluster.run([sys.executable, "-m", "ireebench", "rank", candidates["fast"],
                         f"--baseline={candidates['mid']}", *RANK, "--devices=local-task",
                         "--rerank_top=0", *RAY])
    assert after.returncode == 0, after.stderr
    assert cluster.node_scratch() == []


def test_ctrl_c_stops_a_ranking_on_the_cluster_and_a_rerun_resumes(cluster, candidates,
                                                                   tmp_path):
    ids = [f"c{i}" for i in range(6)]
    out, stream, cache = tmp_path / "ranking.json", tmp_path / "stream.jsonl", \
        tmp_path / "cache.jsonl"
    args = [sys.executable, "-m", "ireebench", "rank", *(candidates[name] for name in ids),
            f"--baseline={candidates['mid']}", *RANK, f"--rank_cache={cache}",
            "--benchmark_min_time=0.2s", "--devices=local-task,local-task", "--rerank_top=0",
            f"--rank_out={out}", *RAY]
    proc = subprocess.Popen([*cluster.enter(), *args, f"--rank_stream={stream}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=cluster.env, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        while proc.poll() is None and time.monotonic() < deadline and not (
                stream.exists() and '"event": "candidate"' in stream.read_text()):
            time.sleep(0.05)  # polling the stream for the first candidate, with a deadline
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, stderr.decode()
    stopped = json.loads(out.read_text())
    assert stopped["stopped"] == "interrupted" and not stopped["complete"]
    done = {entry["id"] for entry in stopped["candidates"] if entry["state"] == "ok"}
    assert done and len(done) < len(ids)
    deadline = time.monotonic() + 300
    while cluster.rank_workers() and time.monotonic() < deadline:
        time.sleep(0.1)  # polling the nodes' processes, with a deadline
    assert cluster.rank_workers() == []  # nothing goes on measuring on the nodes
    # A rerun measures only the rest: the cache knows the cluster's device by its
    # resource, whichever node measured it.
    resumed = cluster.run(args)
    assert resumed.returncode == 0, resumed.stderr
    ranking = json.loads(out.read_text())
    assert ranking["complete"] and ranking["from_cache"] == len(done)
    assert {entry["id"] for entry in ranking["candidates"] if entry["cached"]} == done


def test_a_ranking_needs_a_device_for_every_worker_at_once(cluster, candidates):
    line = one_error_line(on_cluster(cluster, "rank", candidates["fast"],
                                     f"--baseline={candidates['mid']}", *RANK,
                                     "--devices=local-task,local-task,local-task", *RAY))
    assert line.startswith(
        "ireebench: error: --devices=local-task,local-task,local-task: with --executor=ray "
        "each worker holds its device for the whole ranking: they ask for 3 of "
        "iree:local-task, the cluster at 127.0.0.1:6390 offers 2 (a node offers one with ray "
        "start --resources='{\"iree:local-task\": 1}'; it offers: CPU, "), line


@pytest.mark.parametrize("flags, message", [
    (["--executor=ray"], "--executor=ray: which Ray cluster? give --ray_address=HOST:PORT"),
    (["--executor=ray", "--ray_address=127.0.0.1:1"],
     "--ray_address=127.0.0.1:1: no Ray cluster answers there: Connection refused"),
    (["--executor=ray", "--ray_address=here"], "--ray_address=here: expected HOST:PORT"),
    (["--ray_resource=board:x"], "--ray_resource: only for --executor=ray"),
    (["--executor=ray", "--ray_address=x:1", "--ray_point_timeout=-1"],
     "--ray_point_timeout=-1: must be 0 (no limit) or more seconds"),
    (["--executor=ray", "--ray_address=x:1", "--ray_retries=-1"],
     "--ray_retries=-1: must be 0 or more"),
    (["--executor=ray", "--ray_address=x:1", "--benchmark_enable_random_interleaving=true"],
     ("--benchmark_enable_random_interleaving=true: needs every point in this process; "
     "--executor=ray measures each point in a process of its own")),
    (["--executor=ray", "--ray_address=x:1", "--print_statistics"],
     ("--print_statistics: concerns the whole run of one configuration and cannot be used "
     "with --executor=ray")),
    (["--executor=nowhere"], "--executor=nowhere: unknown executor (known: local, ray)"),
    (["--executor=ray", "--backend=native", "--ray_address=x:1"],
     ("--executor=ray: needs a backend that measures its points where --executor says "
     "(capability 'executors'); --backend=native does not have it")),
])
def test_bad_ray_flags_are_one_line(ireebench, dynamic, flags, message):
    line = one_error_line(ireebench(f"--module={dynamic}", *LEAN, "--input=1x512xf32=0",
                                    *flags))
    assert message in line, line


def test_without_the_extra_the_executor_names_it(dynamic):
    # Python without Ray: `import ray` fails and find_spec finds nothing, as when the
    # package is not installed.
    code = ("import sys; sys.modules['ray'] = None; from ireebench._cli import main; "
            "main(sys.argv[1:])")
    proc = subprocess.run([sys.executable, "-c", code, f"--module={dynamic}", *LEAN,
                           "--input=1x512xf32=0", *RAY], capture_output=True, text=True,
                          env=_env(), timeout=300, check=False)
    line = one_error_line(CliResult(proc.returncode, proc.stdout, proc.stderr))
    assert line == ('ireebench: error: --executor=ray: needs Ray, the ray extra: '
                    'pip install "ireebench[ray]"')


@pytest.mark.parametrize("answer", [b"", b"HTTP/1.1 400 Bad Request\r\n\r\n"])
def test_an_address_where_something_else_listens_is_one_line(ireebench, dynamic, answer):
    """A port that accepts but is no Ray (silent, or an HTTP/1 server): one line within
    the connect time, not Ray's minute of waiting (issue 40)."""
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    done = threading.Event()

    def serve():
        connection, _ = server.accept()
        with connection:
            connection.recv(64)
            if answer:
                connection.sendall(answer)
            done.wait(60)  # silent: hold the connection open until the run gave up

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        line = one_error_line(ireebench(f"--module={dynamic}", *LEAN, "--input=1x512xf32=0",
                                        "--executor=ray", f"--ray_address=127.0.0.1:{port}"))
    finally:
        done.set()
        server.close()
    said = "said nothing within" if not answer else "answered something else than gRPC"
    assert line.startswith(f"ireebench: error: --ray_address=127.0.0.1:{port}: no Ray cluster "
                           f"answers there: the port is open but {said}"), line


@pytest.mark.parametrize("planted", [False, True])
def test_auto_joins_only_a_cluster_of_ones_own(ireebench, dynamic, tmp_path, planted):
    """``--ray_address=auto`` trusts Ray's address file only when it is the caller's own,
    and never falls back to any ``gcs_server`` on the machine (issue 40)."""
    if planted and os.geteuid() != 0:
        pytest.skip("planting a file as another user needs root")
    folder = tmp_path / "ray"
    folder.mkdir()
    if planted:  # another user's cluster, as `ray start --head` run by uid 65534 leaves it
        address_file = folder / "ray_current_cluster"
        address_file.write_text("127.0.0.1:6390\n")
        os.chown(address_file, 65534, 65534)
    line = one_error_line(ireebench(f"--module={dynamic}", *LEAN, "--input=1x512xf32=0",
                                    "--executor=ray", "--ray_address=auto",
                                    env={"RAY_TMPDIR": str(tmp_path), "RAY_ADDRESS": ""}))
    if planted:
        assert line == (f"ireebench: error: --ray_address=auto: {folder}/ray_current_cluster "
                        "belongs to uid 65534, not to you: ireebench joins no cluster another "
                        "user started; give --ray_address=HOST:PORT"), line
    else:
        assert line.startswith("ireebench: error: --ray_address=auto: no cluster of yours on "
                               f"this machine ({folder}/ray_current_cluster is missing)"), line
