"""Plugin code called outside pluggy's hook calls still fails cleanly.

On ``ireebench_tester``, but for ``--help`` and a plugin's import failing, which are
the command line's (a fresh process, its one line and no traceback): subprocess CLI."""

import json
import os
import textwrap

import pytest
from conftest import ireebench_lines, one_error_line, plugin_error_line


def _plugin(tmp_path, name, body):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(body))
    return path


def test_raising_reporter_is_named(compile_mlir, ireebench_tester, tmp_path):
    plugin = _plugin(tmp_path, "badrep", """
        from ireebench import hookimpl
        from ireebench.reporting import Reporter

        class Bad(Reporter):
            def report_runs(self, runs):
                raise RuntimeError("cannot render")

        @hookimpl
        def ireebench_reporters():
            return {"bad": Bad}
    """)
    out = tmp_path / "out.json"
    result = ireebench_tester.run(f"--module={compile_mlir('simple')}", "--benchmark_min_time=1x",
                                  f"--plugin={plugin}", "--reporter=bad",
                                  f"--benchmark_out={out}", worker=True)
    line = plugin_error_line(result)
    assert "plugin 'badrep' failed in reporter Bad.report_runs" in line
    assert "cannot render" in line
    # The file reporter still holds what was measured, as valid JSON.
    import json

    assert json.loads(out.read_text())["benchmarks"]


def test_raising_file_reporter_factory_leaves_no_file(compile_mlir, ireebench_tester, tmp_path):
    plugin = _plugin(tmp_path, "badfactory", """
        from ireebench import hookimpl

        def factory(stream, config, err_stream=None):
            raise ValueError("no factory today")

        @hookimpl
        def ireebench_reporters():
            return {"nope": factory}
    """)
    result = ireebench_tester.run(f"--module={compile_mlir('simple')}",
                                  f"--plugin={plugin}", f"--benchmark_out={tmp_path / 'out.txt'}",
                                  "--benchmark_out_format=nope", worker=True)
    line = plugin_error_line(result)
    assert "plugin 'badfactory'" in line and "no factory today" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["badfactory.py"]


def test_wrapper_on_a_named_hook_is_refused(compile_mlir, ireebench_tester, tmp_path):
    """ireebench_reporters is called one plugin at a time: a wrapper could not wrap it."""
    plugin = _plugin(tmp_path, "watcher", """
        import sys
        from ireebench import hookimpl

        @hookimpl(wrapper=True)
        def ireebench_reporters():
            result = yield
            print("REPORTER HOOK SEEN", file=sys.stderr)
            return result
    """)
    result = ireebench_tester.run(f"--module={compile_mlir('simple')}",
                                  "--benchmark_min_time=1x", f"--plugin={plugin}")
    line = one_error_line(result)
    assert "plugin 'watcher': ireebench_reporters cannot be a wrapper" in line


def test_sessionfinish_hears_the_exit_status(compile_mlir, ireebench_tester, tmp_path):
    plugin = _plugin(tmp_path, "finisher", """
        import sys
        from ireebench import hookimpl

        @hookimpl
        def ireebench_sessionfinish(session, exitstatus):
            print(f"FINISH session={session is not None} status={exitstatus}", file=sys.stderr)
    """)
    ok = ireebench_tester.run(f"--module={compile_mlir('simple')}", "--benchmark_min_time=1x",
                              plugins=[plugin])
    assert "FINISH session=True status=0" in ok.stderr
    bad = ireebench_tester.run(f"--module={compile_mlir('simple')}", "--function=nope",
                               plugins=[plugin])
    assert "FINISH session=True status=1" in bad.stderr
    unopened = ireebench_tester.run(f"--module={tmp_path / 'missing.vmfb'}", plugins=[plugin])
    assert "FINISH session=False status=1" in unopened.stderr


def test_dry_run_skips_warmup(compile_mlir, ireebench_tester):
    """The stateful module counts its calls: the one output shows the one call
    of the dry run (a warm-up of 30 s would have called it many times)."""
    result = ireebench_tester.run(f"--module={compile_mlir('stateful')}",
                                  "--benchmark_dry_run", "--benchmark_min_warmup_time=30",
                                  "--enable_output_processing", worker=True)
    assert result.exit_code == 0, result.stderr
    assert "result[0]: i32=1" in result.stdout


def test_a_measurement_plugin_ignoring_the_count_cannot_loop(compile_mlir, ireebench_tester,
                                                             tmp_path):
    """A first repetition short of the minimum time is retried, but not forever."""
    plugin = _plugin(tmp_path, "fixed", """
        from ireebench import Run, hookimpl

        @hookimpl
        def ireebench_measure_repetition(workload, repetition):
            return Run(name=workload.name, run_name=workload.run_name, iterations=10,
                       real_accumulated_time=0.001, cpu_accumulated_time=0.001)
    """)
    result = ireebench_tester.run(f"--module={compile_mlir('simple')}",
                                  "--benchmark_min_time=0.5s", "--benchmark_filter=noargs",
                                  f"--plugin={plugin}", "--benchmark_format=json", worker=True)
    assert result.exit_code == 0, result.stderr
    assert [row["iterations"] for row in result.json()["benchmarks"]] == [10]


def test_a_failed_configure_still_releases_the_run(compile_mlir, ireebench_tester, tmp_path):
    plugin = _plugin(tmp_path, "opener", """
        from ireebench import hookimpl

        @hookimpl(tryfirst=True)
        def ireebench_configure(config):
            directory = config.scratch_dir()
            config.add_cleanup(lambda: print("CLEANUP", directory, flush=True))
    """)
    result = ireebench_tester.run(f"--module={compile_mlir('simple')}",
                                  "--benchmark_statistics=min", "--confidence=2",
                                  plugins=[plugin])
    assert "--confidence=2" in result.stderr and result.exit_code == 1
    # print() in a plugin goes to stderr while the report is on stdout.
    [line] = [line for line in result.stderr.splitlines() if line.startswith("CLEANUP")]
    scratch = line.split(" ", 1)[1]
    assert scratch and not os.path.exists(scratch)


def test_a_cleanup_that_raises_names_its_plugin(compile_mlir, ireebench_tester, tmp_path):
    plugin = _plugin(tmp_path, "closer", """
        from ireebench import hookimpl

        def close_database():
            raise RuntimeError("db close failed")

        @hookimpl
        def ireebench_configure(config):
            config.add_cleanup(close_database)
    """)
    result = ireebench_tester.run(f"--module={compile_mlir('simple')}",
                                  "--benchmark_min_time=1x", f"--plugin={plugin}", worker=True)
    assert result.exit_code == 3, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("ireebench:")]
    assert errors == [("ireebench: plugin error: plugin 'closer' failed in cleanup "
                       "close_database: RuntimeError: db close failed")]


def test_help_survives_a_reporter_plugin_that_needs_a_run(ireebench, tmp_path):
    plugin = _plugin(tmp_path, "runonly", """
        from ireebench import Reporter, hookimpl

        @hookimpl
        def ireebench_reporters(config):
            return {"x" + config.getoption("benchmark_format"): Reporter}
    """)
    result = ireebench("--help", f"--plugin={plugin}")
    assert result.returncode == 0, result.stderr
    assert "--reporter" in result.stdout


ODD_AT_IMPORT = """
class Odd(BaseException):
    '''Not an Exception: a plugin's own BaseException.'''

raise Odd("odd at import")
"""


def _installed(tmp_path, name, source, distribution="odd-dist"):
    """An installed distribution (dist-info on PYTHONPATH) with an `ireebench` entry point."""
    site = tmp_path / "site"
    site.mkdir()
    (site / f"{name}_module.py").write_text(textwrap.dedent(source))
    info = site / f"{distribution.replace('-', '_')}-0.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\n"
                                   "Version: 0.3\n")
    (info / "entry_points.txt").write_text(f"[ireebench]\n{name} = {name}_module\n")
    return site


@pytest.mark.parametrize("source", [ODD_AT_IMPORT, "raise GeneratorExit('closed')\n",
                                    "import sys\nsys.exit(4)\n"])
def test_a_plugin_file_raising_any_base_exception_at_import_is_one_line(ireebench, tmp_path,
                                                                         source):
    plugin = _plugin(tmp_path, "odd", source)
    line = one_error_line(ireebench(f"--plugin={plugin}", "--module=x.vmfb"))
    assert line.startswith(f"ireebench: error: --plugin={plugin}: failed to import: ")
    assert any(name in line for name in ("Odd: odd at import", "GeneratorExit: closed",
                                         "SystemExit: 4")), line


@pytest.mark.parametrize("command", [["--help"], ["plugins"], ["--module=x.vmfb"],
                                     ["compare", "a.json", "b.json"]])
def test_a_broken_installed_plugin_names_its_distribution_and_the_way_out(
        ireebench, tmp_path, monkeypatch, command):
    site = _installed(tmp_path, "odd", ODD_AT_IMPORT)
    monkeypatch.setenv("PYTHONPATH", f"{site}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    monkeypatch.setenv("IREEBENCH_DISABLE_PLUGIN_AUTOLOAD", "")
    line = one_error_line(ireebench(*command))
    assert line == ("ireebench: error: installed plugin 'odd' (entry point odd = odd_module, "
                    "installed by odd-dist 0.3) failed to import: Odd: odd at import; skip it "
                    "with -p no:odd, or every installed plugin with "
                    "IREEBENCH_DISABLE_PLUGIN_AUTOLOAD=1")
    # Both ways out work.
    assert ireebench(*command[:1], "-p", "no:odd", *command[1:]).returncode in (0, 1, 2)
    if command[0] in ("--help", "plugins"):
        assert ireebench(*command, "-p", "no:odd").returncode == 0
        monkeypatch.setenv("IREEBENCH_DISABLE_PLUGIN_AUTOLOAD", "1")
        assert ireebench(*command).returncode == 0


def test_generator_exit_raised_in_a_hook_is_a_plugin_error(compile_mlir, ireebench_tester,
                                                           tmp_path):
    plugin = _plugin(tmp_path, "closer", """
        from ireebench import hookimpl

        @hookimpl
        def ireebench_benchmark_result(config, run):
            raise GeneratorExit("closed early")
    """)
    out = tmp_path / "out.json"
    result = ireebench_tester.run(f"--module={compile_mlir('simple')}",
                                  "--benchmark_min_time=1x", f"--plugin={plugin}",
                                  f"--benchmark_out={out}", worker=True)
    [line] = ireebench_lines(result)
    assert result.exit_code == 3 and line == (
        "ireebench: plugin error: plugin 'closer' failed in "
        "ireebench_benchmark_result: GeneratorExit: closed early")
    import json

    # Valid, closed by the core; the row the hook failed on was measured: it is kept.
    assert [row["name"] for row in json.loads(out.read_text())["benchmarks"]] == [
        "BM_noargs/process_time/real_time"]


# --- blame: a plugin's bad return value is its own failure ---------------------

STRING_STATISTIC = """
from ireebench import Statistic, hookimpl

@hookimpl
def ireebench_statistics(config):
    return {"word": Statistic("word", lambda values: "abc", unit="time"),
            "boom": Statistic("boom", lambda values: 1 / 0, unit="time")}
"""


@pytest.mark.parametrize("backend", ["runtime", "native"])
@pytest.mark.parametrize("statistic, error", [
    ("word", "TypeError: returned str 'abc', not a number or None"),
    ("boom", "ZeroDivisionError: division by zero"),
])
def test_a_failing_statistic_is_its_plugins_and_keeps_the_rows(compile_mlir, ireebench_tester,
                                                                tmp_path, backend, statistic,
                                                                error):
    plugin = _plugin(tmp_path, "wordy", STRING_STATISTIC)
    out = tmp_path / "out.json"
    result = ireebench_tester.run(f"--module={compile_mlir('simple')}",
                                  "--benchmark_min_time=2x", "--benchmark_repetitions=2",
                                  f"--backend={backend}", f"--plugin={plugin}",
                                  f"--benchmark_statistics=min,{statistic}",
                                  f"--benchmark_out={out}", worker=True)
    assert result.exit_code == 3, result.stderr
    assert ireebench_lines(result) == [
        f"ireebench: plugin error: plugin 'wordy' failed in statistic '{statistic}': {error}"]
    names = [row["name"] for row in json.loads(out.read_text())["benchmarks"]]
    first = "BM_noargs/process_time/real_time"
    assert names[:7] == [first, first] + [f"{first}_{suffix}" for suffix in
                                           ("mean", "median", "stddev", "cv", "min")]
    if backend == "native":  # no per-benchmark hook there: every benchmark is reported
        assert len(names) == 14


@pytest.mark.parametrize("hook, returned, shown", [
    ("ireebench_reporters", "'console'", "str 'console'"),
    ("ireebench_invocation_kinds", "5", "int 5"),
    ("ireebench_backends", "[object()]", "a list holding object <object object at"),
])
def test_a_named_object_hook_returning_garbage_is_its_plugins(compile_mlir, ireebench_tester,
                                                              tmp_path, hook, returned, shown):
    plugin = _plugin(tmp_path, "garbage", f"""
        from ireebench import hookimpl

        @hookimpl
        def {hook}():
            return {returned}
    """)
    line = plugin_error_line(ireebench_tester.run(f"--module={compile_mlir('simple')}",
                                                  "--benchmark_min_time=1x",
                                                  f"--plugin={plugin}", worker=True))
    assert line.startswith(f"ireebench: plugin error: plugin 'garbage' failed in {hook}: "
                           f"TypeError: returned {shown}"), line
    assert "runtime_backend" not in line and "internal error" not in line
    # still lists, and says why
    listing = ireebench_tester.subcommand("plugins", f"--plugin={plugin}")
    assert listing.exit_code == 0, listing.stderr
    assert "(unavailable outside a run: plugin 'garbage' failed in" in listing.stdout


@pytest.mark.parametrize("flag", ["--reporter=half", "--benchmark_out_format=half"])
def test_an_incomplete_reporter_is_its_plugins(compile_mlir, ireebench_tester, tmp_path, flag):
    plugin = _plugin(tmp_path, "halfdone", """
        from ireebench import hookimpl

        class Half:
            def __init__(self, stream, config, err_stream):
                self.stream = stream

            def report_context(self, context):
                return True

        @hookimpl
        def ireebench_reporters():
            return {"half": Half}
    """)
    out = tmp_path / "out.json"
    line = plugin_error_line(ireebench_tester.run(f"--module={compile_mlir('simple')}",
                                                  "--benchmark_min_time=1x",
                                                  f"--plugin={plugin}", flag,
                                                  f"--benchmark_out={out}", worker=True))
    assert line == ("ireebench: plugin error: plugin 'halfdone' failed in reporter factory "
                    "'half': TypeError: made a Half without report_runs, finalize; subclass "
                    "ireebench.Reporter")
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["halfdone.py"]
