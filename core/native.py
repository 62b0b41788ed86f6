"""Helpers for the native passes (profiling, replay capture, native backend).

The native IREE tools ship inside iree-base-runtime
(``iree/_runtime_libs/``). Commands are always argument lists, never shell
strings; paths are passed as arguments; scratch files live in a private
temporary directory that is removed, also on failure.
"""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
from pathlib import Path

from .errors import UsageError


def tools_dir() -> Path:
    from iree.runtime.benchmark import benchmark_exe

    return Path(benchmark_exe()).resolve().parent


def tool_path(name: str) -> Path:
    """Path of a native tool binary (iree-benchmark-module, iree-profile ...)."""
    path = tools_dir() / name
    if not path.is_file():
        raise UsageError(f"native tool {name} not found in {path.parent}")
    return path


def module_args(config) -> list[str]:
    """--module flags for the native tool (stdin modules as their saved copy)."""
    paths = getattr(config, "resolved_module_paths", None) or list(config.getoption("module"))
    return [f"--module={p}" for p in paths]


def session_args(config) -> list[str]:
    """Flags that recreate the session: modules, devices, parameters, runtime flags."""
    args = module_args(config)
    args += [f"--device={d}" for d in (config.getoption("device") or ["local-task"])]
    args += [f"--parameters={p}" for p in config.getoption("parameters") or []]
    args += list(config.runtime_flags)
    return args


def workload_args(config, workload) -> list[str]:
    """Flags that select one workload with the same inputs and batch accounting."""
    args = [f"--function={workload.function.name}"]
    if workload.selected:
        args += [f"--input={value}" for value in config.getoption("input") or []]
    args += [
        f"--batch_size={config.getoption('batch_size')}",
        f"--batch_concurrency={config.getoption('batch_concurrency')}",
    ]
    if config.getoption("time_unit"):
        args.append(f"--time_unit={config.getoption('time_unit')}")
    return args


def run_tool(name: str, args: list[str], timeout: float | None = None,
             cwd: str | None = None) -> subprocess.CompletedProcess:
    """Runs a native tool with an argument list (no shell) and captures output."""
    command = [str(tool_path(name)), *map(str, args)]
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                              cwd=cwd, check=False)
    except subprocess.TimeoutExpired:
        raise UsageError(f"native {name} did not finish within {timeout} s") from None


@contextlib.contextmanager
def private_tempdir(prefix: str = "ireebench-"):
    """A private (0700) scratch directory, removed on exit, also on failure."""
    with tempfile.TemporaryDirectory(prefix=prefix) as path:
        yield Path(path)
