"""Walls third-party plugin authors hit (issue 38, item 5), through the real CLI."""

import json

import pytest
from ireebench import hookimpl
from ireebench.testing import TINY


class _Uploader:
    @hookimpl
    def ireebench_addoption(self, parser):
        parser.addoption("--mycorp_upload", type=bool, default=False,
                         help="upload the report")

    @hookimpl
    def ireebench_configure(self, config):
        config.getoption("mycorp_uplaod")


class _Defaulted:
    def __init__(self):
        self.seen = []

    @hookimpl
    def ireebench_configure(self, config):
        self.seen.append(config.getoption("not_declared_anywhere", "fallback"))


def test_getoption_of_an_undeclared_name_raises_with_a_hint(ireebench_tester):
    result = ireebench_tester.run(plugins=[_Uploader()], autoload=False)
    assert result.exit_code != 0
    assert "Traceback" not in result.stderr
    lines = [line for line in result.error_lines if "mycorp_uplaod" in line]
    assert len(lines) == 1, result.stderr
    assert "did you mean 'mycorp_upload'?" in lines[0]


def test_getoption_with_an_explicit_default_returns_it_for_an_unknown_name(ireebench_tester):
    plugin = _Defaulted()
    result = ireebench_tester.run(plugins=[plugin], autoload=False)
    assert result.exit_code == 0, result.stderr
    assert plugin.seen == ["fallback"]


# An SLO check (issue 38, item 5): fails the run once it is measured, with its own code.
SLO_PLUGIN = '''
from ireebench import hookimpl

means = []

@hookimpl
def ireebench_addoption(parser):
    parser.addoption("--slo_mean_ms", type=float, default=1e9, help="the mean's bound")

@hookimpl
def ireebench_benchmark_result(config, run):
    if run.aggregate_name == "mean":
        means.append(run.real_accumulated_time / run.iterations * 1e3)

@hookimpl
def ireebench_measurements_finish(config, workloads):
    bound = config.getoption("slo_mean_ms")
    if means and means[0] > bound:
        config.fail_run(f"mean {means[0]:.6f} ms is above {bound} ms", exit_code=5)
'''


def _slo_run(ireebench_tester, *args, worker=True):
    plugin = ireebench_tester.tmp_path / "slo.py"
    plugin.write_text(SLO_PLUGIN)
    out = ireebench_tester.tmp_path / "out.json"
    result = ireebench_tester.run("--benchmark_repetitions=2", f"--benchmark_out={out}", *args,
                                  plugins=[plugin], worker=worker)
    return result, out


@pytest.mark.parametrize("worker", [True, False])
def test_a_plugin_fails_the_run_with_its_exit_code_after_the_reports(ireebench_tester, worker):
    result, out = _slo_run(ireebench_tester, "--slo_mean_ms=0", worker=worker)
    assert result.exit_code == 5, result.stderr
    assert "Traceback" not in result.stderr
    failed = [line for line in result.error_lines if "run failed" in line]
    assert len(failed) == 1, result.stderr
    assert failed[0].startswith("ireebench: run failed: plugin 'slo': mean "), failed
    # The run went on: every row reported, the file complete.
    names = [row["name"] for row in json.loads(out.read_text())["benchmarks"]]
    assert names.count(TINY) == 2 and f"{TINY}_mean" in names


def test_a_passing_check_leaves_the_run_successful(ireebench_tester):
    result, out = _slo_run(ireebench_tester, "--slo_mean_ms=1e9")
    assert result.exit_code == 0, result.stderr
    assert "run failed" not in result.stderr
    assert json.loads(out.read_text())["benchmarks"]


class _BadCode:
    @hookimpl
    def ireebench_measurements_finish(self, config, workloads):
        config.fail_run("nope", exit_code=3)


def test_an_exit_code_with_a_meaning_of_its_own_is_the_plugins_error(ireebench_tester):
    result = ireebench_tester.run(plugins=[_BadCode()])
    assert result.exit_code == 3
    line = next(line for line in result.error_lines if "plugin error" in line)
    assert "fail_run: exit code 3 is not 1 or 4 to 125" in line, result.stderr


# A third party's kind that fails (issue 38, item 5): its error row names it.
BOOM_KIND = '''
from ireebench import InvocationKind, hookimpl, prepare_inputs


class BoomKind(InvocationKind):
    name = "boom"

    def build_inputs(self, workload, session, specs):
        return prepare_inputs([], session, workload.function.argument_types)

    def prepare(self, workload, session):
        raise ValueError("no batch today")


@hookimpl
def ireebench_invocation_kinds(config):
    return [BoomKind()]


@hookimpl(tryfirst=True)
def ireebench_classify_function(function):
    return "boom" if function.name == "boom" else None
'''
TWO_FUNCTIONS = """
func.func @boom() -> tensor<4xf32> {
  %c = util.unfoldable_constant dense<1.0> : tensor<4xf32>
  return %c : tensor<4xf32>
}
func.func @fine() -> tensor<4xf32> {
  %c = util.unfoldable_constant dense<2.0> : tensor<4xf32>
  %0 = arith.mulf %c, %c : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


def _boom_run(ireebench_tester):
    plugin = ireebench_tester.tmp_path / "boomkind.py"
    plugin.write_text(BOOM_KIND)
    return ireebench_tester.run(f"--module={ireebench_tester.compile_module(TWO_FUNCTIONS)}",
                                plugins=[plugin], worker=True)


def test_a_kinds_exception_is_an_error_row_naming_its_plugin(ireebench_tester):
    result = _boom_run(ireebench_tester)
    assert result.exit_code == 1, result.stderr  # a failed benchmark's
    boom = result.row("BM_boom/process_time/real_time")
    assert boom.error_occurred
    assert boom.error_message == ("plugin 'boomkind' (kind 'boom') raised ValueError: "
                                  "no batch today")
    fine = result.row("BM_fine/process_time/real_time")
    assert not fine.error_occurred and fine.iterations > 0
    assert "Traceback" not in result.stderr


def test_with_ireebench_debug_the_kinds_traceback_is_on_stderr(ireebench_tester, monkeypatch):
    monkeypatch.setenv("IREEBENCH_DEBUG", "1")
    result = _boom_run(ireebench_tester)
    assert result.exit_code == 1, result.stderr
    assert "Traceback" in result.stderr and 'boomkind.py", line' in result.stderr
    assert "ValueError: no batch today" in result.stderr


@pytest.mark.parametrize("isolation", ["worker", "none"])
def test_with_ireebench_debug_a_hooks_traceback_is_on_stderr(ireebench, ireebench_module,
                                                             tmp_path, isolation):
    plugin = tmp_path / "badhook.py"
    plugin.write_text("def ireebench_benchmark_result(config, run):\n"
                      "    raise KeyError('no row today')\n")
    result = ireebench(f"--module={ireebench_module}", "--device=local-sync",
                       "--benchmark_min_time=2x", f"--plugin={plugin}",
                       f"--isolation={isolation}", env={"IREEBENCH_DEBUG": "1"})
    assert result.returncode == 3, result.stderr
    assert result.stderr.count('badhook.py", line 2') == 1, result.stderr
    assert ("ireebench: plugin error: plugin 'badhook' failed in ireebench_benchmark_result: "
            "KeyError") in result.stderr


# ireebench.testing (issue 38, item 5): the installed plugins stay out unless asked.
PLANTED = '''
import os
from pathlib import Path


def ireebench_configure(config):
    Path(os.environ["PLANTED_MARKER"]).write_text("loaded")
'''


def test_the_tester_loads_installed_plugins_only_when_asked(ireebench_tester, monkeypatch):
    site = ireebench_tester.tmp_path / "site"
    dist_info = site / "planted_plugin-1.0.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: planted-plugin\n"
                                        "Version: 1.0\n")
    (dist_info / "entry_points.txt").write_text("[ireebench]\nplanted = planted_plugin\n")
    (site / "planted_plugin.py").write_text(PLANTED)
    marker = ireebench_tester.tmp_path / "marker"
    monkeypatch.setenv("PLANTED_MARKER", str(marker))
    monkeypatch.syspath_prepend(str(site))
    assert ireebench_tester.run("--benchmark_list_tests").exit_code == 0
    assert not marker.exists()
    result = ireebench_tester.run("--benchmark_list_tests", autoload=True)
    assert result.exit_code == 0, result.stderr
    assert marker.read_text() == "loaded"


def test_compile_module_passes_its_flags_to_the_compiler(ireebench_tester):
    plain = ireebench_tester.compile_module(TWO_FUNCTIONS)
    stripped = ireebench_tester.compile_module(
        TWO_FUNCTIONS, flags=["--iree-vm-bytecode-module-strip-source-map"])
    assert stripped != plain and stripped.read_bytes() != plain.read_bytes()
    result = ireebench_tester.run(f"--module={stripped}", "--benchmark_filter=fine")
    assert result.exit_code == 0, result.stderr
    with pytest.raises(RuntimeError, match="--no-such-iree-flag"):
        ireebench_tester.compile_module(TWO_FUNCTIONS, flags=["--no-such-iree-flag"])


@pytest.mark.parametrize("given", ["object", "path"])
def test_one_plugin_not_in_a_list_is_one_plugin(ireebench_tester, given):
    """``plugins=X`` (no list) is X, not a plugin per character of its name (issue 40)."""
    from conftest import fixture_plugin

    plugin = _Defaulted() if given == "object" else str(fixture_plugin("hello_command"))
    result = ireebench_tester.run(plugins=plugin)
    assert result.exit_code == 0, result.stderr
    if given == "object":
        assert plugin.seen == ["fallback"]
