"""The configuration of one run: what every hook receives as ``config``.

A :class:`Config` holds what the command line said (``getoption``, the
runtime flags), the plugin manager, the streams the run writes to, and the
run's state: ``config.stash`` (typed per-run state, for the core and for
plugins), cleanups (``add_cleanup``) and a private scratch directory, which
the core releases when the run ends, whatever the backend.
"""

from __future__ import annotations

import math
import re
import shutil
import sys
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

from .errors import UsageError
from .hookcall import guarded
from .stash import Stash


@dataclass
class MinTime:
    """--benchmark_min_time: either seconds or an explicit iteration count."""

    seconds: float | None = 0.5
    iterations: int | None = None


def parse_min_time(text: str, flag: str = "benchmark_min_time") -> MinTime:
    value = str(text).strip()
    try:
        if value.endswith("x"):
            iterations = int(value[:-1])
            if iterations <= 0:
                raise ValueError
            return MinTime(seconds=None, iterations=iterations)
        seconds = float(value.removesuffix("s"))
        if not seconds > 0 or math.isnan(seconds):
            raise ValueError
        return MinTime(seconds=seconds)
    except ValueError:
        raise UsageError(
            f"--{flag}={text}: expected a positive `<float>s` (seconds) or `<integer>x` "
            "(iterations)"
        ) from None


def parse_benchmark_context(values) -> dict[str, str]:
    """--benchmark_context=key=value,key2=value2 (repeatable)."""
    context: dict[str, str] = {}
    for value in values or ():
        for item in filter(None, str(value).split(",")):
            key, sep, val = item.partition("=")
            if not sep or not key:
                raise UsageError(f"--benchmark_context={value}: expected key=value pairs")
            context[key] = val
    return context


def _compile_filter(pattern: str):
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise UsageError(f"--benchmark_filter={pattern}: invalid regex: {exc}") from None
    except RecursionError:
        raise UsageError(f"--benchmark_filter={pattern[:80]}...: invalid regex: "
                         "nested too deeply") from None


class Config:
    """Options of the run, the plugin manager, its streams and its state.

    ``getoption(name)`` returns the parsed value of ``--name`` (core options
    and options added by plugins alike). ``stdout``/``stderr`` are where the
    run writes (the Python API's streams, or the process's); everything
    ireebench and its built-in plugins print goes there.
    """

    def __init__(self, pm, options: dict, runtime_flags: list[str], argv: list[str],
                 stdout=None, stderr=None):
        self.pm = pm
        self.options = options
        self.runtime_flags = runtime_flags
        self.argv = argv
        self.stdout = stdout if stdout is not None else sys.stdout
        self.stderr = stderr if stderr is not None else sys.stderr
        self.stash = Stash()
        # One id per run, so streamed rows from several runs can be told apart.
        self.run_id = uuid.uuid4().hex
        self._cleanups: list = []
        self._scratch: str | None = None
        self.min_time = parse_min_time(options.get("benchmark_min_time") or "0.5s")
        warmup = options.get("benchmark_min_warmup_time") or "0"
        try:
            self.min_warmup_time = float(str(warmup).rstrip("s"))
            if self.min_warmup_time < 0 or math.isnan(self.min_warmup_time):
                raise ValueError
        except ValueError:
            raise UsageError(
                f"--benchmark_min_warmup_time={warmup}: expected seconds >= 0"
            ) from None
        self.benchmark_context = parse_benchmark_context(options.get("benchmark_context"))
        pattern = options.get("benchmark_filter") or ""
        self.filter = _compile_filter(pattern) if pattern not in ("", ".", "all") else None
        self.negative_filter = False
        if pattern.startswith("-") and self.filter is not None:
            self.filter = _compile_filter(pattern[1:])
            self.negative_filter = True

    def getoption(self, name: str, default=None):
        value = self.options.get(name, default)
        return default if value is None else value

    def selects(self, benchmark_name: str) -> bool:
        """--benchmark_filter, matched against ``BM_fn/process_time/real_time``."""
        if self.filter is None:
            return True
        return bool(self.filter.search(benchmark_name)) != self.negative_filter

    # --- the run's resources, released by the core when the run ends -------

    def add_cleanup(self, function) -> None:
        """Calls ``function()`` when the run ends (last added, first called),
        after ``ireebench_sessionfinish``, also after an error or a signal."""
        self._cleanups.append(function)

    def scratch_dir(self) -> Path:
        """A private (0700) directory for this run, removed when it ends."""
        if self._scratch is None:
            self._scratch = tempfile.mkdtemp(prefix="ireebench-")
        return Path(self._scratch)

    def release(self) -> None:
        """Runs the cleanups, then removes the scratch directory.

        Every cleanup runs even when one raises; the first exception is
        raised at the end.
        """
        error = None
        while self._cleanups:
            function = self._cleanups.pop()
            name = getattr(function, "__qualname__", None) or type(function).__name__
            try:
                # A plugin's cleanup that raises is a plugin error naming it.
                guarded(self.pm, f"cleanup {name}", function)
            except BaseException as exc:  # noqa: BLE001 - re-raised below
                error = error or exc
        self.remove_scratch()
        if error is not None:
            raise error

    def remove_scratch(self) -> None:
        """Removes the scratch directory (and forgets it); nothing else."""
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None
