"""``ireebench rank --replay``: whole-model ranking by replay substitution.

A real capture of examples/tuning/model.mlir (two matmuls, one executable
each), candidates made by the shipped toy tuner (examples/tuning/candidates.py:
the first dispatch compiled with other vector tiles, its payload dumped by
iree-compile), and the second dispatch's payload as a candidate for the
first, which replay's ABI check refuses. Nothing about the timing is
asserted: the states, the rows, the ranking's shape.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CPU_FLAGS, ROOT, one_error_line

EXAMPLE = ROOT / "examples" / "tuning"
INPUTS = ["--input=64x512xf32=1", "--input=512x1024xf32=0.01", "--input=1024x256xf32=0.02"]
# One native process of two repetitions per measurement, two re-rank rounds, no cache.
FAST = ["--devices=local-sync", "--benchmark_min_time=1x", "--benchmark_repetitions=2",
        "--benchmark_min_rel_accuracy=", "--rerank_rounds=2", "--candidate_timeout=600s"]


@pytest.fixture(scope="session")
def tuning(tmp_path_factory, ireebench, native_tool) -> dict:
    """The capture, its executables' ids, and the candidates' payloads."""
    folder = tmp_path_factory.mktemp("tuning")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}"
                                 f"{os.environ.get('PATH', '')}"}
    target_cpu = next(flag for flag in CPU_FLAGS if "target-cpu" in flag).split("=")[1]
    subprocess.run([sys.executable, str(EXAMPLE / "candidates.py"), str(folder / "cands"),
                    "--tiles=8x32x1,4x16x4", f"--target-cpu={target_cpu}"], check=True,
                   env=env, capture_output=True)
    binaries = folder / "baseline"
    subprocess.run(["iree-compile", str(EXAMPLE / "model.mlir"), *CPU_FLAGS,
                    "--iree-hal-link-executables=false",
                    f"--iree-hal-dump-executable-binaries-to={binaries}",
                    "-o", str(folder / "model.vmfb")], check=True, env=env)
    capture = folder / "model.ireereplay"
    made = ireebench(f"--module={folder / 'model.vmfb'}", "--device=local-sync",
                     "--function=main", *INPUTS, "--benchmark_min_time=1x",
                     f"--device_replay_output={capture}")
    assert made.returncode == 0, made.stderr
    dump = native_tool("iree-dump-replay", "--format=jsonl", capture)
    ids = [json.loads(line)["related_object_id"] for line in dump.stdout.splitlines()
           if '"executable_cache.prepare_executable"' in line]
    assert len(ids) == 2, dump.stdout
    wrong = folder / "wrong.so"  # the second dispatch's payload, offered for the first
    wrong.write_bytes(next(binaries.glob("*dispatch_1_*")).read_bytes())
    return {"capture": capture, "first": ids[0], "second": ids[1],
            "a": folder / "cands" / "t8x32x1.so", "b": folder / "cands" / "t4x16x4.so",
            "wrong": wrong}


def test_candidates_are_ranked_by_the_whole_replay_and_an_abi_mismatch_is_a_state(
        ireebench, tuning, tmp_path):
    out, rows, cache = tmp_path / "ranking.json", tmp_path / "rows.json", tmp_path / "c.jsonl"
    args = ["rank", f"--replay={tuning['capture']}", f"--executable={tuning['first']}",
            tuning["a"], tuning["b"], tuning["wrong"], *FAST, f"--rank_cache={cache}",
            f"--rank_out={out}", f"--benchmark_out={rows}"]
    result = ireebench(*args)
    assert result.returncode == 0, result.stderr
    ranking = json.loads(out.read_text())
    states = {c["id"]: c["state"] for c in ranking["candidates"]}
    assert states == {"t8x32x1": "ok", "t4x16x4": "ok", "wrong": "load_failed"}, states
    wrong = next(c for c in ranking["candidates"] if c["id"] == "wrong")
    # The native tool's own line: the first dispatch's export is not in that payload.
    assert "not found in library" in wrong["message"], wrong["message"]
    assert "\n" not in wrong["message"]
    assert sorted(c["rank"] for c in ranking["candidates"] if c["rank"]) == [1, 2]
    assert ranking["function"] == "replay" and ranking["complete"]
    assert ranking["baseline"]["path"] == str(tuning["capture"])
    # Re-ranked paired with the unchanged replay, two rounds each.
    assert sorted(ranking["rerank"]["members"]) == ["t4x16x4", "t8x32x1"]
    assert all(len(seconds) == 2 for seconds in ranking["rerank"]["round_seconds"].values())
    # Every measurement's rows, named after the candidate; the baseline's per round.
    names = {row["name"] for row in json.loads(rows.read_text())["benchmarks"]}
    for candidate in ("t8x32x1", "t4x16x4"):
        assert f"BM_replay/candidate:{candidate}/scope:execute/process_time/manual_time" \
            in names, sorted(names)
    assert any(name.startswith("BM_replay/candidate:baseline/device:local-sync#0/round:1/")
               for name in names), sorted(names)
    assert any(name.startswith("BM_replay/candidate:wrong") for name in names)  # its error row
    assert "Ranking of 3 candidates (BM_replay, real time) against" in result.stdout
    # A rerun takes everything from the cache (the refused payload too): no native
    # process runs.
    again = ireebench(*args)
    assert again.returncode == 0, again.stderr
    assert "0 measurement(s)" in again.stdout and "3 candidate(s) from the cache" in again.stdout


@pytest.mark.parametrize(("args", "expected"), [
    ([], ("rank: --replay needs --executable=ID[@FORMAT], the captured executable the "
          "candidates replace: {capture}'s executables: {first} (embedded-elf-x86_64: "
          "main_dispatch_0_matmul_64x1024x512_f32); {second}")),
    (["--executable=99"], "--executable=99: {capture}'s executables: {first} "),
    (["--executable={first}", "--input=1xf32=1"],
     "rank: --input cannot be used with --replay: the capture holds the inputs"),
    (["--executable={first}", "--baseline={capture}"],
     "rank: --baseline cannot be used with --replay"),
    (["--executable={first}", "--device_time"],
     "rank: --device_time cannot be used with --replay"),
])
def test_bad_input_is_one_line(ireebench, tuning, args, expected):
    fill = {key: tuning[key] for key in ("capture", "first", "second")}
    result = ireebench("rank", f"--replay={tuning['capture']}", tuning["a"],
                       *(arg.format(**fill) for arg in args), "--rank_cache=off")
    assert expected.format(**fill) in one_error_line(result)


def test_the_python_api_ranks_payloads_by_replay(tuning):
    import ireebench

    ranking = ireebench.rank([tuning["a"], tuning["wrong"]], None, *FAST[1:],
                             replay=tuning["capture"], executable=tuning["first"],
                             devices="local-sync", rank_cache="off", rerank_top=0)
    states = {candidate.id: candidate.state.value for candidate in ranking.candidates}
    assert states == {"t8x32x1": "ok", "wrong": "load_failed"}
    assert ranking.winner.id == "t8x32x1" and ranking.winner.ratio > 0


def test_a_file_that_is_not_a_capture_is_one_line(ireebench, tuning, tmp_path):
    text = tmp_path / "notes.ireereplay"
    text.write_text("not a capture\n")
    result = ireebench("rank", f"--replay={text}", "--executable=4", tuning["a"],
                       "--rank_cache=off")
    assert f"--replay={text}: iree-dump-replay failed: " in one_error_line(result)
    result = ireebench("rank", "--executable=4", tuning["a"], "--baseline=x.vmfb",
                       "--rank_cache=off")
    assert "--executable: only with --replay=CAPTURE.ireereplay" in one_error_line(result)
