"""Shared fixtures: modules compiled from MLIR once per session, and CLI runners.

Modules are compiled with iree-base-compiler at test time (llvm-cpu, generic
CPU so the cache never depends on the host) and cached for the whole session.
The CLI runs in a subprocess (``python -m ireebench``) because the runtime's
flags are process-global and some failures must be observed as exit codes.
"""

from __future__ import annotations

import atexit
import glob
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

# The session's bytecode cache (see below).
_PYCACHE_ENV = "IREEBENCH_TESTS_PYCACHE"

TESTS_DIR = Path(__file__).resolve().parent
ROOT = TESTS_DIR.parent  # the repository
MLIR_DIR = TESTS_DIR / "fixtures" / "mlir"
FIXTURE_PLUGINS = TESTS_DIR / "fixtures" / "plugins"  # test plugins, importable by name


def fixture_plugin(name: str) -> Path:
    """A test plugin's file, for ``ireebench_tester.run(plugins=[...])``."""
    return FIXTURE_PLUGINS / f"{name}.py"
CPU_FLAGS = [
    "--iree-hal-target-device=local",
    "--iree-hal-local-target-device-backends=llvm-cpu",
    "--iree-llvmcpu-target-cpu=generic",
]


@pytest.fixture(scope="session")
def module_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("modules")


@pytest.fixture(scope="session")
def compile_mlir(module_cache):
    """compile_mlir(source_or_name, *extra_flags) -> path of a cached .vmfb.

    ``source_or_name`` is MLIR text, or the stem of a file in tests/mlir/.
    """
    from iree.compiler import tools

    def compile_(source: str, *flags: str) -> Path:
        if "\n" not in source and (MLIR_DIR / f"{source}.mlir").is_file():
            source = (MLIR_DIR / f"{source}.mlir").read_text()
        all_flags = [*CPU_FLAGS, *flags]
        key = hashlib.sha256((source + "\0" + "\0".join(all_flags)).encode()).hexdigest()[:16]
        output = module_cache / f"{key}.vmfb"
        if not output.exists():
            binary = tools.compile_str(source, extra_args=all_flags, input_type="auto")
            output.write_bytes(binary)
        return output

    return compile_


@pytest.fixture(scope="session")
def dispatch_module(compile_mlir, module_cache) -> Path:
    """A module of dispatch benchmark wrappers (iree.benchmark = "dispatch")."""
    from iree.compiler import tools

    dump = module_cache / "dispatch_benchmarks"
    output = module_cache / "dispatch_benchmarks.vmfb"
    if not output.exists():
        dump.mkdir(exist_ok=True)
        tools.compile_str(
            (MLIR_DIR / "two_dispatches.mlir").read_text(),
            extra_args=[*CPU_FLAGS, f"--iree-hal-dump-executable-benchmarks-to={dump}"],
        )
        sources = sorted(dump.glob("*.mlir"))
        assert sources, "the compiler wrote no dispatch benchmark"
        # One module per dumped executable; benchmark the first (the matmul's
        # fill or matmul) - the wrapper shape is what matters.
        output.write_bytes(tools.compile_file(str(sources[0]), extra_args=CPU_FLAGS))
    return output


GBENCH_TOOLS_ENV = "IREEBENCH_GBENCH_TOOLS"
DEBIAN_TOOLS = Path("/usr/share/benchmark")  # apt-get install libbenchmark-tools


def compare_py() -> Path | None:
    """Google Benchmark's compare.py: from $IREEBENCH_GBENCH_TOOLS, else Debian's
    libbenchmark-tools; None when neither is there."""
    for folder in (os.environ.get(GBENCH_TOOLS_ENV), DEBIAN_TOOLS):
        if folder and (Path(folder) / "compare.py").is_file():
            return Path(folder) / "compare.py"
    return None


def require_compare_py() -> Path:
    """compare.py, or skips the calling test when it or its imports are missing."""
    script = compare_py()
    if script is None:
        pytest.skip(f"compare.py not found: set {GBENCH_TOOLS_ENV}=<google/benchmark>/tools "
                    "or install Debian's libbenchmark-tools")
    for needed in ("numpy", "scipy"):
        if importlib.util.find_spec(needed) is None:
            pytest.skip(f"compare.py needs {needed}")
    return script


def run_compare_py(baseline: Path, contender: Path, dump: Path) -> subprocess.CompletedProcess:
    """Runs compare.py's ``benchmarks`` mode on two JSON files (its diff JSON in ``dump``)."""
    script = require_compare_py()
    return subprocess.run(
        [sys.executable, str(script), "--no-color", f"--dump_to_json={dump}", "benchmarks",
         str(baseline), str(contender)], check=False, capture_output=True, text=True,
        timeout=120)


@dataclass
class CliResult:
    returncode: int
    stdout: str
    stderr: str

    @property
    def exit_code(self) -> int:  # as ireebench.testing's RunOutcome: the helpers take both
        return self.returncode

    def json(self):
        return json.loads(self.stdout)


# The test machine is shared and loaded: the environment warnings (ASLR, load,
# busy processes) would add environment-dependent stderr lines to every run.
# They are off for the suite, in-process runs included, whatever the shell that
# started it set (a user's IREEBENCH_ENVIRONMENT_WARNINGS=true made every test
# that reads stderr fail on a busy machine);
# tests/builtin_plugins/test_environment.py turns them on where it checks them.
os.environ["IREEBENCH_ENVIRONMENT_WARNINGS"] = "false"
# For the same reason the multimodality check is off: on this machine other
# processes can split any run's repetitions into groups (which the check rightly
# reports). tests/builtin_plugins/test_modality.py turns it on.
os.environ["IREEBENCH_MULTIMODAL_WARNINGS"] = "false"
# A machine that sets PYTHONDONTWRITEBYTECODE (these do) makes every one of the
# suite's `python -m ireebench` processes compile each ireebench module again:
# about 0.3 s of CPU a process. They cache their bytecode as an installation
# does, in one directory of this session (made by the first process to load this
# file, pytest-xdist's controller, and inherited by its workers), so that no
# __pycache__ appears next to the tests' plugin files.
if _PYCACHE_ENV not in os.environ:
    os.environ[_PYCACHE_ENV] = tempfile.mkdtemp(prefix="ireebench-tests-pycache-")
    atexit.register(shutil.rmtree, os.environ[_PYCACHE_ENV], True)
os.environ["PYTHONPYCACHEPREFIX"] = os.environ[_PYCACHE_ENV]
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


def _env() -> dict:
    env = dict(os.environ)
    env.setdefault("IREEBENCH_DISABLE_PLUGIN_AUTOLOAD", "1")
    env["PYTHONPATH"] = os.pathsep.join(
        [str(FIXTURE_PLUGINS), env.get("PYTHONPATH", "")]
    )
    return env


@pytest.fixture(scope="session")
def ireebench():
    """ireebench(*args, input=None, timeout=300, cwd=None, env=None) runs the CLI in a
    subprocess (``env``: variables added to the suite's environment)."""

    def run(*args, input: bytes | None = None, timeout: float = 300, cwd=None,
            env: dict | None = None) -> CliResult:
        proc = subprocess.run(
            [sys.executable, "-m", "ireebench", *map(str, args)],
            input=input,
            capture_output=True,
            timeout=timeout,
            env={**_env(), **(env or {})},
            cwd=cwd,
            check=False,  # the exit code is part of what tests check
        )
        return CliResult(proc.returncode, proc.stdout.decode(errors="replace"),
                         proc.stderr.decode(errors="replace"))

    return run


@pytest.fixture(scope="session")
def native_tool():
    """native_tool(name, *args) runs a native IREE tool binary from iree-base-runtime."""
    from iree.runtime.benchmark import benchmark_exe

    tools_dir = Path(benchmark_exe()).parent

    def run(name: str, *args, timeout: float = 300) -> CliResult:
        proc = subprocess.run([str(tools_dir / name), *map(str, args)],
                              capture_output=True, timeout=timeout, check=False)
        return CliResult(proc.returncode, proc.stdout.decode(errors="replace"),
                         proc.stderr.decode(errors="replace"))

    return run


def slow_function(name: str, trip_count: int) -> str:
    """MLIR of a no-argument function that spins ``trip_count`` times in a host loop
    (about 0.1 s per 7 million), for runs long enough to interrupt or change."""
    return f"""
func.func @{name}() -> i32 {{
  %n = util.unfoldable_constant {trip_count} : i32
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = scf.while (%i = %c0) : (i32) -> i32 {{
    %cond = arith.cmpi slt, %i, %n : i32
    scf.condition(%cond) %i : i32
  }} do {{
  ^bb0(%i: i32):
    %next = arith.addi %i, %c1 : i32
    scf.yield %next : i32
  }}
  return %r : i32
}}
"""


def one_error_line(result: CliResult) -> str:
    """Asserts the CLI failed with exactly one error line and no traceback."""
    assert result.exit_code != 0, result.stdout
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("ireebench: error: "), lines[0]
    return lines[0]


def ireebench_lines(result: CliResult) -> list[str]:
    """The lines ireebench itself wrote on stderr (not a reporter's context block)."""
    assert "Traceback" not in result.stderr, result.stderr
    return [line for line in result.stderr.splitlines() if line.startswith("ireebench:")]


def plugin_error_line(result: CliResult) -> str:
    """Asserts the CLI stopped with one plugin-error line (exit 3) and no traceback."""
    assert result.exit_code == 3, (result.exit_code, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("ireebench: plugin error: "), lines[0]
    return lines[0]


# --- a real PostgreSQL server, for the results store's tests --------------------


def _postgres_bin() -> Path | None:
    """The directory of Debian's postgresql binaries (initdb, pg_ctl), if installed."""
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)
    found = shutil.which("initdb")
    paths = [Path(found)] if found else []
    paths += [Path(candidate) for candidate in candidates]
    for initdb in paths:
        if (initdb.parent / "pg_ctl").exists():
            return initdb.resolve().parent
    return None


def _as_server_user(command: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: as root, run it as the postgres user."""
    if os.geteuid() != 0:
        return command
    return ["runuser", "-u", "postgres", "--", *command]


@dataclass
class PostgresServer:
    socket_dir: str
    user: str = "bench"

    def url(self, database: str) -> str:
        return f"postgresql://{self.user}@/{database}?host={self.socket_dir}"

    def create_database(self) -> str:
        """A new empty database; its libpq URL."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(host=self.socket_dir, user=self.user, dbname="postgres",
                             autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


@pytest.fixture(scope="session")
def postgres_server():
    """A PostgreSQL server of our own: initdb into a temporary directory, a unix
    socket there and no TCP port, stopped at the end of the session. Missing
    postgresql (Debian's package) or psycopg: a failure when CI=true, else a skip."""
    bin_dir = _postgres_bin()
    missing = None
    if bin_dir is None:
        missing = "PostgreSQL is not installed (apt-get install postgresql)"
    elif importlib.util.find_spec("psycopg") is None:
        missing = "psycopg is not installed (pip install -e '.[dev]')"
    elif os.geteuid() == 0 and shutil.which("runuser") is None:
        missing = "running as root without runuser to start PostgreSQL as postgres"
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(missing)
        pytest.skip(missing)
    directory = tempfile.mkdtemp(prefix="ireebench-pg-")
    if os.geteuid() == 0:
        shutil.chown(directory, "postgres", "postgres")
    data = os.path.join(directory, "data")
    subprocess.run(_as_server_user([str(bin_dir / "initdb"), "-D", data, "-U", "bench",
                                    "--auth=trust", "-E", "UTF8", "--no-sync"]),
                   check=True, capture_output=True, timeout=120)
    options = (f"-k {directory} -c listen_addresses='' -c fsync=off -c full_page_writes=off "
               "-c shared_buffers=16MB -c max_connections=40")
    log = os.path.join(directory, "server.log")
    subprocess.run(_as_server_user([str(bin_dir / "pg_ctl"), "-D", data, "-o", options,
                                    "-l", log, "-w", "-t", "120", "start"]),
                   check=True, capture_output=True, timeout=180)
    try:
        yield PostgresServer(directory)
    finally:
        subprocess.run(_as_server_user([str(bin_dir / "pg_ctl"), "-D", data, "-m", "immediate",
                                        "-w", "stop"]), check=False, capture_output=True,
                       timeout=120)
        shutil.rmtree(directory, ignore_errors=True)


STORE_KINDS = ("sqlite", "postgresql")


def new_store_url(request, kind: str, directory: Path) -> str:
    """A new, empty results store of ``kind``: an SQLite file in ``directory``, or a
    database of the session's PostgreSQL server."""
    if kind == "sqlite":
        return f"sqlite:///{directory / f'results-{uuid.uuid4().hex[:8]}.sqlite'}"
    return request.getfixturevalue("postgres_server").create_database()


@pytest.fixture(params=STORE_KINDS)
def store_url(request, tmp_path):
    """A new, empty results store: an SQLite file, then a PostgreSQL database (the
    same test on both)."""
    return new_store_url(request, request.param, tmp_path)


# The components the README's test command does not install (`.ci/run` does, as
# root): a skip reason naming one is counted in the session's last lines, so a
# user sees what was not tested and how to test it (issue 39).
COMPONENTS = {"Chromium": "chromium", "compare.py": "libbenchmark-tools",
              "PostgreSQL": "postgresql", "unshare": "util-linux", "nsenter": "util-linux",
              "ip is not": "iproute2"}


def pytest_terminal_summary(terminalreporter):
    counts: dict[str, int] = {}
    for report in terminalreporter.stats.get("skipped", []):
        reason = str(report.longrepr[-1] if isinstance(report.longrepr, tuple)
                     else report.longrepr)
        for word, package in COMPONENTS.items():
            if word in reason:
                counts[package] = counts.get(package, 0) + 1
                break
    if counts:
        listed = ", ".join(f"{package} ({count} skipped)" for package, count in counts.items())
        terminalreporter.write_line(f"not tested here, for want of Debian packages: {listed}; "
                                    "`bash .ci/run` as root installs them", yellow=True)
