"""Testing ireebench plugins with pytest: the ``ireebench_tester`` fixture.

A pytest plugin installed with ireebench (entry point ``pytest11``, as
pytest's own ``pytester``), so a plugin's test suite has the fixture
without importing anything::

    import my_plugin

    def test_rows_are_tagged(ireebench_tester):
        result = ireebench_tester.run("--benchmark_repetitions=3", plugins=[my_plugin])
        assert result.exit_code == 0, result.stderr
        assert result.rows[0].counters["my_counter"].value > 0

:class:`IreebenchTester` runs ireebench in this process (the Python API's
way: plugin objects and modules passed as they are) or, with
``worker=True``, through the worker process a command-line run measures
in; each run is on a tiny module compiled once per test session
(:data:`TEST_MODULE_MLIR`, on ``local-sync``) unless the arguments name
one, and returns a :class:`RunOutcome`: the rows, stdout, stderr, the exit
status and the report context. A user error or a plugin failure is the
exit status and the one line the command line prints, as on the command
line; what a plugin writes to ``sys.stderr`` or prints is in the stderr, as
the command line shows it. Every run of one test uses a results store of its own in the test's
temporary folder (``IREEBENCH_STORAGE``), so ``--benchmark_save`` and
``stored:`` references never touch the user's store; :meth:`~IreebenchTester.subcommand`
runs a subcommand (``history``, ``compare``, one a plugin adds).

The module is compiled with the IREE compiler (``pip install
"ireebench[compiler]"``); without it the tests that need the module are
skipped, saying so. No compiled module is shipped: a ``.vmfb`` is tied to
the runtime that reads it, and the repository holds only source.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from . import run as run_ireebench
from ._cli import error_outcome
from ._context import Context
from ._pluginmanager import DISABLE_AUTOLOAD_ENV
from .results import Run, RunResult

# The module the tester measures: one function that runs without inputs
# (BM_tiny: one dispatch, its constant kept from folding), and one that needs
# them (``--function=add --input=4xf32=1 --input=4xf32=2``).
TEST_MODULE_MLIR = """
func.func @tiny() -> tensor<4xf32> {
  %c = util.unfoldable_constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = arith.mulf %c, %c : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @add(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
# The name of the row of BM_tiny's repetitions.
TINY = "BM_tiny/process_time/real_time"
# For any CPU: the portable llvm-cpu target, as the project's own tests compile.
COMPILE_FLAGS = ("--iree-hal-target-device=local",
                 "--iree-hal-local-target-device-backends=llvm-cpu",
                 "--iree-llvmcpu-target-cpu=generic")
# What a run gets unless its arguments say otherwise: quick and deterministic.
DEFAULTS = {"--device": "local-sync", "--benchmark_min_time": "2x"}
STORAGE_ENV = "IREEBENCH_STORAGE"
# Off unless a test turns them on (--environment_warnings=true): lines about the
# load of the machine the tests run on are no test's business.
QUIET_ENV = {"IREEBENCH_ENVIRONMENT_WARNINGS": "false", "IREEBENCH_MULTIMODAL_WARNINGS": "false"}
NO_COMPILER = ('ireebench.testing: the IREE compiler is not installed, so its test module '
               'cannot be compiled (pip install "ireebench[compiler]")')


@dataclass
class RunOutcome:
    """What one run gave: as the command line would show it, and the rows as objects."""

    exit_code: int
    rows: list[Run]
    stdout: str
    stderr: str
    # The report context (Google Benchmark's fields, ``extra``: provenance and
    # what plugins added, ``findings``); None when nothing was reported.
    context: Context | None = None
    result: RunResult | None = field(default=None, repr=False)

    def json(self):
        """stdout parsed as JSON (``--benchmark_format=json``, ``--json``)."""
        return json.loads(self.stdout)

    def row(self, name: str, repetition: int | None = None) -> Run:
        """The row reported as ``name`` (``RunResult.by_name``)."""
        return (self.result or RunResult(self.exit_code, self.rows)).by_name(name, repetition)

    @property
    def error_lines(self) -> list[str]:
        """The ``ireebench: error:``, ``plugin error:`` and ``warning:`` lines of stderr."""
        return [line for line in self.stderr.splitlines() if line.startswith("ireebench: ")]


class IreebenchTester:
    """Runs ireebench for a test: see the module docstring.

    :ivar module: the compiled test module (a ``Path``).
    :ivar tmp_path: the test's temporary folder.
    :ivar storage: the test's results store (an SQLite file in ``tmp_path``;
        ``IREEBENCH_STORAGE`` during every run).

    The environment and multimodality warnings (lines about the machine's
    load) are off unless a run's arguments turn them on.
    """

    def __init__(self, module: Path | None, tmp_path: Path, monkeypatch, cache: Path):
        self._module = module
        self.tmp_path = tmp_path
        self.storage = tmp_path / "results.sqlite"
        self._monkeypatch = monkeypatch
        self._cache = cache

    @property
    def module(self) -> Path:
        if self._module is None:
            pytest.skip(NO_COMPILER)
        return self._module

    def compile_module(self, mlir: str, flags=()) -> Path:
        """Another module for a test (a kind's functions, a shape): ``mlir`` compiled
        like the test module, with the iree-compile ``flags`` added, once per session
        for the same text and flags."""
        if not _compiler_available():
            pytest.skip(NO_COMPILER)
        return compile_test_module(self._cache, mlir, flags)

    def run(self, *args, plugins=(), worker: bool = False, autoload: bool = False) -> RunOutcome:
        """A benchmark run: ``ireebench [--module=TEST MODULE] [--device=local-sync]
        [--benchmark_min_time=2x] ARGS...`` (each default only when ``args``
        do not give the flag).

        :param plugins: plugin modules or objects (registered for this run), or
            strings (``--plugin`` values: a module name or a ``.py`` file).
        :param worker: measure in a worker process, as the command line does
            (``--isolation=worker``): the plugins' hooks run there, the rows
            and the context come back.
        :param autoload: ``True``: the installed plugins (entry points) are loaded
            too, as a user's run loads them; by default (``False``; ``True`` in
            0.1.0) only the built-ins and ``plugins``
            (``IREEBENCH_DISABLE_PLUGIN_AUTOLOAD``), so that the plugins
            installed next to the one under test do not change its results.
        """
        argv = [str(arg) for arg in args]
        given = {arg.split("=", 1)[0] for arg in argv}
        defaults = [] if "--module" in given else [f"--module={self.module}"]
        defaults += [f"{flag}={value}" for flag, value in DEFAULTS.items() if flag not in given]
        if worker:
            defaults.append("--isolation=worker")
        return self._execute([*defaults, *argv], plugins, autoload)

    def subcommand(self, name: str, *args, plugins=(), autoload: bool = False) -> RunOutcome:
        """``ireebench NAME ARGS...`` (``history``, ``compare``, a plugin's); the
        test's store is the one a subcommand reads."""
        return self._execute([name, *map(str, args)], plugins, autoload)

    def _execute(self, argv: list[str], plugins, autoload: bool) -> RunOutcome:
        if isinstance(plugins, (str, os.PathLike)) or not isinstance(plugins, Iterable):
            plugins = [plugins]  # one plugin, not its name's characters (issue 40)
        objects = [plugin for plugin in plugins if not isinstance(plugin, (str, os.PathLike))]
        named = [f"--plugin={plugin}" for plugin in plugins if isinstance(plugin, (str, os.PathLike))]
        stdout, stderr = io.StringIO(), io.StringIO()
        # The process's streams are the run's, as on the command line: what a plugin
        # writes to sys.stderr is in the outcome's stderr, and its print() too.
        with self._monkeypatch.context() as patch, contextlib.redirect_stdout(stdout), \
                contextlib.redirect_stderr(stderr):
            patch.setenv(STORAGE_ENV, str(self.storage))
            for name, value in QUIET_ENV.items():
                patch.setenv(name, value)
            if autoload:  # whatever the test's environment says
                patch.delenv(DISABLE_AUTOLOAD_ENV, raising=False)
            else:
                patch.setenv(DISABLE_AUTOLOAD_ENV, "1")
            try:
                result = run_ireebench([*named, *argv], stdout=stdout, stderr=stderr,
                                       plugins=objects)
            except BaseException as exc:
                outcome = error_outcome(exc)
                if outcome is None or isinstance(exc, KeyboardInterrupt):
                    raise  # a bug of ireebench or of the test: its traceback
                stderr.write(outcome[0] + "\n")
                return RunOutcome(outcome[1], [], stdout.getvalue(), stderr.getvalue())
        return RunOutcome(result.exit_code, list(result.runs), stdout.getvalue(),
                          stderr.getvalue(), result.context, result)


# The compiler's command line (iree-base-compiler's iree-compile), run with this
# interpreter: the compiler is never loaded into the test process.
COMPILER = "iree.compiler.tools.scripts.iree_compile"


def _compiler_available() -> bool:
    return importlib.util.find_spec("iree.compiler") is not None


def compile_test_module(directory: Path, mlir: str = TEST_MODULE_MLIR, flags=()) -> Path:
    """``mlir`` (the test module) compiled into ``directory`` with :data:`COMPILE_FLAGS`
    and ``flags``, reused when already there (the same text and flags)."""
    flags = [*COMPILE_FLAGS, *map(str, flags)]
    key = hashlib.sha256("\0".join([mlir, *flags]).encode()).hexdigest()
    path = directory / f"ireebench-test-{key[:16]}.vmfb"
    if not path.exists():
        source = directory / f"ireebench-test-{key[:16]}.{os.getpid()}.mlir"
        source.write_text(mlir)
        partial = path.with_suffix(f".{os.getpid()}.partial")
        proc = subprocess.run([sys.executable, "-m", COMPILER, *flags, str(source),
                               "-o", str(partial)], capture_output=True, text=True,
                              check=False, timeout=600)
        if proc.returncode != 0:
            raise RuntimeError(f"ireebench.testing: compiling its test module failed: "
                               f"{proc.stderr.strip()[-2000:]}")
        partial.replace(path)  # atomic: pytest-xdist workers may compile it at once
    return path


@pytest.fixture(scope="session")
def ireebench_module_cache(tmp_path_factory) -> Path:
    """Where the session's compiled test modules are kept."""
    return tmp_path_factory.mktemp("ireebench-modules")


@pytest.fixture(scope="session")
def ireebench_module(ireebench_module_cache) -> Path:
    """The tiny test module (``BM_tiny``; ``add`` takes two ``4xf32``), compiled once
    per session; skips the test when the IREE compiler is not installed."""
    if not _compiler_available():
        pytest.skip(NO_COMPILER)
    return compile_test_module(ireebench_module_cache)


@pytest.fixture
def ireebench_tester(request, tmp_path, monkeypatch, ireebench_module_cache) -> IreebenchTester:
    """Runs ireebench in this test (see :class:`IreebenchTester`)."""
    module = request.getfixturevalue("ireebench_module") if _compiler_available() else None
    return IreebenchTester(module, tmp_path, monkeypatch, ireebench_module_cache)


__all__ = ["TEST_MODULE_MLIR", "TINY", "IreebenchTester", "RunOutcome", "compile_test_module",
           "ireebench_module", "ireebench_module_cache", "ireebench_tester"]
