"""The hook phases, as a plugin sees them through the real CLI and plugin manager
(the public ``ireebench_tester``).

* ``ireebench_measure_repetition`` wrappers bracket exactly the measured
  iterations of each repetition (calibration and warm-up outside);
* every hook is called in the order hookspecs.py lists them;
* a third-party backend is opened and closed by the core like the built-in
  ones (reports, ``ireebench_sessionfinish`` with the real status, cleanups).
"""

from __future__ import annotations

import ast
import json

import pytest
from conftest import FIXTURE_PLUGINS, ROOT, fixture_plugin, one_error_line, plugin_error_line


def _brackets(stderr: str) -> list[dict]:
    return [json.loads(line.split(" ", 1)[1]) for line in stderr.splitlines()
            if line.startswith("BRACKET ")]


def _measured(report: dict) -> list[dict]:
    return [b for b in report["benchmarks"] if b["run_type"] == "iteration"]


def test_wrapper_brackets_exactly_each_repetition(ireebench_tester, compile_mlir):
    """Time-based runs: calibration and warm-up happen, but outside every bracket."""
    result = ireebench_tester.run(f"--module={compile_mlir('two_dispatches')}",
                                  "--benchmark_min_time=0.05s", "--benchmark_min_warmup_time=0.05",
                                  "--benchmark_repetitions=3", "--benchmark_format=json",
                                  plugins=[fixture_plugin("repetition_bracket")], worker=True)
    assert result.exit_code == 0, result.stderr
    # Once per repetition; a first repetition that fell short of the minimum
    # time is measured again (retry 1, 2 ...): its last bracket is the one reported.
    brackets = list({b["index"]: b for b in _brackets(result.stderr)}.values())
    rows = _measured(result.json())
    assert [b["index"] for b in brackets] == [0, 1, 2]
    assert all(b["retry"] == 0 for b in _brackets(result.stderr) if b["index"])
    assert [b["iterations"] for b in brackets] == [row["iterations"] for row in rows]
    # The reported first repetition reached the minimum time (it was measured again
    # until it did); the later ones reuse its count, so a quieter moment than the
    # calibration's (the load dropped) makes them shorter, by any factor.
    assert brackets[0]["measured_seconds"] >= 0.05, brackets
    assert all(b["measured_seconds"] > 0 for b in brackets), brackets


def test_a_bracket_holds_exactly_the_measured_calls(ireebench_tester, compile_mlir):
    """Calibration, warm-up and the first repetition's short runs happen, but
    none of their calls is inside a bracket: the module counts its calls
    (``call_counter`` reads the count right before and right after the
    built-in measurement), so this holds whatever the machine's load."""
    result = ireebench_tester.run(f"--module={compile_mlir('stateful')}",
                                  "--benchmark_min_time=0.02s", "--benchmark_min_warmup_time=0.02",
                                  "--benchmark_repetitions=3", "--benchmark_format=json",
                                  plugins=[fixture_plugin("call_counter")], worker=True)
    assert result.exit_code == 0, result.stderr
    counted = [json.loads(line.split(" ", 1)[1]) for line in result.stderr.splitlines()
               if line.startswith("CALLS ")]
    assert len(counted) >= 3
    assert all(c["calls"] == c["iterations"] >= 1 for c in counted), counted
    reported = list({c["index"]: c for c in counted}.values())
    assert [c["iterations"] for c in reported] == [
        row["iterations"] for row in _measured(result.json())]


def test_measurement_is_the_same_with_and_without_a_wrapper(ireebench_tester, compile_mlir):
    args = [f"--module={compile_mlir('two_functions')}", "--benchmark_min_time=25x",
            "--benchmark_repetitions=3", "--benchmark_format=json"]
    plain = ireebench_tester.run(*args, worker=True)
    wrapped = ireebench_tester.run(*args, plugins=[fixture_plugin("repetition_bracket")],
                                   worker=True)
    assert plain.exit_code == wrapped.exit_code == 0, wrapped.stderr

    def shape(report):
        return [(b["name"], b["run_type"], b["iterations"], b["repetitions"],
                 b.get("repetition_index"), sorted(k for k in b if k.endswith("_second")))
                for b in report["benchmarks"]]

    assert shape(plain.json()) == shape(wrapped.json())
    assert len(_brackets(wrapped.stderr)) == 2 * 3  # two functions, three repetitions
    assert [line for line in wrapped.stderr.splitlines() if line.startswith("START")] == [
        "START BM_first", "START BM_second"]


def _spec_order() -> list[str]:
    tree = ast.parse((ROOT / "core" / "hookspecs.py").read_text())
    return [node.name for node in tree.body
            if isinstance(node, ast.FunctionDef) and node.name.startswith("ireebench_")]


def _called(stderr: str) -> list[str]:
    return [line.split()[1] for line in stderr.splitlines() if line.startswith("HOOK ")]


# The hooks built-in plugins declare, each called by its plugin right after
# the core hook named here (the plugin's implementation of that hook calls it).
PLUGIN_HOOKS_AFTER = {
    "ireebench_statistics": "ireebench_configure",
    "ireebench_profiling_sinks": "ireebench_discovery_finish",
    "ireebench_profiling_pass": "ireebench_workload_finish",
    "ireebench_replay_capture": "ireebench_measurements_finish",
}


# Hooks of commands that read saved reports: a benchmark run never calls them
# (the options of the readers: only for a subcommand registered reads_reports).
REPORT_READING_HOOKS = ("ireebench_load_reports", "ireebench_load_reports_addoption")
# Hooks of a run of several points (a sweep, a suite): a plain run never calls them
# (tests/builtin_plugins/test_provenance.py calls ireebench_point_context).
POINT_HOOKS = ("ireebench_point_context",)


def _expected_run_order() -> list[str]:
    order = []
    for name in _spec_order():
        if name in REPORT_READING_HOOKS or name in POINT_HOOKS:
            continue
        order.append(name)
        order += [hook for hook, after in PLUGIN_HOOKS_AFTER.items() if after == name]
    return order


def test_hooks_are_called_in_the_documented_order(ireebench_tester, compile_mlir, tmp_path):
    # --benchmark_statistics: the statistics plugin asks every plugin for its
    # statistics (ireebench_statistics) only when statistics are selected.
    recorder = fixture_plugin("hook_recorder")
    result = ireebench_tester.run(f"--module={compile_mlir('two_dispatches')}",
                                  "--benchmark_statistics=min",
                                  f"--device_replay_output={tmp_path / 'capture.ireereplay'}",
                                  f"--benchmark_out={tmp_path / 'run.json'}", plugins=[recorder])
    assert result.exit_code == 0, result.stderr
    called = _called(result.stderr)
    # Every hook of a benchmark run, the core's in hookspecs.py's order;
    # ireebench_compare_reporters (declared by the compare plugin) never.
    assert list(dict.fromkeys(called)) == _expected_run_order()
    assert called[-1] == "ireebench_sessionfinish"
    # The same plugin in a compare run of that run's file: the plugins are
    # registered and asked for subcommands, then the compare plugin's hook,
    # then each side's reference is resolved (it is a file here).
    compared = ireebench_tester.subcommand("compare", tmp_path / "run.json", tmp_path / "run.json",
                                           "--accept_cannot_judge", plugins=[recorder])
    assert compared.exit_code == 0, compared.stderr
    assert _called(compared.stderr) == ["ireebench_addhooks", "ireebench_register_commands",
                                        "ireebench_compare_reporters", "ireebench_load_reports",
                                        "ireebench_load_reports"]


@pytest.mark.parametrize("outcome, status", [("ok", 0), ("failed", 1), ("usage", 1),
                                             ("crash", 3)])
def test_third_party_backend_is_closed_by_the_core(ireebench_tester, tmp_path, outcome,
                                                    status):
    out = tmp_path / "out.json"
    result = ireebench_tester.run("--backend=fake", f"--fake_outcome={outcome}",
                                  f"--benchmark_out={out}",
                                  plugins=[fixture_plugin("fake_backend")])
    assert result.exit_code == status, result.stderr
    assert f"FINISH session=False status={status}" in result.stderr
    assert "FAKE cleanup" in result.stderr
    report = json.loads(out.read_text())  # closed: valid JSON with the one row
    assert [b["name"] for b in report["benchmarks"]] == ["BM_fake/process_time/real_time"]
    lines = [line for line in result.stderr.splitlines() if line.startswith("ireebench:")]
    if outcome == "usage":
        assert lines == ["ireebench: error: --fake_outcome=usage: refused after one row"]
    elif outcome == "crash":
        assert lines == [("ireebench: plugin error: plugin 'fake_backend' failed in "
                         "backend 'fake': ZeroDivisionError: fake bug")]
    else:
        assert lines == []


def test_third_party_backend_lists_through_the_run_stdout(ireebench_tester):
    result = ireebench_tester.run("--backend=fake", "--benchmark_list_tests",
                                  plugins=[fixture_plugin("fake_backend")])
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "BM_fake/process_time/real_time\n"
    assert "FINISH session=False status=0" in result.stderr


def test_fixture_plugins_are_where_the_docs_say():
    for name in ("repetition_bracket", "hook_recorder", "fake_backend"):
        assert (FIXTURE_PLUGINS / f"{name}.py").is_file()


def test_plugin_error_and_usage_error_are_told_apart(ireebench_tester, tmp_path):
    plugin = tmp_path / "strict.py"
    plugin.write_text("from ireebench import UsageError, hookimpl\n\n"
                      "@hookimpl\n"
                      "def ireebench_configure(config):\n"
                      "    if config.getoption('batch_size') == 2:\n"
                      "        raise UsageError('--batch_size=2: not with strict')\n"
                      "    if config.getoption('batch_size') == 3:\n"
                      "        raise KeyError('bug')\n")
    usage = ireebench_tester.run("--batch_size=2", "--module=x.vmfb", plugins=[plugin])
    assert one_error_line(usage) == "ireebench: error: --batch_size=2: not with strict"
    assert usage.exit_code == 1
    bug = ireebench_tester.run("--batch_size=3", "--module=x.vmfb", plugins=[plugin])
    assert plugin_error_line(bug) == ("ireebench: plugin error: plugin 'strict' failed in "
                                      "ireebench_configure: KeyError: 'bug'")
