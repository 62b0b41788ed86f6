"""Sweeps and suites (the ``sweeps`` plugin and the in-process backend's points).

On a real dynamic-shape module (``tensor<?x512xf32>``, tests/fixtures/mlir/dynamic.mlir):
names and ``params``, per-point inputs, sessions, shards and merge, suites,
interleaving, failing points, the point hook, the progress line.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys

import pytest
from conftest import MLIR_DIR, ROOT, _env, one_error_line
from ireebench.plugins.sweeps.axes import parse_axis, point_specs, substitute

LEAN = ["--device=local-sync", "--benchmark_min_time=2x", "--function=forward"]


@pytest.fixture(scope="module")
def dynamic(compile_mlir):
    return compile_mlir("dynamic")


def _json(result):
    assert result.returncode == 0, result.stderr
    return result.json()["benchmarks"]


def _probe(stderr: str, what: str) -> list[list[str]]:
    return [line.split()[2:] for line in stderr.splitlines()
            if line.startswith(f"PROBE {what} ")]


@pytest.mark.parametrize("text, values", [
    ("bs=1..64:*2", [1, 2, 4, 8, 16, 32, 64]),
    ("seq=128..512:+128", [128, 256, 384, 512]),
    ("n=1..3,10,0.5", [1, 2, 3, 10, 0.5]),
    ("v=a,b\\,c,007,1e-05", ["a", "b,c", "007", 1e-05]),
    ("m=../a.vmfb,-1", ["../a.vmfb", -1]),
])
def test_axis_values_and_ranges(text, values):
    assert parse_axis(text).values == values


def test_points_are_the_product_last_axis_fastest_with_braces_escaped():
    specs = point_specs(["--sweep=a=1,2", "--input={a}x{{b}}", "--sweep", "c=x,y",
                         "--function=f_{c}"], {})
    assert [spec.params for spec in specs] == [{"a": 1, "c": "x"}, {"a": 1, "c": "y"},
                                               {"a": 2, "c": "x"}, {"a": 2, "c": "y"}]
    assert specs[0].argv == ["--input=1x{b}", "--function=f_x"]
    assert specs[0].label == "a=1, c=x"
    assert substitute("{{x}}{x}", {"x": "7"}) == "{x}7"


def test_names_and_params_follow_google_benchmark_arg_names(ireebench, dynamic):
    result = ireebench(f"--module={dynamic}", *LEAN, "--input={bs}x512xf32=0.5",
                       "--sweep", "bs=1..4:*2", "--sweep=batch_size=1,2",
                       "--benchmark_format=json")
    rows = _json(result)
    # The cartesian product, the last axis varying fastest; one family, an
    # instance per point, as Google Benchmark numbers ArgNames instances.
    assert [(r["name"], r["params"], r["family_index"], r["per_family_instance_index"])
            for r in rows] == [
        (f"BM_forward/bs:{bs}/batch_size:{batch}/process_time/real_time",
         {"bs": bs, "batch_size": batch}, 0, index)
        for index, (bs, batch) in enumerate((b, c) for b in (1, 2, 4) for c in (1, 2))]
    # The axis that names a flag set it: two logical iterations per batch.
    assert [r["iterations"] for r in rows] == [2, 2, 2, 2, 2, 2]
    assert '"params": {"bs": 1, "batch_size": 1}' in result.stdout  # numbers as numbers
    assert result.json()["context"]["sweep"] == {"bs": [1, 2, 4], "batch_size": [1, 2]}
    # --benchmark_filter matches the full names.
    filtered = ireebench(f"--module={dynamic}", *LEAN, "--input={bs}x512xf32=0.5",
                         "--sweep=bs=1,4", "--benchmark_filter=bs:4/", "--benchmark_list_tests")
    assert filtered.stdout.splitlines() == ["BM_forward/bs:4/process_time/real_time"]


def test_a_plain_run_has_no_params(ireebench, dynamic):
    result = ireebench(f"--module={dynamic}", *LEAN, "--input=2x512xf32=0.5",
                       "--benchmark_format=json")
    assert result.returncode == 0, result.stderr
    assert '"params"' not in result.stdout and "sweep" not in result.json()["context"]
    assert result.json()["benchmarks"][0]["name"] == "BM_forward/process_time/real_time"


def test_each_point_runs_with_its_own_inputs(ireebench, dynamic):
    result = ireebench(f"--module={dynamic}", *LEAN, "--input={bs}x512xf32=0.5",
                       "--sweep=bs=1,3", "-p", "point_probe", "--benchmark_format=json")
    rows = _json(result)
    # The shape of each point's result is its own input's.
    assert [r["label"].split()[1] for r in rows] == ["shape=1x512", "shape=3x512"]
    assert [line[:2] for line in _probe(result.stderr, "workload")] == [
        ["BM_forward/bs:1/process_time/real_time", "{'bs':"],
        ["BM_forward/bs:3/process_time/real_time", "{'bs':"]]


def test_a_device_sweep_opens_a_session_per_device_and_closes_in_order(ireebench, dynamic):
    result = ireebench(f"--module={dynamic}", *LEAN, "--input={bs}x512xf32=0.5",
                       "--sweep=bs=1,4", "--sweep=device=local-sync,local-task",
                       "--benchmark_enable_random_interleaving=false",
                       "-p", "point_probe", "--benchmark_format=json")
    rows = _json(result)
    # Points that share modules and device share a session: two sessions,
    # each point measured in its own device's.
    assert _probe(result.stderr, "session") == [["local-sync"], ["local-task"]]
    assert [r["name"] for r in rows] == [
        "BM_forward/bs:1/device:local-sync/process_time/real_time",
        "BM_forward/bs:4/device:local-sync/process_time/real_time",
        "BM_forward/bs:1/device:local-task/process_time/real_time",
        "BM_forward/bs:4/device:local-task/process_time/real_time"]
    lines = [line.split()[:3] for line in result.stderr.splitlines()
             if line.startswith(("PROBE session", "PROBE workload"))]
    assert [line[2].split("/")[2] for line in lines if line[1] == "workload"][:2] == [
        "device:local-sync", "device:local-sync"]
    assert lines[3] == ["PROBE", "session", "local-task"]


def test_shards_partition_the_points_and_merge_back_to_the_full_set(ireebench, dynamic,
                                                                   tmp_path):
    sweep = [f"--module={dynamic}", *LEAN, "--input={bs}x512xf32=0.5", "--sweep=bs=1..32:*2"]
    full = ireebench(*sweep, "--benchmark_list_tests").stdout.splitlines()
    assert len(full) == 6
    shards = []
    for index in range(3):
        out = tmp_path / f"shard{index}.json"
        result = ireebench(*sweep, f"--shard_index={index}", "--shard_count=3",
                           f"--benchmark_out={out}", "--benchmark_format=csv")
        assert result.returncode == 0, result.stderr
        shards.append(out)
    names = [[b["name"] for b in json.loads(path.read_text())["benchmarks"]] for path in shards]
    assert sorted(n for shard in names for n in shard) == sorted(full)
    assert [len(shard) for shard in names] == [2, 2, 2]  # disjoint and balanced
    # GoogleTest's variables pick the same shard.
    env = subprocess.run([sys.executable, "-m", "ireebench", *map(str, sweep),
                          "--benchmark_list_tests"], capture_output=True, text=True, check=False,
                         env={**_env(), "GTEST_SHARD_INDEX": "1", "GTEST_TOTAL_SHARDS": "3"})
    assert env.stdout.splitlines() == names[1]
    merged = tmp_path / "all.json"
    result = ireebench("merge", *shards, "-o", merged)
    assert result.returncode == 0, result.stderr
    report = json.loads(merged.read_text())
    assert sorted(b["name"] for b in report["benchmarks"]) == sorted(full)
    assert sorted(b["per_family_instance_index"] for b in report["benchmarks"]) == list(range(6))
    assert [entry["shard_index"] for entry in report["context"]["merged_from"]] == [0, 1, 2]
    twice = one_error_line(ireebench("merge", shards[0], shards[0], "-o", tmp_path / "x.json"))
    assert f"is in both {shards[0]} and {shards[0]}" in twice
    assert not (tmp_path / "x.json").exists()


def test_merge_writes_valid_json_for_a_native_reports_nan(ireebench, dynamic, tmp_path):
    """Google Benchmark writes a non-finite counter as a bare NaN (Python reads it, jq
    does not): merged, it is null."""
    shard = tmp_path / "shard.json"
    result = ireebench(f"--module={dynamic}", *LEAN, "--input=2x512xf32=0.5",
                       f"--benchmark_out={shard}")
    assert result.returncode == 0, result.stderr
    report = json.loads(shard.read_text())
    report["benchmarks"][0]["ratio"] = float("nan")
    shard.write_text(json.dumps(report))  # json.dumps writes NaN, as Google Benchmark does
    assert "NaN" in shard.read_text()
    merged = tmp_path / "all.json"
    assert ireebench("merge", shard, "-o", merged).returncode == 0

    def refuse(name):
        raise AssertionError(f"bare {name} in the merged report")

    row = json.loads(merged.read_text(), parse_constant=refuse)["benchmarks"][0]
    assert row["ratio"] is None


def _suite(tmp_path, text: str):
    path = tmp_path / "suite.toml"
    path.write_text(text)
    return path


def test_a_suite_of_two_modules(ireebench, compile_mlir, tmp_path):
    first = compile_mlir("dynamic")
    # Another module (other bytes) with the same function names.
    second = compile_mlir((MLIR_DIR / "dynamic.mlir").read_text().replace("mulf", "addf"))
    entries = f"""
[defaults]
device = "local-sync"
function = "forward"
input = ["{{bs}}x512xf32=0.5"]

[[benchmark]]
NAME_A
module = "{first}"
sweep = {{ bs = [1, 2] }}

[[benchmark]]
NAME_B
module = "{second}"
sweep = {{ bs = [2] }}
"""
    clash = _suite(tmp_path, entries.replace("NAME_A", "").replace("NAME_B", ""))
    line = one_error_line(ireebench("run", clash, "--benchmark_min_time=2x"))
    assert "both report BM_forward/bs:2/process_time/real_time; give them different " in line
    named = _suite(tmp_path, entries.replace("NAME_A", 'name = "a"').replace("NAME_B",
                                                                              'name = "b"'))
    out = tmp_path / "suite.json"
    result = ireebench("run", named, "--benchmark_min_time=2x", "--benchmark_repetitions=2",
                       f"--benchmark_out={out}", "-p", "point_probe")
    assert result.returncode == 0, result.stderr
    rows = json.loads(out.read_text())["benchmarks"]
    assert sorted({r["run_name"] for r in rows}) == [
        "a/BM_forward/bs:1/process_time/real_time", "a/BM_forward/bs:2/process_time/real_time",
        "b/BM_forward/bs:2/process_time/real_time"]
    # The command line's flags apply to every entry; a session per module.
    assert {r["repetitions"] for r in rows} == {2}
    assert _probe(result.stderr, "session") == [["local-sync"], ["local-sync"]]
    assert json.loads(out.read_text())["context"]["suite"] == str(named)


@pytest.mark.parametrize("text, message", [
    ('[[benchmark]]\nmodule = "m.vmfb"\nbatchsize = 4\n',
     "[[benchmark]] 1: unknown key 'batchsize' (did you mean 'batch_size'?)"),
    ('[[benchmark]]\nmodule = "m.vmfb"\n[[benchmark]]\nname = "x"\nfunction = ["a", "b"]\n',
     "[[benchmark]] 2 (x): key 'function' takes one value, not a list"),
    ('[default]\ndevice = "local-sync"\n', "unknown table 'default' (did you mean 'defaults'?)"),
    ('[[benchmark]]\nmodule = "m.vmfb"\nsweep = [1, 2]\n',
     "[[benchmark]] 1: key 'sweep': expected a table of axes"),
    ('[[benchmark]\nmodule = 1\n', "invalid TOML: "),
    ('[[benchmark]]\nmodule = 5\n',
     "[[benchmark]] 1: key 'module': expected a path (a string such as \"model.vmfb\"), got 5"),
    ('[[benchmark]]\nmodule = "m.vmfb"\n[[benchmark]]\nname = "x"\nfunction = "f"\n',
     "[[benchmark]] 2 (x): no key 'module': every entry names the module it measures"),
    (('[[benchmark]]\nmodule = "m.vmfb"\ninput = ["{a}x{b}xf32=0"]\n'
     'sweep = { a = "1..200", b = "1..200" }\n'),
     ("[[benchmark]] 1: --sweep a=1..200 --sweep b=1..200: 40000 points (200 x 200), more than "
     "the 10000 a run measures")),
])
def test_a_malformed_suite_is_one_line_naming_file_entry_and_key(ireebench, tmp_path, text,
                                                                message):
    path = _suite(tmp_path, text)
    assert one_error_line(ireebench("run", path)).startswith(
        f"ireebench: error: {path}: {message}")


@pytest.mark.parametrize("make, message", [
    (lambda path: "/dev/zero", "not a regular file"),
    (lambda path: os.mkfifo(path) or path, "not a regular file"),  # would wait forever
    (lambda path: (path.write_bytes(b"#" * (5 << 20)), path)[1], "larger than 4194304 bytes"),
])
def test_a_suite_file_is_read_bounded(ireebench, tmp_path, make, message):
    path = make(tmp_path / "suite.toml")
    line = one_error_line(ireebench("run", path, timeout=300))
    assert line == f"ireebench: error: run: {path}: {message}"


def _in_rounds(repetitions, names_, rounds) -> bool:
    """Does each round hold one repetition of every benchmark (in any order)?"""
    width = len(names_)
    return all(sorted(repetitions[width * round_:width * (round_ + 1)]) ==
               [[name, str(round_)] for name in sorted(names_)] for round_ in range(rounds))


def test_a_sweep_interleaves_its_points_unless_told_not_to(ireebench, dynamic, compile_mlir):
    """Interleaving is the default of a run of several points (unlike Google Benchmark);
    an explicit false, on the command line or in its variable, measures in order."""
    common = [f"--module={dynamic}", *LEAN, "--input={bs}x512xf32=0.5", "--sweep=bs=1,4",
              "--benchmark_repetitions=3", "-p", "point_probe", "--benchmark_format=json"]
    points = ["BM_forward/bs:1/process_time/real_time", "BM_forward/bs:4/process_time/real_time"]
    interleaved = ireebench(*common)
    rows = _json(interleaved)
    assert _in_rounds(_probe(interleaved.stderr, "repetition"), points, 3)
    assert sorted(r["name"] for r in rows if r["run_type"] == "aggregate")[:2] == [
        "BM_forward/bs:1/process_time/real_time_cv", "BM_forward/bs:1/process_time/real_time_mean"]
    for told in ({"args": ["--benchmark_enable_random_interleaving=false"]},
                 {"args": [], "env": {"BENCHMARK_ENABLE_RANDOM_INTERLEAVING": "false"}}):
        in_order = ireebench(*common, *told["args"], env=told.get("env"))
        assert _probe(in_order.stderr, "repetition") == [
            [name, str(index)] for name in points for index in range(3)], told
    # A plain run of two benchmarks keeps Google Benchmark's order; asked, it interleaves.
    plain = [f"--module={compile_mlir('two_functions')}", "--device=local-sync",
             "--benchmark_min_time=2x", "--benchmark_repetitions=2", "-p", "point_probe"]
    functions = ["BM_first/process_time/real_time", "BM_second/process_time/real_time"]
    assert _probe(ireebench(*plain).stderr, "repetition") == [
        [name, str(index)] for name in functions for index in range(2)]
    asked = ireebench(*plain, "--benchmark_enable_random_interleaving")
    assert _in_rounds(_probe(asked.stderr, "repetition"), functions, 2)


def test_adaptive_stopping_decides_per_point(ireebench, dynamic):
    result = ireebench(f"--module={dynamic}", *LEAN, "--input={bs}x512xf32=0.5",
                       "--sweep=bs=1,4", "--benchmark_min_rel_accuracy=0.5",
                       "--benchmark_max_time=1s", "--benchmark_enable_random_interleaving",
                       "--benchmark_format=json")
    rows = _json(result)
    for bs in (1, 4):
        name = f"BM_forward/bs:{bs}/process_time/real_time"
        measured = [r for r in rows if r["name"] == name]
        # Each point's count is its own, on every one of its rows. How many fit in
        # the budget is the machine's (a busy one may stop a point short of the
        # interval's 6 repetitions: then it has no _precision row).
        assert measured and {r["repetitions"] for r in measured} == {len(measured)}
        assert [r["name"] for r in rows].count(f"{name}_precision") == (len(measured) >= 6)


def test_a_failing_point_is_an_error_row_and_the_others_run(ireebench, dynamic):
    result = ireebench(f"--module={dynamic}", *LEAN, "--sweep=shape=2x512,2x7,3x512",
                       "--input={shape}xf32=0.5", "--benchmark_format=json")
    assert result.returncode == 1
    # Interleaved (the default): the failing point's row comes when it fails, first.
    rows = {r["name"]: r for r in result.json()["benchmarks"]}
    assert {name: r.get("error_occurred", False) for name, r in rows.items()} == {
        "BM_forward/shape:2x512/process_time/real_time": False,
        "BM_forward/shape:2x7/process_time/real_time": True,
        "BM_forward/shape:3x512/process_time/real_time": False}
    failed = rows["BM_forward/shape:2x7/process_time/real_time"]
    assert "argument 0 of @forward is tensor<?x512xf32>, got 2x7xf32" in failed["error_message"]
    measured = rows["BM_forward/shape:3x512/process_time/real_time"]
    assert measured["params"] == {"shape": "3x512"} and measured["iterations"] == 2


@pytest.mark.parametrize("flags, message", [
    (["--sweep=bs=1,4", "--input={b}x512xf32=0"],
     "--input={b}x512xf32=0: unknown sweep axis {b} (axes: bs)"),
    (["--sweep=bs="], "--sweep bs=: the axis 'bs' is empty"),
    (["--sweep=bs=1..64:*1", "--input={bs}x512xf32=0"], "--sweep bs=1..64:*1: bad range "),
    (["--sweep=bs=8..1", "--input={bs}x512xf32=0"],
     "--sweep bs=8..1: bad range '8..1': it is empty"),
    (["--sweep=size=1,2", "--input=2x512xf32=0"],
     "--sweep size=1,2: 'size' is neither a flag nor used as {size} in a flag value"),
    (["--sweep=bs=1,1", "--input={bs}x512xf32=0"], "--sweep bs=1,1: the value 1 appears twice"),
    (["--sweep=bs=1,2", "--input={bs}x512xf32=0", "--benchmark_out=r{bs}.json"],
     "--benchmark_out=r2.json (point bs=2): cannot vary per point: it applies to the whole run"),
    # Ranges are integers, and are written with "..".
    (["--sweep=n=0.5..2.5:+0.5", "--input={n}x512xf32=0"],
     "--sweep n=0.5..2.5:+0.5: bad range '0.5..2.5:+0.5': ranges are integers"),
    (["--sweep=bs=1-64", "--input={bs}x512xf32=0"],
     "--sweep bs=1-64: '1-64' is not a range: write 1..64 (or 1..64:*2 for powers of two)"),
    # A value names rows and files: no line break, no terminal escape (shown escaped).
    (["--sweep=v=a\nb", "--input=2x512xf32=0", "--benchmark_context=v={v}"],
     "--sweep v=a\\nb: the value 'a\\nb' has a control character"),
    (["--sweep=v=x\x1b]0;owned\x07", "--input=2x512xf32=0", "--benchmark_context=v={v}"],
     "--sweep v=x\\x1b]0;owned\\x07: the value 'x\\x1b]0;owned\\x07' has a control"),
    # Flags of the whole run are not axes (a suite refuses `plugin` too).
    (["--sweep=plugin=point_probe", "--input=2x512xf32=0"],
     "--sweep plugin=point_probe: --plugin applies to the whole run, so it cannot be an axis"),
    (["--sweep=shard_index=0,1", "--shard_count=2", "--input=2x512xf32=0"],
     "--sweep shard_index=0,1: --shard_index applies to the whole run, so it cannot be an axis"),
    # A value may not lead out of the folder its template names.
    (["--sweep=v=../../x", "--input=2x512xf32=0", "--benchmark_out=runs/{v}.json"],
     ("--benchmark_out=runs/../../x.json (point v=../../x): the value leads out of the folder "
     "'runs' its template --benchmark_out=runs/{v}.json names")),
    # A counter that cannot be computed for a point: before anything is measured.
    (["--sweep=v=1,a", "--input=2x512xf32=0", "--counter=flops={v}"],
     "--counter=flops={v}: {v} is 'a', not a number (point v=a)"),
    # Bounded: the product is refused before a single point is made.
    (["--sweep=a=1..1000", "--sweep=b=1..1000", "--input={a}x{b}xf32=0"],
     ("--sweep a=1..1000 --sweep b=1..1000: 1000000 points (1000 x 1000), more than the 10000 "
     "a run measures")),
    (["--sweep=a=1..10000000000", "--input={a}x512xf32=0"],
     ("--sweep a=1..10000000000: range '1..10000000000' has 10000000000 values, more than the "
     "10000 points a run measures")),
    # Every point's devices are checked before anything is compiled or measured.
    (["--sweep=device=local-sync,local-tsak", "--input=2x512xf32=0"],
     "NOT_FOUND; --device=local-tsak: unknown driver 'local-tsak' (available: "),
])
def test_bad_sweeps_are_one_line_naming_them(ireebench, dynamic, flags, message):
    result = ireebench(f"--module={dynamic}", *LEAN, *flags)
    line = one_error_line(result)
    assert line.startswith(f"ireebench: error: {message}"), line
    assert "BM_" not in result.stdout  # nothing was measured


def test_hints_for_first_hour_mistakes(ireebench, dynamic):
    """A device list in one flag points at --sweep; a misspelt driver at its name; a
    bad device in a sweep is found before the first point is measured."""
    run = [f"--module={dynamic}", "--function=forward", "--benchmark_min_time=2x",
           "--input=2x512xf32=0.5"]
    line = one_error_line(ireebench(*run, "--device=local-sync,local-task"))
    assert line.endswith("--device=local-sync,local-task: unknown driver "
                         "'local-sync,local-task' (available: cuda, hip, local-sync, local-task, "
                         "vulkan); one device per flag: --device=local-sync --device=local-task, "
                         "or to measure on each in turn: --sweep device=local-sync,local-task"), \
        line
    assert one_error_line(ireebench(*run, "--device=local-tsak")).endswith(
        "; did you mean 'local-task'?")
    late = ireebench(*run, "--sweep=device=local-sync,local-tsak", "-p", "point_probe")
    line = one_error_line(late)
    assert line.endswith("(point device=local-tsak)") and "PROBE" not in late.stderr


@pytest.mark.parametrize("form", [
    ["--counter=flops=2*{bs}*512"],
    ["--counter", "flops=2*{bs}*512"],  # as docs/usage.md and --help show it
    ["--flagfile={dir}/two_lines.txt"],
    ["--flagfile={dir}/one_line.txt"],
])
def test_every_option_form_is_read_alike(ireebench, dynamic, tmp_path, form):
    """The sweep finds options as click reads them: --opt=v, --opt v, and flag files
    (one argument a line) give the same points; a flag axis removes --opt v whole."""
    (tmp_path / "two_lines.txt").write_text("--counter\nflops=2*{bs}*512\n")
    (tmp_path / "one_line.txt").write_text("--counter=flops=2*{bs}*512\n")
    form = [arg.replace("{dir}", str(tmp_path)) for arg in form]
    result = ireebench(f"--module={dynamic}", *LEAN, "--input", "{bs}x512xf32=0.5",
                       "--batch_size", "3", "--sweep", "bs=1,4", "--sweep=batch_size=1,2",
                       *form, "--benchmark_format=json")
    rows = _json(result)
    assert "warning" not in result.stderr  # no stray "3" left behind by --batch_size 3
    assert [(r["params"], r["flops"] / r["items_per_second"]) for r in rows] == [
        ({"bs": bs, "batch_size": batch}, pytest.approx(2 * bs * 512))
        for bs in (1, 4) for batch in (1, 2)]


def test_a_template_value_resolves_as_the_kernel_does(ireebench, dynamic, tmp_path):
    """runs/{v}.json with v=link/../x, runs/link -> elsewhere/deep: the kernel climbs
    from the link's target (elsewhere/x.json, outside runs), not from runs/."""
    (tmp_path / "runs").mkdir()
    (tmp_path / "elsewhere" / "deep").mkdir(parents=True)
    (tmp_path / "runs" / "link").symlink_to(tmp_path / "elsewhere" / "deep")
    run = [f"--module={dynamic}", *LEAN, "--input=2x512xf32=0.5"]
    line = one_error_line(ireebench(*run, "--sweep=v=link/../x", "--benchmark_out=runs/{v}.json",
                                    cwd=tmp_path))
    assert "the value leads out of the folder 'runs'" in line
    kept = ireebench(*run, "--sweep=v=link/y", "--benchmark_out=runs/{v}.json", cwd=tmp_path)
    assert kept.returncode == 0, kept.stderr  # through the link, but inside runs/
    assert (tmp_path / "elsewhere" / "deep" / "y.json").is_file()


def test_points_with_other_runtime_flags_run_in_processes_of_their_own(ireebench, dynamic):
    result = ireebench(f"--module={dynamic}", "--device=local-task", "--function=forward",
                       "--benchmark_min_time=2x", "--input=2x512xf32=0.5", "-p", "point_probe",
                       "--sweep=task_topology_max_group_count=1,2", "--benchmark_format=json")
    rows = _json(result)
    assert [r["params"] for r in rows] == [{"task_topology_max_group_count": 1},
                                           {"task_topology_max_group_count": 2}]
    threads = [int(r["label"].split()[0].removeprefix("threads=")) for r in rows]
    if (os.cpu_count() or 1) >= 2:
        # local-task made its workers from each point's own flag: one more worker group.
        assert threads[1] == threads[0] + 1, threads


def test_a_run_of_point_processes_is_stored_and_reported_once(ireebench, dynamic, tmp_path):
    """Points with other runtime flags run in processes of their own; the outputs of the
    whole run (options marked run_output: --benchmark_out, --benchmark_save, a plugin's)
    are the run's alone: one stored run of two rows, one probe line."""
    store, out = tmp_path / "results.sqlite", tmp_path / "out.json"
    result = ireebench(f"--module={dynamic}", "--device=local-task", "--function=forward",
                       "--benchmark_min_time=2x", "--input=2x512xf32=0.5",
                       "--sweep=task_topology_max_group_count=1,2", "--benchmark_save",
                       f"--benchmark_storage={store}", f"--benchmark_out={out}",
                       "-p", "run_output_probe", f"--probe_output={tmp_path / 'probe'}",
                       "--benchmark_format=json")
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("ireebench: saved run ") == 1, result.stderr
    assert "(2 rows)" in result.stderr
    assert len([line for line in result.stderr.splitlines()
                if line.startswith("PROBE output")]) == 1, result.stderr
    assert len(json.loads(out.read_text())["benchmarks"]) == 2
    history = ireebench("history", "--json", f"--benchmark_storage={store}")
    assert history.returncode == 0, history.stderr
    benchmarks = history.json()["benchmarks"]
    assert len(benchmarks) == 2
    assert len({run["run_id"] for b in benchmarks for run in b["runs"]}) == 1


def test_a_sweep_survives_a_bad_point(ireebench, tmp_path, monkeypatch):
    """A module that does not compile, one that is missing and one that is no module are
    their points' error rows (with the compiler's first error line); the others are
    measured, and the exit code says a point failed. Two points whose modules are the
    same bytes are measured once and reported for both."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    source = (MLIR_DIR / "dynamic.mlir").read_text()
    (tmp_path / "good.mlir").write_text(source)
    (tmp_path / "same.mlir").write_text(source)  # another path, the same module
    (tmp_path / "other.mlir").write_text(source.replace("mulf", "addf"))
    (tmp_path / "broken.mlir").write_text(source.replace("arith.mulf", "arith.mulff"))
    (tmp_path / "garbage.vmfb").write_bytes(b"not a module\n")
    names_ = "good.mlir,broken.mlir,same.mlir,missing.vmfb,garbage.vmfb,other.mlir"
    result = ireebench(f"--module={tmp_path}/{{m}}", *LEAN, "--input=2x512xf32=0.5",
                       f"--sweep=m={names_}", "--benchmark_repetitions=2",
                       "--benchmark_format=json")
    assert result.returncode == 1, result.stderr
    rows = [r for r in result.json()["benchmarks"] if r["run_type"] == "iteration"]
    by_point = {}
    for row in rows:
        by_point.setdefault(row["params"]["m"], []).append(row)
    assert sorted(by_point) == sorted(names_.split(","))
    errors = {m: r[0]["error_message"] for m, r in by_point.items() if r[0].get("error_occurred")}
    assert sorted(errors) == ["broken.mlir", "garbage.vmfb", "missing.vmfb"]
    assert errors["broken.mlir"].startswith(f"--module={tmp_path}/broken.mlir: iree-compile "
                                            f"failed: {tmp_path}/broken.mlir:")
    assert "error:" in errors["broken.mlir"] and "mulff" in errors["broken.mlir"]
    assert errors["missing.vmfb"] == f"--module={tmp_path}/missing.vmfb: file not found"
    assert "not a valid IREE module" in errors["garbage.vmfb"]
    assert by_point["broken.mlir"][0]["name"] == "BM_forward/m:broken.mlir/process_time/real_time"
    # The same bytes: one measurement, reported under each point's name.
    assert [r["real_time"] for r in by_point["same.mlir"]] == \
        [r["real_time"] for r in by_point["good.mlir"]]
    assert [r["real_time"] for r in by_point["other.mlir"]] != \
        [r["real_time"] for r in by_point["good.mlir"]]
    assert "ireebench: note: point m=same.mlir measures the same module (sha256 " in result.stderr
    # Every row names its own point's module (a copy too; an error row without a digest).
    assert {m: (r[0]["iree_module"], bool(r[0]["iree_module_sha256"]))
            for m, r in by_point.items() if m.endswith(".mlir")} == {
        m: (str(tmp_path / m), m != "broken.mlir")
        for m in ("good.mlir", "broken.mlir", "same.mlir", "other.mlir")}
    assert by_point["same.mlir"][0]["iree_module_sha256"] == \
        by_point["good.mlir"][0]["iree_module_sha256"]
    # Compiled before the first measurement, each distinct module once, each compile
    # said when it starts (the broken one too): a suite is not silent while it compiles.
    assert result.stderr.count("ireebench: compiled ") == 3
    assert result.stderr.count("ireebench: compiling ") == 4
    assert result.stderr.index("ireebench: compiling ") < result.stderr.index("ireebench: compiled ")
    assert result.stderr.rindex("ireebench: compiled ") < result.stderr.index(" done, ")


def test_the_point_hook_adds_an_axis_every_workload_hook_sees(ireebench, dynamic):
    result = ireebench(f"--module={dynamic}", *LEAN, "-p", "shape_axis", "-p", "point_probe",
                       "--benchmark_format=json")
    rows = _json(result)
    assert [(r["name"], r["params"], r["label"].split()[1]) for r in rows] == [
        ("BM_forward/n:1/process_time/real_time", {"n": 1}, "shape=1x512"),
        ("BM_forward/n:3/process_time/real_time", {"n": 3}, "shape=3x512")]
    assert [line[1:] for line in _probe(result.stderr, "workload")] == [
        ["{'n':", "1}", "{'n':", "1}"], ["{'n':", "3}", "{'n':", "3}"]]


def _on_a_terminal(args) -> str:
    """What ``python -m ireebench ARGS`` writes on stderr when it is a terminal."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "ireebench", *args], stdout=subprocess.PIPE,
                            stderr=follower, env=_env())
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    proc.communicate(timeout=300)
    assert proc.returncode == 0
    return seen.decode(errors="replace")


def test_progress_is_a_line_on_a_terminal_and_lines_in_a_log(ireebench, dynamic):
    sweep = [f"--module={dynamic}", *LEAN, "--input={bs}x512xf32=0.5", "--sweep=bs=1,4"]
    in_order = [*sweep, "--benchmark_enable_random_interleaving=false"]
    text = _on_a_terminal(in_order)
    assert "[1/2] BM_forward/bs:1/process_time/real_time  ETA --:--" in text
    assert "[2/2] BM_forward/bs:4/process_time/real_time  ETA 0:0" in text
    assert text.rstrip("\r\n").endswith("\x1b[K")  # erased at the end
    interleaved = _on_a_terminal([*sweep, "--benchmark_repetitions=2"])
    assert "[round 2/2] BM_forward/bs:" in interleaved
    # Not a terminal (a CI log): one line per finished benchmark, no carriage return.
    logged = ireebench(*in_order)
    assert "\r" not in logged.stderr and "\x1b" not in logged.stderr
    lines = [line for line in logged.stderr.splitlines() if line.startswith("ireebench: [")]
    assert [line.split(" done, ")[0] for line in lines] == [
        "ireebench: [1/2] BM_forward/bs:1/process_time/real_time",
        "ireebench: [2/2] BM_forward/bs:4/process_time/real_time"]
    assert " elapsed, eta " in lines[0]
    assert " eta " not in lines[-1]  # nothing left to measure: no ETA
    # Interleaved, a line per finished round too (its benchmarks finish at the end).
    rounds = ireebench(*sweep, "--benchmark_repetitions=3")
    assert [line.split(" done ")[0] for line in rounds.stderr.splitlines()
            if line.startswith("ireebench: round")] == [
        "ireebench: round 1/3", "ireebench: round 2/3"]
    assert not [line for line in rounds.stderr.splitlines()
                if line.startswith("ireebench: [") and " eta " in line]  # all measured
    # A plain run is as quiet as the native tool.
    plain = ireebench(f"--module={dynamic}", *LEAN, "--input=2x512xf32=0.5")
    assert not [line for line in plain.stderr.splitlines() if line.startswith("ireebench:")]


def test_dispatch_statistics_profile_each_point(ireebench, dynamic, tmp_path):
    bundle = tmp_path / "p.ireeprof"
    result = ireebench(f"--module={dynamic}", *LEAN, "--input={bs}x512xf32=0.5",
                       "--sweep=bs=1,4", "--dispatch_statistics", f"--profile_output={bundle}",
                       "--benchmark_format=json")
    rows = _json(result)
    dispatch = [r for r in rows if "/process_time/" not in r["name"]]
    # The native pass ran each point (its own inputs; the native tool's own name).
    assert [r["name"].rsplit("/", 1)[0] for r in dispatch] == ["BM_forward/bs:1",
                                                                 "BM_forward/bs:4"]
    assert all(r["calls"] == 1 for r in dispatch)
    assert sorted(p.name for p in tmp_path.glob("p.*.ireeprof")) == [
        "p.BM_forward_bs:1.ireeprof", "p.BM_forward_bs:4.ireeprof"]


def test_the_example_suite_runs(ireebench, tmp_path, monkeypatch):
    """examples/suites/models.toml: an MLP at three batch sizes, matmul.mlir under two flags."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    suite = ROOT / "examples" / "suites" / "models.toml"
    result = ireebench("run", suite, "--benchmark_min_time=2x", "--benchmark_format=json",
                       cwd=tmp_path)  # paths are relative to the suite, not to here
    rows = _json(result)
    assert [(r["name"], r["params"]) for r in rows] == [
        ("BM_forward/bs:1/process_time/real_time", {"bs": 1}),
        ("BM_forward/bs:8/process_time/real_time", {"bs": 8}),
        ("BM_forward/bs:32/process_time/real_time", {"bs": 32}),
        ("BM_matmul/opt:O1/process_time/real_time", {"opt": "O1"}),
        ("BM_matmul/opt:O3/process_time/real_time", {"opt": "O3"})]
    # Each module compiled once: the MLP for its three points, matmul per flag.
    assert result.stderr.count("ireebench: compiled ") == 3
