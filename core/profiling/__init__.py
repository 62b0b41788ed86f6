"""Profiling passes and profiling sinks.

* :mod:`.rows`: the typed rows of ``iree-profile statistics``;
* :mod:`.passes`: :class:`ProfilePass`, :class:`ProfileResult` and the
  :class:`ProfilingSink` interface plugins implement;
* :mod:`.engine`: the per-run engine that runs one pass per workload
  through the ``ireebench_profiling_pass`` hook and feeds every sink.

The pass itself (the native ``iree-benchmark-module`` writing a HAL
profiling bundle) is the built-in plugin ``ireebench.plugins.profiling_pass``.
"""

from .engine import ProfilingEngine, engine
from .passes import ProfilePass, ProfileResult, ProfilingSink, merge_modes, profiling_mode
from .rows import (
    DISPATCH_FUNCTION,
    FUNCTION_ROW_TYPES,
    HOST_EXECUTION_FUNCTION,
    StatisticsRow,
    StatisticsSummary,
    parse_statistics,
    read_statistics,
)

__all__ = [
    "DISPATCH_FUNCTION", "FUNCTION_ROW_TYPES", "HOST_EXECUTION_FUNCTION", "ProfilePass",
    "ProfileResult", "ProfilingEngine", "ProfilingSink", "StatisticsRow", "StatisticsSummary",
    "engine", "merge_modes", "parse_statistics", "profiling_mode", "read_statistics",
]
