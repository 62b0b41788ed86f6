"""Guard rails for third-party plugins, each through the real CLI.

Every mistake a plugin author or user can make with plugins is one line
naming the plugins involved (a warning where nothing breaks), before
anything runs. A plugin's mistakes run on ``ireebench_tester``; the ``-p no:NAME``
tests stay on the subprocess CLI (how a fresh process parses the block list).
"""

from __future__ import annotations

import textwrap

import pytest
from conftest import one_error_line
from ireebench._pluginmanager import (
    BUILTIN_PLUGINS,
    ESSENTIAL_PLUGINS,
    PluginSelection,
    build_plugin_manager,
)


def _plugin(directory, name: str, body: str):
    path = directory / f"{name}.py"
    path.write_text(textwrap.dedent(body))
    return path


@pytest.fixture
def simple(compile_mlir):
    return [f"--module={compile_mlir('simple')}", "--device=local-sync", "--benchmark_min_time=1x"]


@pytest.mark.parametrize("decorator", ["@hookimpl", ""])
def test_misspelled_hook_is_an_error(ireebench_tester, tmp_path, decorator):
    """pluggy's check_pending, also for an undecorated ``ireebench_*`` function."""
    plugin = _plugin(tmp_path, "typo", f"""
        from ireebench import hookimpl

        {decorator}
        def ireebench_benchmark_results(run):
            pass
    """)
    line = one_error_line(ireebench_tester.run(plugins=[plugin]))
    assert line == ("ireebench: error: plugin 'typo': ireebench_benchmark_results is not an "
                    "ireebench hook (did you mean ireebench_benchmark_result?)")


def test_option_defined_by_two_plugins(ireebench_tester, tmp_path):
    body = """
        from ireebench import hookimpl

        @hookimpl
        def ireebench_addoption(parser):
            parser.addoption("--shared_flag", "shared_flag", default="")
    """
    first, second = _plugin(tmp_path, "first", body), _plugin(tmp_path, "second", body)
    line = one_error_line(ireebench_tester.run(plugins=[first, second]))
    assert "option --shared_flag of plugin 'second' is already defined by plugin 'first'" in line


def test_plugin_cannot_redefine_a_core_option(ireebench_tester, tmp_path):
    plugin = _plugin(tmp_path, "sneaky", """
        from ireebench import hookimpl

        @hookimpl
        def ireebench_addoption(parser):
            parser.addoption("--benchmark_repetitions", "benchmark_repetitions", default=5)
    """)
    line = one_error_line(ireebench_tester.run(plugins=[plugin]))
    assert ("option --benchmark_repetitions of plugin 'sneaky' is already defined by "
            "ireebench's core options") in line


def test_plugin_cannot_redefine_a_builtin_plugin_option(ireebench_tester, tmp_path):
    plugin = _plugin(tmp_path, "mine", """
        from ireebench import hookimpl

        @hookimpl
        def ireebench_addoption(parser):
            parser.addoption("--dispatch_statistics", "my_stats", is_flag=True)
    """)
    line = one_error_line(ireebench_tester.run(plugins=[plugin]))
    assert ("option --dispatch_statistics of plugin 'mine' is already defined by plugin "
            "'dispatch_statistics'") in line


def test_plugin_file_named_like_a_builtin(ireebench_tester, tmp_path):
    plugin = _plugin(tmp_path, "console", """
        from ireebench import hookimpl

        @hookimpl
        def ireebench_benchmark_result(run):
            pass
    """)
    line = one_error_line(ireebench_tester.run(plugins=[plugin]))
    assert "plugin name 'console' (--plugin from " in line
    assert "is already taken by the builtin plugin 'console'" in line


def test_blocking_an_unknown_name_warns(ireebench, simple):
    result = ireebench(*simple, "-p", "no:consol")
    assert result.returncode == 0, result.stderr
    assert ("ireebench: warning: -p no:consol: no plugin named 'consol' "
            "(did you mean console?)") in result.stderr


def test_blocking_a_plugin_that_is_also_loaded(ireebench, tmp_path, simple):
    plugin = _plugin(tmp_path, "both", "")
    line = one_error_line(ireebench(*simple, "-p", "no:both", f"--plugin={plugin}"))
    assert f"-p no:both blocks the plugin that --plugin={plugin} loads" in line


@pytest.mark.parametrize("name", ["kinds", "discovery", "runtime_backend"])
def test_essential_plugins_cannot_be_blocked(ireebench, simple, name):
    line = one_error_line(ireebench(*simple, "-p", f"no:{name}"))
    assert line == (f"ireebench: error: -p no:{name}: '{name}' is an essential plugin and "
                    "cannot be blocked")


def test_blocked_plugin_flags_are_unknown(ireebench, simple):
    """Blocking output_processing removes its flags: using one is not silently ignored."""
    line = one_error_line(ireebench(*simple, "-p", "no:output_processing",
                                    "--enable_output_processing", "--expected_output=4xf32=0"))
    assert line == ("ireebench: error: --enable_output_processing: unknown flag (it belongs "
                    "to the plugin 'output_processing', blocked with -p "
                    "no:output_processing)")


@pytest.mark.parametrize("name", sorted(set(BUILTIN_PLUGINS) - ESSENTIAL_PLUGINS))
def test_each_optional_builtin_can_be_blocked_alone(name):
    """Built-ins implement hooks other built-ins declare only as optional hooks."""
    pm = build_plugin_manager(PluginSelection(blocked=[name]))
    assert pm.get_plugin(name) is None


def test_every_optional_builtin_blocked_at_once_still_runs(ireebench, simple):
    blocked = sorted(set(BUILTIN_PLUGINS) - ESSENTIAL_PLUGINS - {"json"})
    result = ireebench(*simple, "--reporter=json", *(f"-pno:{name}" for name in blocked))
    assert result.returncode == 0, result.stderr
    assert '"benchmarks"' in result.stdout


def test_optional_builtin_can_be_blocked(ireebench, simple):
    result = ireebench(*simple, "-p", "no:console", "--reporter=json")
    assert result.returncode == 0, result.stderr
    assert '"benchmarks"' in result.stdout
    line = one_error_line(ireebench(*simple, "-p", "no:console"))
    assert "--benchmark_format=console: unknown reporter (known: csv, json)" in line


def test_a_statistic_shadowing_a_builtin_percentile_names_both(ireebench_tester, tmp_path):
    plugin = _plugin(tmp_path, "tails", """
        from ireebench import Statistic, hookimpl

        @hookimpl
        def ireebench_statistics(config):
            return {"p99.9": Statistic("p99.9", max)}
    """)
    line = one_error_line(ireebench_tester.run("--benchmark_repetitions=3",
                                               "--benchmark_statistics=p99.9", plugins=[plugin]))
    assert line == ("ireebench: error: statistic 'p99.9' of plugin 'tails' shadows the built-in "
                    "percentile pNN of plugin 'statistics'; rename it")


def test_a_wrapper_that_loses_the_row_is_named(ireebench_tester, tmp_path):
    plugin = _plugin(tmp_path, "forgetful", """
        from ireebench import hookimpl

        @hookimpl(wrapper=True)
        def ireebench_measure_repetition(config, workload, repetition):
            yield  # forgot: return (yield)
    """)
    result = ireebench_tester.run("--benchmark_format=json", plugins=[plugin])
    assert result.exit_code == 3 and "Traceback" not in result.stderr
    assert result.stderr.splitlines()[-1] == (
        "ireebench: plugin error: plugin 'forgetful' failed in ireebench_measure_repetition: "
        "ValueError: the wrapper of plugin 'forgetful' returned None instead of the row: end it "
        "with `return (yield)`")
