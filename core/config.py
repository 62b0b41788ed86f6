"""The parsed configuration of one run."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from .errors import UsageError


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


class Config:
    """Options of the run, the plugin manager, and flags owned by the runtime.

    ``getoption(name)`` returns the parsed value of ``--name`` (core options
    and options added by plugins alike).
    """

    def __init__(self, pm, options: dict, runtime_flags: list[str], argv: list[str]):
        self.pm = pm
        self.options = options
        self.runtime_flags = runtime_flags
        self.argv = argv
        # Module files for the native passes: --module values resolved to
        # absolute paths, a stdin module as its saved copy (set by the session).
        self.resolved_module_paths: list[str] = []
        self.min_time = parse_min_time(options.get("benchmark_min_time") or "0.5s")
        warmup = options.get("benchmark_min_warmup_time") or "0"
        try:
            self.min_warmup_time = float(str(warmup).rstrip("s"))
            if self.min_warmup_time < 0:
                raise ValueError
        except ValueError:
            raise UsageError(
                f"--benchmark_min_warmup_time={warmup}: expected seconds >= 0"
            ) from None
        self.benchmark_context = parse_benchmark_context(options.get("benchmark_context"))
        pattern = options.get("benchmark_filter") or ""
        try:
            self.filter = re.compile(pattern) if pattern not in ("", ".", "all") else None
        except re.error as exc:
            raise UsageError(f"--benchmark_filter={pattern}: invalid regex: {exc}") from None
        self.negative_filter = False
        if pattern.startswith("-") and self.filter is not None:
            self.filter = re.compile(pattern[1:])
            self.negative_filter = True

    def getoption(self, name: str, default=None):
        value = self.options.get(name, default)
        return default if value is None else value

    def selects(self, benchmark_name: str) -> bool:
        """--benchmark_filter, matched against ``BM_fn/process_time/real_time``."""
        if self.filter is None:
            return True
        return bool(self.filter.search(benchmark_name)) != self.negative_filter
