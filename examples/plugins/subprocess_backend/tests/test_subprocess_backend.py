"""The subprocess backend's tests, through ireebench.testing (pip install the example first)."""

import json

import ireebench_subprocess
from ireebench.testing import TINY

PLUGINS = [ireebench_subprocess]


def test_it_measures_in_a_clean_child(ireebench_tester, monkeypatch):
    """The child sees none of the caller's environment but PATH and HOME."""
    monkeypatch.setenv("IREEBENCH_CANARY", "leaked")
    seen = ireebench_tester.tmp_path / "child.env"
    prefix = f"sh -c 'env > {seen}; exec \"$0\" \"$@\"'"
    result = ireebench_tester.run("--backend=subprocess", "--benchmark_repetitions=3",
                                  "--benchmark_statistics=p90", f"--subprocess_prefix={prefix}",
                                  plugins=PLUGINS)
    assert result.exit_code == 0, result.stderr
    names = [row.benchmark_name for row in result.rows]
    assert names.count(TINY) == 3 and names[-1] == f"{TINY}_p90"
    kept = {line.split("=", 1)[0] for line in seen.read_text().splitlines()}
    assert "PATH" in kept and "IREEBENCH_CANARY" not in kept
    assert result.context.extra["ireebench_backend"] == "subprocess"


def test_the_report_flags_stay_here(ireebench_tester):
    """--benchmark_out and --benchmark_format are ireebench's: the child never sees them."""
    out = ireebench_tester.tmp_path / "out.json"
    result = ireebench_tester.run("--backend=subprocess", f"--benchmark_out={out}",
                                  "--benchmark_format=csv", plugins=PLUGINS)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("name,iterations")
    assert [row["name"] for row in json.loads(out.read_text())["benchmarks"]] == [TINY]


def test_native_flags_are_honoured_by_the_child(ireebench_tester):
    result = ireebench_tester.run("--backend=subprocess", "--function=add",
                                  "--input=4xf32=1", "--input=4xf32=2",
                                  "--enable_output_processing", plugins=PLUGINS)
    assert result.exit_code == 0, result.stderr
    assert "4xf32=3 3 3 3" in result.stdout


def test_what_it_cannot_do_is_refused_naming_the_capability(ireebench_tester):
    result = ireebench_tester.run("--backend=subprocess", "--device_replay_output=x.ireereplay",
                                  plugins=PLUGINS)
    assert result.exit_code == 1
    assert result.error_lines == [
        ("ireebench: error: --device_replay_output=x.ireereplay: needs a backend that hands the "
        "workloads it measured to ireebench_measurements_finish (capability "
        "'measured_workloads'); --backend=subprocess does not have it")]


def test_it_lists_the_benchmarks(ireebench_tester):
    result = ireebench_tester.run("--backend=subprocess", "--benchmark_list_tests",
                                  plugins=PLUGINS)
    assert result.exit_code == 0, result.stderr
    assert TINY in result.stdout.splitlines()
