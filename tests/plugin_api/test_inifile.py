"""The configuration file: ``[tool.ireebench]`` of pyproject.toml or ireebench.toml
(ireebench._inifile), read through the real command line."""

from __future__ import annotations

import pytest

PLUGIN = '''
def ireebench_addoption(parser):
    parser.addini("greeting", "what the plugin says", default="hello")
    parser.addini("count", "how many", type="int", default=1)
    parser.addini("extra", "files", type="paths")


def ireebench_configure(config):
    config.stdout.write(f"greeting={config.getini('greeting')} count={config.getini('count')} "
                        f"extra={[p.name for p in config.getini('extra')]} "
                        f"repetitions={config.getoption('benchmark_repetitions')}\\n")
'''


@pytest.fixture
def project(tmp_path):
    (tmp_path / "plugin.py").write_text(PLUGIN)
    (tmp_path / "sub").mkdir()
    return tmp_path


def run(ireebench, project, module, *args):
    return ireebench(f"--plugin={project / 'plugin.py'}", f"--module={module}",
                     "--benchmark_list_tests", *args, cwd=project / "sub")


def test_a_plugin_reads_its_setting_from_pyproject(ireebench, project, ireebench_module):
    (project / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.ireebench]\ngreeting = "bonjour"\ncount = 3\n'
        'extra = ["a.txt"]\nbenchmark_repetitions = 4\n')
    result = run(ireebench, project, ireebench_module)
    assert result.returncode == 0, result.stderr
    assert "greeting=bonjour count=3 extra=['a.txt'] repetitions=4" in result.stdout
    assert result.stderr == ""
    # The command line wins over the file's flag default.
    result = run(ireebench, project, ireebench_module, "--benchmark_repetitions=2")
    assert "repetitions=2" in result.stdout, result.stderr
    result = ireebench("--version", cwd=project / "sub")
    assert f"configuration file: {project / 'pyproject.toml'}" in result.stdout


def test_defaults_without_a_file(ireebench, project, ireebench_module):
    result = run(ireebench, project, ireebench_module)
    assert "greeting=hello count=1 extra=[] repetitions=1" in result.stdout, result.stderr


def test_ireebench_toml_wins_over_pyproject(ireebench, project, ireebench_module):
    (project / "pyproject.toml").write_text('[tool.ireebench]\ngreeting = "bonjour"\n')
    (project / "ireebench.toml").write_text('greeting = "hallo"\ngreting = 2\n')
    result = run(ireebench, project, ireebench_module)
    assert "greeting=hallo count=1" in result.stdout, result.stderr
    assert result.stderr.splitlines() == [
        (f"ireebench: warning: {project / 'ireebench.toml'}: greting: unknown setting, "
         "ignored; did you mean 'greeting'?")]


@pytest.mark.parametrize("text, error", [
    ("count = 'many'", "[tool.ireebench] count = 'many': expected int"),
    ("count = [", "cannot read the configuration file"),
    ("benchmark_repetitions = 'x'", "(its default is set in "),
])
def test_a_bad_value_is_one_line(ireebench, project, ireebench_module, text, error):
    (project / "pyproject.toml").write_text(f"[tool.ireebench]\n{text}\n")
    result = run(ireebench, project, ireebench_module)
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and error in lines[0], result.stderr
    assert str(project / "pyproject.toml") in lines[0]
