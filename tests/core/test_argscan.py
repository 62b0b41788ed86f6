"""``ireebench._argscan``: options found in a command line as click reads them.

Against the real option table (the core's and the built-in plugins' options,
from the real plugin manager) and click's own parse of the same command line.
"""

from __future__ import annotations

import pytest
from ireebench._argscan import scan_options
from ireebench._cli.command import build_command, option_specs
from ireebench._pluginmanager import PluginSelection, build_plugin_manager
from ireebench.backend import forwarded_argv
from ireebench.config import Config


@pytest.fixture(scope="module")
def command():
    return build_command(build_plugin_manager(PluginSelection(), autoload=False))


@pytest.mark.parametrize("argv", [
    ["--counter=flops=2*{bs}", "--input", "-1", "-pfoo", "--benchmark_save", "--function=f"],
    ["--counter", "flops=2*{bs}", "--input=-1", "-p", "foo", "--benchmark_save=true",
     "--function", "f"],
])
def test_every_form_click_reads_is_found_alike(command, argv):
    specs = option_specs(command)
    found = {(o.spec.name, o.text) for o in scan_options(argv, specs)}
    assert found == {("counter", "flops=2*{bs}"), ("input", "-1"), ("block", "foo"),
                     ("benchmark_save", None if "--benchmark_save" in argv else "true"),
                     ("function", "f")}
    # click reads the same values.
    params = command.make_context("ireebench", list(argv)).params
    assert params["counter"] == ("flops=2*{bs}",) and params["input"] == ("-1",)
    assert params["function"] == "f" and params["benchmark_save"] is True


def test_a_boolean_flag_does_not_take_the_next_flag(command):
    """--strict_flags --benchmark_min_time=3x: click gives the boolean no value (the next
    argument looks like an option), so the native tool is handed the second."""
    argv = ["--module=m.vmfb", "--strict_flags", "--benchmark_min_time=3x", "--backend",
            "runtime", "--task_topology_max_group_count=2"]
    config = Config(None, {}, [], argv, option_specs=option_specs(command))
    assert forwarded_argv(config) == ["--module=m.vmfb", "--benchmark_min_time=3x",
                                      "--task_topology_max_group_count=2"]
