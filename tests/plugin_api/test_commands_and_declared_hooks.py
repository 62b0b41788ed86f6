"""Plugins own their subcommands (``ireebench_register_commands``) and their hooks
(``ireebench_addhooks`` with the ``ireebench.hookspec`` marker), through the real CLI:
``ireebench_tester``, but the subprocess CLI where the command line's own parsing is the
subject (plugin flags before the subcommand, ``--help``, ``-p no:NAME``)."""

from __future__ import annotations

import json

import pytest
from conftest import (
    FIXTURE_PLUGINS,
    fixture_plugin,
    ireebench_lines,
    one_error_line,
    plugin_error_line,
)

HELLO, READER = fixture_plugin("hello_command"), fixture_plugin("report_reader")
GREET = "greet_kit"  # by name: its DeferredCommand imports greet_kit:command
TAG_DECLARER, TAG_IMPLEMENTER = fixture_plugin("tag_declarer"), fixture_plugin("tag_implementer")


# --- subcommands --------------------------------------------------------------


def test_a_plugin_subcommand_runs_with_its_own_options(ireebench_tester):
    result = ireebench_tester.subcommand("hello", "--shout", "world", plugins=[HELLO])
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "HELLO WORLD\n"
    assert ireebench_tester.subcommand("hello", "code", plugins=[HELLO]).exit_code == 7


def test_a_third_party_subcommand_is_built_with_the_commands_kit(ireebench_tester,
                                                                 monkeypatch):
    """``ireebench.commands``: the kit the built-ins build their subcommands with."""
    monkeypatch.syspath_prepend(str(FIXTURE_PLUGINS))
    result = ireebench_tester.subcommand("greet", "--times=2", "world", plugins=[GREET])
    assert (result.exit_code, result.stdout) == (0, "hello world\nhello world\n"), result.stderr
    shown = ireebench_tester.subcommand("greet", "--help", plugins=[GREET])
    assert shown.exit_code == 0, shown.stderr
    assert "--times" in shown.stdout and "greet_kit" in shown.stdout
    refused = ireebench_tester.subcommand("greet", plugins=[GREET])
    assert (refused.exit_code, one_error_line(refused)) == (1, "ireebench: error: greet: no name")
    derived = ireebench_tester.subcommand("greet", "--config", "--benchmark_repetitions=3",
                                          plugins=[GREET])
    assert (derived.exit_code, derived.stdout) == (0, "repetitions 3\n"), derived.stderr


def test_plugin_flags_may_come_before_the_subcommand(ireebench):
    """``ireebench --plugin X SUBCOMMAND``, as docs/plugins.md says (issue 26 item 7)."""
    for flags in (["--plugin=hello_command"], ["--plugin", "hello_command"],
                  ["-p", "hello_command"], ["-phello_command"]):
        result = ireebench(*flags, "hello", "--shout", "world")
        assert (result.returncode, result.stdout) == (0, "HELLO WORLD\n"), (flags, result.stderr)
    assert ireebench("-p", "hello_command", "hello", "code").returncode == 7
    # A built-in subcommand after a plugin that fails to load: its own usage status.
    failed = ireebench("--plugin=no_such_plugin", "compare", "a.json", "b.json")
    assert failed.returncode == 2
    assert one_error_line(failed).startswith("ireebench: error: --plugin=no_such_plugin: no "
                                             "module named 'no_such_plugin' (a plugin is ")


def test_a_subcommand_reads_files_and_stored_runs_through_its_config(ireebench_tester,
                                                                     compile_mlir, tmp_path):
    """``config.load_reports`` in a subcommand: a file, and ``stored:latest`` from the
    store of --benchmark_storage (reads_reports=True gave it the option) or of
    IREEBENCH_STORAGE (the tester's store)."""
    store, report = tmp_path / "other.sqlite", tmp_path / "run.json"
    saved = ireebench_tester.run(f"--module={compile_mlir('simple')}",
                                 "--benchmark_filter=noargs", "--benchmark_save",
                                 f"--benchmark_storage={store}", f"--benchmark_out={report}")
    assert saved.exit_code == 0, saved.stderr
    read = ireebench_tester.subcommand("names", str(report), "stored:latest",
                                       f"--benchmark_storage={store}", "--state",
                                       plugins=[READER])
    assert read.exit_code == 0, read.stderr
    lines = read.stdout.splitlines()
    assert lines[0] == f"{report}: BM_noargs/process_time/real_time"
    assert lines[1].endswith(": BM_noargs/process_time/real_time")
    assert lines[2:] == [f"read 2 report(s); storage option '{store}'", "cleaned up"]
    assert not ireebench_tester.storage.exists()
    store.replace(ireebench_tester.storage)  # now the store of IREEBENCH_STORAGE
    from_env = ireebench_tester.subcommand("names", "stored:latest", plugins=[READER])
    assert from_env.exit_code == 0, from_env.stderr
    assert from_env.stdout.splitlines() == lines[1:2]
    helped = ireebench_tester.subcommand("names", "--help", plugins=[READER]).stdout
    assert "--benchmark_storage" in helped and "--where" in helped
    assert one_error_line(ireebench_tester.subcommand("names", "missing.json",
                                                      plugins=[READER])) == \
        "ireebench: error: names: missing.json: file not found"


def test_a_reading_option_the_subcommand_has_already_names_both(ireebench_tester, tmp_path):
    plugin = tmp_path / "clash.py"
    plugin.write_text(
        "import click\nfrom ireebench import hookimpl\n\n@hookimpl\n"
        "def ireebench_register_commands(cli):\n"
        "    @cli.command(reads_reports=True)\n"
        "    @click.option('--where')\n"
        "    def clash(where):\n        pass\n")
    assert one_error_line(ireebench_tester.subcommand("plugins", plugins=[plugin])) == (
        "ireebench: error: option --where of plugin 'store' (for reading reports) is already "
        "an option of the subcommand 'clash'")


def test_a_plugin_subcommand_fails_like_any_plugin_code(ireebench_tester):
    assert plugin_error_line(ireebench_tester.subcommand("hello", "crash", plugins=[HELLO])) == (
        "ireebench: plugin error: plugin 'hello_command' failed in subcommand 'hello': "
        "ZeroDivisionError: no greeting")
    assert one_error_line(ireebench_tester.subcommand("hello", "refuse", plugins=[HELLO])) == \
        "ireebench: error: hello: refuse: not a name"
    # click's own parse errors are one line too.
    assert one_error_line(ireebench_tester.subcommand("hello", plugins=[HELLO])) == \
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


def test_a_subcommand_defined_twice_names_both_plugins(ireebench_tester):
    assert one_error_line(ireebench_tester.subcommand(
            "plugins", plugins=[fixture_plugin("compare_again")])) == (
        "ireebench: error: subcommand 'compare' is defined by two plugins: 'compare' and "
        "'compare_again'")


@pytest.mark.parametrize("name", ["--help", "--module=x.vmfb", "two words", ""])
def test_a_subcommand_name_that_is_not_a_plain_word_is_refused(ireebench, tmp_path, name):
    # Such a name would take over ``ireebench --help`` or an ordinary run.
    plugin = tmp_path / "flagname.py"
    plugin.write_text("import click\nfrom ireebench import hookimpl\n\n@hookimpl\n"
                      "def ireebench_register_commands(cli):\n"
                      f"    cli.add_command(click.Command({name!r}))\n")
    assert plugin_error_line(ireebench("--help", f"--plugin={plugin}")) == (
        "ireebench: plugin error: plugin 'flagname' failed in ireebench_register_commands: "
        f"ValueError: subcommand name {name!r} is not a plain word (letters, digits, "
        "'-' and '_', starting with a letter or digit)")


def test_without_a_subcommand_ireebench_is_the_benchmark_run(ireebench_tester):
    result = ireebench_tester.run("--benchmark_format=json", plugins=[HELLO])
    assert result.exit_code == 0, result.stderr
    assert result.json()["benchmarks"]


def test_blocking_the_owner_removes_its_subcommand(ireebench):
    result = ireebench("plugins", "-p", "no:introspection")
    assert result.returncode != 0
    assert "plugins" in result.stderr


# --- hooks a plugin declares --------------------------------------------------


def test_a_plugin_declares_a_hook_that_another_implements(ireebench_tester, compile_mlir):
    result = ireebench_tester.run(f"--module={compile_mlir('simple')}",
                                  "--benchmark_repetitions=2",
                                  plugins=[TAG_DECLARER, TAG_IMPLEMENTER])
    assert result.exit_code == 0, result.stderr
    tags = [line for line in result.stderr.splitlines() if line.startswith("TAGS ")]
    assert tags[0] == "TAGS BM_noargs/process_time/real_time function=noargs,iteration"
    assert "TAGS BM_noargs/process_time/real_time_mean function=noargs,aggregate" in tags
    listed = ireebench_tester.subcommand("plugins", "--json", plugins=[TAG_DECLARER]).json()
    declared = {entry["name"]: entry["declares_hooks"] for entry in listed}
    assert declared["tag_declarer"] == ["ireebench_tags_for_row"]
    assert declared["statistics"] == ["ireebench_statistics"]
    assert declared["profiling_pass"] == ["ireebench_profiling_pass", "ireebench_profiling_sinks"]


def test_a_misspelled_implementation_of_a_declared_hook_is_refused(ireebench_tester, tmp_path):
    plugin = tmp_path / "typo.py"
    plugin.write_text("def ireebench_tags_for_rows(run):\n    return ['x']\n")
    line = one_error_line(ireebench_tester.run(plugins=[TAG_DECLARER, plugin]))
    assert line == ("ireebench: error: plugin 'typo': ireebench_tags_for_rows is not an "
                    "ireebench hook (did you mean ireebench_tags_for_row?)")


def test_an_implementation_without_its_declarer_is_refused_unless_optional(ireebench_tester,
                                                                          tmp_path):
    # No unrelated suggestion (ireebench_report_row_names) for a hook of an absent plugin.
    line = one_error_line(ireebench_tester.run(plugins=[TAG_IMPLEMENTER]))
    assert line == ("ireebench: error: plugin 'tag_implementer': ireebench_tags_for_row is not "
                    "an ireebench hook, and no loaded plugin declares it (for a hook of a plugin "
                    "that may be absent, mark the implementation @hookimpl(optionalhook=True))")
    optional = tmp_path / "optional.py"
    optional.write_text("from ireebench import hookimpl\n\n@hookimpl(optionalhook=True)\n"
                        "def ireebench_tags_for_row(run):\n    return ['x']\n")
    result = ireebench_tester.run(plugins=[optional])
    assert result.exit_code == 0, result.stderr
    # Never called: said once, as a warning.
    assert ireebench_lines(result) == [
        ("ireebench: warning: plugin 'optional': ireebench_tags_for_row is declared by no loaded "
        "plugin, so it is never called (is the plugin that declares it installed?)")]


@pytest.mark.parametrize("hook, meant, declarer", [
    ("ireebench_tags_for_rows", "ireebench_tags_for_row", TAG_DECLARER),
    ("ireebench_benchmark_results", "ireebench_benchmark_result", None),
])
def test_a_misspelled_optional_implementation_is_refused_too(ireebench_tester, tmp_path, hook,
                                                             meant, declarer):
    """optionalhook=True (recommended for another plugin's hooks) does not hide a typo."""
    plugin = tmp_path / "typo.py"
    plugin.write_text(f"from ireebench import hookimpl\n\n@hookimpl(optionalhook=True)\n"
                      f"def {hook}(run):\n    return ['x']\n")
    line = one_error_line(ireebench_tester.subcommand(
        "plugins", plugins=[*([declarer] if declarer else []), plugin]))
    assert line == (f"ireebench: error: plugin 'typo': {hook} is not an ireebench hook (did "
                    f"you mean {meant}?)")


def test_an_optional_implementation_of_a_blocked_builtins_hook_is_quiet(ireebench_tester):
    """The store implements ireebench_compare_addoption optionally: -p no:compare leaves
    it alone (not a misspelling of ireebench_addoption, nor a warning)."""
    result = ireebench_tester.subcommand("plugins", "-p", "no:compare")
    assert result.exit_code == 0, result.stderr
    assert ireebench_lines(result) == []


def test_an_implementation_of_a_blocked_builtins_hook_says_so(ireebench_tester):
    line = one_error_line(ireebench_tester.run(
        "-p", "no:statistics", plugins=[fixture_plugin("statistic_trimmed_mean")]))
    assert line == ("ireebench: error: plugin 'statistic_trimmed_mean': ireebench_statistics "
                    "is a hook of the plugin 'statistics', blocked with -p no:statistics (mark "
                    "the implementation @hookimpl(optionalhook=True) to allow that)")


def test_a_hook_declared_twice_names_both(ireebench_tester, tmp_path):
    plugin = tmp_path / "again.py"
    plugin.write_text(
        "from ireebench import hookimpl, hookspec\n\n"
        "class Specs:\n    @staticmethod\n    @hookspec\n"
        "    def ireebench_statistics(config):\n        'Mine.'\n\n"
        "@hookimpl\ndef ireebench_addhooks(pluginmanager):\n"
        "    pluginmanager.add_hookspecs(Specs)\n")
    assert one_error_line(ireebench_tester.subcommand("plugins", plugins=[plugin])) == (
        "ireebench: error: hook ireebench_statistics is declared twice: by the plugin "
        "'statistics' and by the plugin 'again'")
