"""The plugin manager: built-ins, entry points, --plugin, -p no:NAME, autoload switch.

What a loaded plugin does runs on ``ireebench_tester``; how a fresh process finds and
imports plugins (entry points and the autoload switch, ``--plugin`` from the current
folder, import failures, ``--version``, ``--help``, import times) on the subprocess CLI.
"""

import io
import json
import os
import shutil
import textwrap
import types

import pytest
from conftest import ROOT, one_error_line, plugin_error_line
from ireebench import run as run_in_process  # the fixture `ireebench` is the CLI
from ireebench._pluginmanager import BUILTIN_PLUGINS, PluginSelection, build_plugin_manager
from ireebench.errors import UsageError
from ireebench.hookcall import collect_named

ECHO_PLUGIN = """
from ireebench import hookimpl

@hookimpl
def ireebench_addoption(parser):
    parser.addoption("--echo_tag", "echo_tag", default="", help="Printed at session start.")

@hookimpl
def ireebench_sessionstart(config, session):
    config.stderr.write("ECHO:" + config.getoption("echo_tag") + "\\n")
"""


def _entry_point_dist(tmp_path, name, module_source):
    """A minimal installed distribution exposing an `ireebench` entry point."""
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(module_source))
    info = tmp_path / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[ireebench]\n{name} = {name}\n")
    return tmp_path


def test_builtins_registered_by_name():
    pm = build_plugin_manager()
    for name in BUILTIN_PLUGINS:
        assert pm.get_plugin(name) is not None, name


def test_block_a_builtin():
    pm = build_plugin_manager(PluginSelection(blocked=["console"]))
    assert pm.get_plugin("console") is None
    assert "console" not in collect_named(pm, "ireebench_reporters", "reporter", config=None)


def test_plugin_file_adds_option(ireebench_tester, tmp_path):
    plugin = tmp_path / "echo.py"
    plugin.write_text(ECHO_PLUGIN)
    result = ireebench_tester.run("--echo_tag=hello", plugins=[plugin])
    assert result.exit_code == 0, result.stderr
    assert "ECHO:hello" in result.stderr
    blocked = ireebench_tester.run("-p", "no:echo", plugins=[plugin])
    assert "ECHO:" not in blocked.stderr


def test_entry_point_plugins(compile_mlir, ireebench, tmp_path, monkeypatch):
    site = _entry_point_dist(tmp_path, "echo_ep", ECHO_PLUGIN)
    monkeypatch.setenv("PYTHONPATH", f"{site}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    monkeypatch.setenv("IREEBENCH_DISABLE_PLUGIN_AUTOLOAD", "")
    args = [f"--module={compile_mlir('simple')}", "--device=local-sync", "--benchmark_min_time=1x"]
    assert "ECHO:" in ireebench(*args).stderr
    assert "ECHO:" not in ireebench(*args, "-p", "no:echo_ep").stderr
    monkeypatch.setenv("IREEBENCH_DISABLE_PLUGIN_AUTOLOAD", "1")
    assert "ECHO:" not in ireebench(*args).stderr
    # Still loadable explicitly by module name.
    assert "ECHO:" in ireebench(*args, "--plugin=echo_ep").stderr


def test_plugin_import_failure_names_it(ireebench, tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("raise RuntimeError('boom at import')\n")
    line = one_error_line(ireebench(f"--plugin={broken}", "--module=x.vmfb"))
    assert f"--plugin={broken}" in line and "boom at import" in line
    line = one_error_line(ireebench("--plugin=no_such_plugin_module", "--module=x.vmfb"))
    assert "no_such_plugin_module" in line


def test_plugin_by_name_from_the_current_folder(ireebench, compile_mlir, tmp_path):
    """`--plugin mycorp_sink` next to mycorp_sink.py loads it (the shipped example);
    a name found nowhere says which forms work."""
    shutil.copy(ROOT / "examples" / "plugins" / "mycorp_sink" / "mycorp_sink.py", tmp_path)
    module = f"--module={compile_mlir('two_dispatches')}"
    result = ireebench(module, "--device=local-sync", "--benchmark_min_time=2x", "--plugin",
                       "mycorp_sink", "--mycorp_collector=rows.jsonl", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in (tmp_path / "rows.jsonl").read_text().splitlines()]
    assert rows and all(row["calls"] > 0 for row in rows)
    line = one_error_line(ireebench(module, "--plugin", "mycorp_snk", cwd=tmp_path))
    assert line == ("ireebench: error: --plugin=mycorp_snk: no module named 'mycorp_snk' (a "
                    "plugin is ./mycorp_snk.py in the current folder, a path to a .py file, or "
                    "a module on PYTHONPATH; an installed plugin's entry point loads without "
                    "--plugin)")


def test_duplicate_kind_names_both_plugins(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "dupkind.py").write_text(textwrap.dedent("""
        from ireebench import hookimpl
        from ireebench.plugins.kinds import SyncKind

        @hookimpl
        def ireebench_invocation_kinds():
            return [SyncKind()]
    """))
    pm = build_plugin_manager(PluginSelection(specs=["dupkind"]))
    with pytest.raises(UsageError) as info:
        collect_named(pm, "ireebench_invocation_kinds", "invocation kind", config=None)
    assert "'sync'" in str(info.value) and "'kinds'" in str(info.value)
    assert "'dupkind'" in str(info.value)


def test_raising_hook_is_named(ireebench_tester, tmp_path):
    plugin = tmp_path / "angry.py"
    plugin.write_text(textwrap.dedent("""
        from ireebench import hookimpl

        @hookimpl
        def ireebench_configure(config):
            raise ValueError("I refuse")
    """))
    line = plugin_error_line(ireebench_tester.run(plugins=[plugin]))
    assert "plugin 'angry' failed in ireebench_configure: ValueError: I refuse" in line


def test_plugins_command_lists_what_is_loaded(ireebench_tester, tmp_path):
    plugin = tmp_path / "echo.py"
    plugin.write_text(ECHO_PLUGIN)
    result = ireebench_tester.subcommand("plugins", "--json", "-p", "no:csv", plugins=[plugin])
    assert result.exit_code == 0, result.stderr
    listed = {entry["name"]: entry for entry in result.json()}
    assert "csv" not in listed
    assert listed["kinds"]["essential"] and listed["kinds"]["kinds"] == ["sync", "async",
                                                                          "dispatch"]
    assert listed["console"]["origin"] == "builtin"
    assert listed["console"]["reporters"] == ["console"]
    assert listed["dispatch_statistics"]["options"] == ["--dispatch_statistics",
                                                        "--profile_output"]
    echo = listed["echo"]
    assert (echo["origin"], echo["path"]) == ("--plugin", str(plugin))
    assert echo["hooks"] == ["ireebench_addoption", "ireebench_sessionstart"]
    assert echo["options"] == ["--echo_tag"]
    console = ireebench_tester.subcommand("plugins", plugins=[plugin])
    assert "echo (--plugin)\n" in console.stdout and "  options: --echo_tag" in console.stdout


def test_version_names_third_party_plugins(ireebench, tmp_path):
    plugin = tmp_path / "echo.py"
    plugin.write_text(ECHO_PLUGIN)
    result = ireebench("--version", f"--plugin={plugin}")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("ireebench ") and lines[1].startswith("iree-base-runtime ")
    assert lines[3].startswith("Python ")
    assert f"  echo (--plugin: {plugin})" in lines
    assert ireebench("-V").stdout.splitlines()[:4] == lines[:4]


def test_help_lists_plugin_reporters_and_names_plugin_options(ireebench):
    from conftest import ROOT

    markdown = ROOT / "examples" / "plugins" / "markdown_reporter" / "ireebench_markdown.py"
    slow = ROOT / "examples" / "plugins" / "slow_alert" / "ireebench_slow_alert.py"
    result = ireebench("--help", f"--plugin={markdown}", f"--plugin={slow}")
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())  # click wraps the help text
    assert "Display reporter, one of: console, csv, json, markdown" in text
    assert "[plugin: ireebench_slow_alert]" in text
    assert "[plugin: dispatch_statistics]" in text
    assert "-p NAME loads the plugin module NAME" in text


SLOW_IMPORT_PLUGIN = '''
import time

time.sleep(0.05)  # what a heavy import at the top level costs


def ireebench_sessionstart(config, session):
    pass
'''


def test_plugins_json_shows_each_plugins_import_time(ireebench, tmp_path):
    """``import_seconds``: at least what the plugin's top level spent (a lower bound
    only, which no load can break); every built-in's measured; an object given
    through the Python API was imported by nobody (null)."""
    plugin = tmp_path / "slow_import.py"
    plugin.write_text(SLOW_IMPORT_PLUGIN)
    result = ireebench("plugins", "--json", f"--plugin={plugin}")
    assert result.returncode == 0, result.stderr
    listed = {entry["name"]: entry for entry in json.loads(result.stdout)}
    assert listed["slow_import"]["import_seconds"] >= 0.05
    assert all(isinstance(entry["import_seconds"], float) and entry["import_seconds"] >= 0
               for entry in listed.values())
    shown = ireebench("plugins", f"--plugin={plugin}").stdout
    assert f"  path: {plugin} (imported in " in shown
    stdout = io.StringIO()
    given = types.SimpleNamespace(ireebench_sessionstart=lambda config, session: None)
    assert run_in_process(["plugins", "--json"], stdout=stdout, stderr=io.StringIO(),
                   plugins=[given]).exit_code == 0
    objects = [entry for entry in json.loads(stdout.getvalue())
               if entry["origin"] == "python api"]
    assert [entry["import_seconds"] for entry in objects] == [None]
