"""Plugins own their subcommands (``ireebench_register_commands``) and their hooks
(``ireebench_addhooks`` with the ``ireebench.hookspec`` marker), through the real CLI."""

from __future__ import annotations

import json

from conftest import one_error_line, plugin_error_line

LOCAL = ["--device=local-sync", "--benchmark_min_time=2x"]


# --- subcommands --------------------------------------------------------------


def test_a_plugin_subcommand_runs_with_its_own_options(ireebench):
    result = ireebench("hello", "--shout", "world", "--plugin=hello_command")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "HELLO WORLD\n"
    assert ireebench("hello", "code", "--plugin=hello_command").returncode == 7


def test_a_plugin_subcommand_fails_like_any_plugin_code(ireebench):
    assert plugin_error_line(ireebench("hello", "crash", "--plugin=hello_command")) == (
        "ireebench: plugin error: plugin 'hello_command' failed in subcommand 'hello': "
        "ZeroDivisionError: no greeting")
    assert one_error_line(ireebench("hello", "refuse", "--plugin=hello_command")) == \
        "ireebench: error: hello: refuse: not a name"
    # click's own parse errors are one line too.
    assert one_error_line(ireebench("hello", "--plugin=hello_command")) == \
        "ireebench: error: Missing argument 'NAME'."


def test_help_and_plugins_list_each_subcommand_with_its_plugin(ireebench):
    helped = ireebench("--help", "--plugin=hello_command")
    assert helped.returncode == 0, helped.stderr
    section = helped.stdout.split("Subcommands:", 1)[1].split("Runtime flags:", 1)[0]
    listed = {line.split()[0]: line for line in section.splitlines() if line.strip()
              and not line.startswith("    ")}
    assert set(listed) >= {"compare", "hello", "plugins", "replay"}
    assert "[plugin: hello_command]" in section
    plugins = json.loads(ireebench("plugins", "--json", "--plugin=hello_command").stdout)
    commands = {entry["name"]: entry["commands"] for entry in plugins}
    assert commands["hello_command"] == ["hello"]
    assert commands["compare"] == ["compare"] and commands["replay_backend"] == ["replay"]
    assert commands["introspection"] == ["plugins"]


def test_a_subcommand_defined_twice_names_both_plugins(ireebench):
    assert one_error_line(ireebench("plugins", "--plugin=compare_again")) == (
        "ireebench: error: subcommand 'compare' is defined by two plugins: 'compare' and "
        "'compare_again'")


def test_without_a_subcommand_ireebench_is_the_benchmark_run(ireebench, compile_mlir):
    result = ireebench(f"--module={compile_mlir('simple')}", *LOCAL, "--plugin=hello_command",
                       "--benchmark_format=json")
    assert result.returncode == 0, result.stderr
    assert result.json()["benchmarks"]


def test_blocking_the_owner_removes_its_subcommand(ireebench):
    result = ireebench("plugins", "-p", "no:introspection")
    assert result.returncode != 0
    assert "plugins" in result.stderr


# --- hooks a plugin declares --------------------------------------------------


def test_a_plugin_declares_a_hook_that_another_implements(ireebench, compile_mlir):
    result = ireebench(f"--module={compile_mlir('simple')}", *LOCAL, "--benchmark_repetitions=2",
                       "--plugin=tag_declarer", "--plugin=tag_implementer")
    assert result.returncode == 0, result.stderr
    tags = [line for line in result.stderr.splitlines() if line.startswith("TAGS ")]
    assert tags[0] == "TAGS BM_noargs/process_time/real_time function=noargs,iteration"
    assert "TAGS BM_noargs/process_time/real_time_mean function=noargs,aggregate" in tags
    listed = json.loads(ireebench("plugins", "--json", "--plugin=tag_declarer").stdout)
    declared = {entry["name"]: entry["declares_hooks"] for entry in listed}
    assert declared["tag_declarer"] == ["ireebench_tags_for_row"]
    assert declared["statistics"] == ["ireebench_statistics"]
    assert declared["profiling_pass"] == ["ireebench_profiling_pass", "ireebench_profiling_sinks"]


def test_a_misspelled_implementation_of_a_declared_hook_is_refused(ireebench, compile_mlir,
                                                                  tmp_path):
    plugin = tmp_path / "typo.py"
    plugin.write_text("def ireebench_tags_for_rows(run):\n    return ['x']\n")
    line = one_error_line(ireebench(f"--module={compile_mlir('simple')}", *LOCAL,
                                    "--plugin=tag_declarer", f"--plugin={plugin}"))
    assert line == ("ireebench: error: plugin 'typo': ireebench_tags_for_rows is not an "
                    "ireebench hook (did you mean ireebench_tags_for_row?)")


def test_an_implementation_without_its_declarer_is_refused_unless_optional(ireebench,
                                                                          compile_mlir, tmp_path):
    line = one_error_line(ireebench(f"--module={compile_mlir('simple')}", *LOCAL,
                                    "--plugin=tag_implementer"))
    assert line.startswith("ireebench: error: plugin 'tag_implementer': ireebench_tags_for_row "
                           "is not an ireebench hook")
    optional = tmp_path / "optional.py"
    optional.write_text("from ireebench import hookimpl\n\n@hookimpl(optionalhook=True)\n"
                        "def ireebench_tags_for_row(run):\n    return ['x']\n")
    assert ireebench(f"--module={compile_mlir('simple')}", *LOCAL,
                     f"--plugin={optional}").returncode == 0


def test_an_implementation_of_a_blocked_builtins_hook_says_so(ireebench, compile_mlir):
    line = one_error_line(ireebench(f"--module={compile_mlir('simple')}", *LOCAL,
                                    "--plugin=statistic_trimmed_mean", "-p", "no:statistics"))
    assert line == ("ireebench: error: plugin 'statistic_trimmed_mean': ireebench_statistics "
                    "is a hook of the plugin 'statistics', blocked with -p no:statistics (mark "
                    "the implementation @hookimpl(optionalhook=True) to allow that)")


def test_a_hook_declared_twice_names_both(ireebench, tmp_path):
    plugin = tmp_path / "again.py"
    plugin.write_text(
        "from ireebench import hookimpl, hookspec\n\n"
        "class Specs:\n    @staticmethod\n    @hookspec\n"
        "    def ireebench_statistics(config):\n        'Mine.'\n\n"
        "@hookimpl\ndef ireebench_addhooks(pluginmanager):\n"
        "    pluginmanager.add_hookspecs(Specs)\n")
    assert one_error_line(ireebench("plugins", f"--plugin={plugin}")) == (
        "ireebench: error: hook ireebench_statistics is declared twice: by the plugin "
        "'statistics' and by the plugin 'again'")
