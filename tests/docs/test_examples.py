"""The example plugins in examples/plugins, installed as a user installs them.

Each example is an installable package (its own pyproject.toml and an
``ireebench`` entry point, loadable with ``--plugin FILE.py`` too) with
tests of its own, written with ``ireebench.testing`` (the
``ireebench_tester`` fixture). Every example is installed with pip into one
fresh virtual environment (the suite's packages visible to it through a
``.pth`` file: no download, no build isolation), and there its own tests
run, each on a real compiled module; then an installed example is shown
listed by ``ireebench plugins --json``, used by a run and a subcommand, and
turned off by ``-p no:NAME`` and ``IREEBENCH_DISABLE_PLUGIN_AUTOLOAD``.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from conftest import ROOT

EXAMPLES = ROOT / "examples" / "plugins"
LOCAL = ["--device=local-sync", "--benchmark_min_time=2x"]



def _examples() -> list:
    return sorted(path for path in EXAMPLES.iterdir() if path.is_dir())


def test_every_example_is_a_package_with_an_entry_point_and_tests():
    for directory in _examples():
        text = (directory / "pyproject.toml").read_text()
        assert "[project.entry-points.ireebench]" in text, directory
        module = text.split("py-modules = [\"", 1)[1].split("\"", 1)[0]
        assert (directory / f"{module}.py").is_file(), directory
        tests = list((directory / "tests").glob("test_*.py"))
        assert tests, f"{directory.name} has no tests"
        assert all("ireebench_tester" in path.read_text() for path in tests), directory


@pytest.fixture(scope="module")
def examples_venv(tmp_path_factory):
    """The python of a fresh virtual environment with every example pip-installed
    (once: its tests run on one pytest-xdist worker, ``xdist_group``)."""
    root = tmp_path_factory.mktemp("examples-venv")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   capture_output=True, timeout=120)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", ("import sysconfig; "
                              "print(sysconfig.get_paths()['purelib'])")], check=True,
                             capture_output=True, text=True, timeout=60).stdout.strip()
    # The suite's own packages (ireebench editable, pip, setuptools, pytest, IREE)
    # as site directories of the new environment: their .pth files run too.
    suite_sites = [*site.getsitepackages(), sysconfig.get_paths()["purelib"]]
    (Path(purelib) / "ireebench-suite.pth").write_text(
        "import site; " + "; ".join(f"site.addsitedir({path!r})"
                                   for path in dict.fromkeys(suite_sites)) + "\n")
    # Built from copies: pip's setuptools build writes build/ and *.egg-info next to
    # the sources, which two builds at once (two sessions) would share.
    sources = root / "sources"
    copies = [shutil.copytree(path, sources / path.name,
                              ignore=shutil.ignore_patterns("build", "*.egg-info"))
              for path in _examples()]
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps",
                    "--no-build-isolation", "--no-index", *map(str, copies)],
                   check=True, capture_output=True, timeout=600, cwd=root)
    return python


@pytest.mark.xdist_group("examples")
def test_each_installed_example_passes_its_own_tests(examples_venv, tmp_path):
    """What a plugin author runs: the example's tests, through ireebench.testing."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    tests = [str(directory / "tests") for directory in _examples()]
    result = subprocess.run([str(examples_venv), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             "-c", str(tmp_path / "pytest.ini"), "--rootdir", str(tmp_path),
                             "-rs", *tests], capture_output=True, text=True, timeout=900,
                            check=False, cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    summary = result.stdout.strip().splitlines()[-1]
    assert " passed" in summary and "skipped" not in summary and "failed" not in summary, \
        result.stdout[-3000:]
    # The examples were imported from the environment, not from the source tree.
    located = subprocess.run([str(examples_venv), "-c", ("import ireebench_markdown; "
                              "print(ireebench_markdown.__file__)")], capture_output=True,
                             text=True, check=True, cwd=tmp_path).stdout
    assert str(EXAMPLES) not in located and "site-packages" in located


@pytest.mark.xdist_group("examples")
def test_an_installed_example_is_listed_used_and_can_be_turned_off(examples_venv,
                                                                  compile_mlir, tmp_path):
    env = dict(os.environ)
    env.pop("IREEBENCH_DISABLE_PLUGIN_AUTOLOAD", None)

    def run(*args, **extra_env):
        return subprocess.run([str(examples_venv), "-m", "ireebench", *map(str, args)],
                              capture_output=True, text=True, timeout=300, check=False,
                              env={**env, **extra_env}, cwd=tmp_path)

    listed = json.loads(run("plugins", "--json").stdout)
    [entry] = [plugin for plugin in listed if plugin["name"] == "markdown"]
    assert entry["origin"] == "entry point"
    assert (entry["distribution"], entry["version"]) == ("ireebench-markdown", "0.1.0")
    assert entry["reporters"] == ["markdown"]
    assert entry["hooks"] == ["ireebench_register_commands", "ireebench_reporters"]
    assert entry["commands"] == ["markdown"]  # its subcommand, listed with it
    assert "markdown 0.1.0 (entry point: ireebench-markdown)" in run("--version").stdout
    args = [f"--module={compile_mlir('simple')}", *LOCAL, "--reporter=markdown"]
    used = run(*args, f"--benchmark_out={tmp_path / 'run.json'}")
    assert used.returncode == 0, used.stderr
    assert used.stdout.startswith("| benchmark")
    # The installed package's subcommand: the same table from the saved report.
    table = run("markdown", tmp_path / "run.json")
    assert table.returncode == 0, table.stderr
    assert table.stdout.splitlines()[0] == used.stdout.splitlines()[0]
    assert "BM_noargs/process_time/real_time" in table.stdout
    # A blocked installed plugin's flag says which plugin it belongs to.
    flagged = run(*args, "-p", "no:slow_alert", "--slow_alert_ms=1")
    assert flagged.stderr.strip() == ("ireebench: error: --slow_alert_ms=1: unknown flag (it "
                                      "belongs to the plugin 'slow_alert', blocked with "
                                      "-p no:slow_alert)")
    blocked = run(*args, "-p", "no:markdown")
    assert "--reporter=markdown: unknown reporter" in blocked.stderr
    off = run(*args, IREEBENCH_DISABLE_PLUGIN_AUTOLOAD="1")
    assert "--reporter=markdown: unknown reporter" in off.stderr
