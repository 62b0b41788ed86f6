"""``ireebench compare A.vmfb B.vmfb [run flags]``: both modules measured in one job, paired.

Real modules compiled in the session (a loop whose trip count sets the
work), measured through the real CLI. What each test asserts holds whatever
the machine's load:

* a module against itself: the run measures identical modules (the same
  sha256) once and reports the rows for both sides, so every round's ratio
  is exactly 1: no noise can make it anything but ``no significant change``;
* twice the work: on ``local-sync`` the comparison is on CPU time, which a
  busy machine does not double, and each of the rounds pairs the two
  modules measured back to back, so every round's ratio is near 2; the
  signed-rank test of 12 rounds all one way has p = 2/4096;
* too few rounds (5: the smallest two-sided p-value is 2/32) can never be
  significant, so the verdict is ``cannot judge`` whatever was measured;
* bad input is refused before anything is measured.

Nothing sleeps and no time is asserted.
"""

from __future__ import annotations

import json

import pytest
from conftest import MLIR_DIR, one_error_line
from ireebench.plugins.compare.paired import REFUSED

LOOP = (MLIR_DIR / "loop.mlir").read_text()  # TRIPS: its trip count
TRIPS = 60  # about 0.2 ms a call
RUN = ["--device=local-sync", "--function=work", "--input=64xf32=1",
       "--benchmark_min_time=0.01s"]
NAME = "BM_work/process_time/real_time"


@pytest.fixture(scope="module")
def modules(compile_mlir):
    return {"base": compile_mlir(LOOP.replace("TRIPS", str(TRIPS))),
            "double": compile_mlir(LOOP.replace("TRIPS", str(2 * TRIPS)))}


def _benchmark(result) -> dict:
    data = json.loads(result.stdout)
    assert [b["name"] for b in data["benchmarks"]] == [NAME]
    return data["benchmarks"][0]


def test_a_module_against_itself_is_no_significant_change(modules, ireebench):
    result = ireebench("compare", modules["base"], modules["base"], *RUN,
                       "--benchmark_repetitions=10")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no significant change" in result.stdout
    assert "Note: paired: 10 rounds, interleaved in random order in one process" in \
        result.stdout
    assert "are the same module (sha256" in result.stdout
    assert result.stdout.splitlines()[-1] == "OK: no significant regression beyond the thresholds"


def test_twice_the_work_is_a_regression(modules, ireebench):
    # The run flags in both spellings: --flag=value and --flag value.
    result = ireebench("compare", modules["base"], modules["double"], "--device", "local-sync",
                       "--function=work", "--input=64xf32=1", "--benchmark_min_time=0.01s",
                       "--benchmark_repetitions=12", "--threshold=10%")
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == (f"Comparing {modules['base']} (old) with {modules['double']} (new), "
                        "measured together: 12 rounds")
    assert lines[1].startswith("cpu_time, paired by round; two-sided Wilcoxon signed-rank test")
    row = next(line for line in lines if line.startswith(NAME))
    assert "slower: REGRESSION (> 10%)" in row and "12 vs 12" in row
    assert lines[-1].startswith(f"FAILED: 1 significant regression(s) beyond the threshold: "
                                f"{NAME} (+")


def test_the_json_reporter_and_the_other_way_round(modules, ireebench):
    result = ireebench("compare", modules["double"], modules["base"], *RUN,
                       "--benchmark_repetitions=12", "--reporter=json")
    assert result.returncode == 0, result.stdout + result.stderr
    data = json.loads(result.stdout)
    assert data["paired_rounds"] == 12 and data["metric"] == "cpu_time"
    benchmark = _benchmark(result)
    assert benchmark["verdict"] == "faster" and benchmark["change"] < -0.3
    assert benchmark["old_repetitions"] == benchmark["new_repetitions"] == 12
    assert benchmark["change_low"] <= benchmark["change"] <= benchmark["change_high"]
    assert benchmark["pvalue"] < 0.001
    assert "paired: 12 rounds, interleaved in random order in one process" in data["notes"]


def test_other_axes_are_swept_on_both_sides_each_on_its_metric(modules, ireebench):
    """Two builds' suites: a sweep over the devices runs on both modules, and each
    benchmark is compared on the metric that measured its work (the CPU time on
    local-sync, the real time on local-task)."""
    result = ireebench("compare", modules["base"], modules["double"], "--function=work",
                       "--input=64xf32=1", "--benchmark_min_time=0.01s",
                       "--sweep", "device=local-sync,local-task", "--benchmark_repetitions=12",
                       "--threshold=10%", "--reporter=json")
    assert result.returncode in (1, 4), result.stdout + result.stderr
    data = json.loads(result.stdout)
    metrics = {b["name"]: b["metric"] for b in data["benchmarks"]}
    assert metrics == {"BM_work/device:local-sync/process_time/real_time": "cpu_time",
                       "BM_work/device:local-task/process_time/real_time": "real_time"}, metrics
    assert data["metric"] == "auto" and data["paired_rounds"] == 12
    [sync] = [b for b in data["benchmarks"] if "local-sync" in b["name"]]
    assert sync["verdict"] == "slower" and sync["regression"]


def test_metric_overrides_the_device_s_choice(modules, ireebench):
    result = ireebench("compare", modules["base"], modules["base"], *RUN,
                       "--benchmark_repetitions=3", "--metric=real_time", "--reporter=json")
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout)["metric"] == "real_time"


def test_too_few_rounds_cannot_be_judged(modules, ireebench):
    result = ireebench("compare", modules["base"], modules["double"], *RUN,
                       "--benchmark_repetitions=5")
    assert result.returncode == 4, result.stdout + result.stderr
    # The row and its verdict's lines, wrapped under its column (joined back on).
    table = result.stdout.split(NAME, 1)[1].split("\n\n", 1)[0]
    row = " ".join(table.split())
    assert "cannot judge (no change could have been significant with 5 rounds); more " \
           "rounds would decide it: --benchmark_repetitions=10 (now 5)" in row


# --- bad input ------------------------------------------------------------------------


def _usage(result) -> str:
    line = one_error_line(result)
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert result.stdout == ""
    return line.removeprefix("ireebench: error: ")


def test_a_missing_module(modules, ireebench, tmp_path):
    missing = tmp_path / "head.vmfb"
    assert _usage(ireebench("compare", modules["base"], missing, *RUN)) == \
        f"compare: {missing}: no such module"


def test_a_module_and_a_report(modules, ireebench, tmp_path):
    report = tmp_path / "new.json"
    report.write_text('{"benchmarks": []}')
    assert _usage(ireebench("compare", modules["base"], report)) == (
        f"compare: {modules['base']} is an IREE module and {report} is not: compare two "
        "modules or two reports: ireebench compare A.vmfb B.vmfb [run flags] (or two "
        "reports: OLD.json NEW.json)")


def test_three_modules(modules, ireebench):
    assert _usage(ireebench("compare", modules["base"], modules["double"], modules["base"],
                            *RUN)).startswith("compare: expected two modules, got 3: ")


@pytest.mark.parametrize("flag", ["--module=x.vmfb", "--benchmark_format=console",
                                  "--benchmark_min_rel_accuracy=0.01",
                                  "--sweep=module=a.vmfb,b.vmfb"])
def test_refused_run_flags(modules, ireebench, flag):
    name = flag.split("=")[0].removeprefix("--")
    name = "sweep module" if name == "sweep" else name
    assert _usage(ireebench("compare", modules["base"], modules["double"], *RUN, flag)) == \
        f"compare: {flag}: not with two modules: {REFUSED[name]}"


def test_a_bad_run_flag_is_the_run_s_one_line(modules, ireebench):
    message = _usage(ireebench("compare", modules["base"], modules["double"], *RUN,
                               "--function=nope"))
    assert "--function=nope" in message and "no exported function named 'nope'" in message


def test_an_unknown_run_flag_is_the_run_s_as_for_any_run(modules, ireebench):
    # A flag nobody knows is warned about and handed on, as the native tool does.
    result = ireebench("compare", modules["base"], modules["base"], *RUN,
                       "--benchmark_repetitions=3", "--no_such_flag=1")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ireebench: warning: --no_such_flag=1: unknown flag" in result.stderr
