"""Finding and running the native tools; reading why one failed.

Every native process is started by :func:`run_tool`: an argument list,
never a shell string; paths are passed as arguments; standard input is
closed; scratch files live in a private temporary directory that is
removed, also on failure.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from ..errors import UsageError, one_line
from . import BENCHMARK_TOOL, PROFILE_TOOL, REPLAY_TOOL  # noqa: F401 - their module

# The package of iree-base-runtime that holds its native tools, beside the
# bindings (``iree.runtime.benchmark.benchmark_exe()`` points into it).
TOOLS_PACKAGE = "iree._runtime_libs"


def tools_dir() -> Path:
    """The directory of the native tools shipped in iree-base-runtime.

    Found from the package's location alone: neither the bindings nor numpy
    are imported to run a native tool (``ireebench --list_drivers``).
    """
    spec = importlib.util.find_spec(TOOLS_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        raise UsageError(f"the native tools of iree-base-runtime ({TOOLS_PACKAGE}) are not "
                         "installed")
    return Path(locations[0]).resolve()


def tool_path(name: str) -> Path:
    """Path of a native tool binary (iree-benchmark-module, iree-profile ...)."""
    path = tools_dir() / name
    if not path.is_file():
        raise UsageError(f"native tool {name} not found in {path.parent}")
    return path


def benchmark_env() -> dict:
    """This process's environment without Google Benchmark's BENCHMARK_* variables.

    The native tools read them as flag defaults (BENCHMARK_OUT would make a
    native pass write the user's output file); ireebench passes every
    Google Benchmark flag a native pass needs explicitly instead.
    """
    return {k: v for k, v in os.environ.items() if not k.startswith("BENCHMARK_")}


def tool_command(name: str, args: list[str], command_prefix: list[str] | None = None) -> list[str]:
    """``[*command_prefix, TOOL, *args]``: the argument list of a native run."""
    return [*(command_prefix or []), str(tool_path(name)), *map(str, args)]


def tool_environment(env: Mapping[str, str] | None = None) -> dict:
    environment = benchmark_env()
    environment.update(env or {})
    return environment


def run_tool(name: str, args: list[str], *, env: Mapping[str, str] | None = None,
             command_prefix: list[str] | None = None,
             timeout: float | None = None) -> subprocess.CompletedProcess:
    """Runs a native tool and captures its output (text).

    The command is an argument list (never a shell string):
    ``[*command_prefix, TOOL, *args]``; ``command_prefix`` is a command the
    tool runs under (an external profiler). The environment is
    :func:`benchmark_env` plus ``env``. Standard input is closed: a module
    read from stdin was saved to a file first. Output that is not UTF-8 is
    decoded with replacement characters. A tool (or prefix) that cannot
    start, or runs past ``timeout`` seconds, is a one-line UsageError.
    """
    command = tool_command(name, args, command_prefix)
    try:
        return subprocess.run(command, capture_output=True, text=True, errors="replace",
                              check=False, stdin=subprocess.DEVNULL,
                              env=tool_environment(env), timeout=timeout)
    except subprocess.TimeoutExpired:
        raise UsageError(f"native {name} did not finish within {timeout} s") from None
    except OSError as exc:
        raise UsageError(f"native {name}: cannot run {command[0]}: "
                         f"{exc.strerror or exc}") from None


def list_benchmarks(args: list[str], tool: str = BENCHMARK_TOOL) -> tuple[list[str], str]:
    """Runs ``tool --benchmark_list_tests=true ARGS``: the session starts, nothing runs.

    Used to list the benchmarks and as a probe: the tool creates the
    devices, loads the modules and starts the profiling session of its
    flags, so flags it rejects fail here, before anything is measured.

    :return: ``(names, "")``, or ``([], error)`` with the tool's
        :func:`native_error_line` when it failed.
    """
    proc = run_tool(tool, ["--benchmark_list_tests=true", *args])
    if proc.returncode != 0:
        return [], native_error_line(proc.stderr, proc.returncode)
    return [line.strip() for line in proc.stdout.splitlines() if line.strip()], ""


@contextlib.contextmanager
def private_tempdir(prefix: str = "ireebench-"):
    """A private (0700) scratch directory, removed on exit, also on failure."""
    with tempfile.TemporaryDirectory(prefix=prefix) as path:
        yield Path(path)


_STATUS_LINE = re.compile(r"^\S+\.(?:c|cc|cpp|h):\d+: [A-Z_]+; ")


def native_status_line(stderr: str) -> str | None:
    """The IREE status a tool printed when it refused to go on (``file.c:LINE: CODE; ...``)."""
    for line in (stderr or "").splitlines():
        line = one_line(line)
        if _STATUS_LINE.match(line):
            return line
    return None


def native_error_line(stderr: str, returncode: int) -> str:
    """One line describing why a native tool failed.

    IREE tools print their failure status as ``file.c:LINE: CODE; message``
    (sometimes followed by a VM stack trace); that line is preferred.
    """
    status = native_status_line(stderr)
    if status is not None:
        return status
    lines = [line for line in map(one_line, (stderr or "").splitlines()) if line]
    if lines:
        return lines[-1]
    if returncode < 0:
        return f"killed by signal {-returncode}"
    return f"exit status {returncode}"
