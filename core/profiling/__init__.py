"""Profiling passes and profiling sinks.

* :mod:`.rows`: the typed rows of ``iree-profile statistics``;
* :mod:`.passes`: :class:`ProfilePass`, :class:`ProfileResult` and the
  :class:`ProfilingSink` interface plugins implement;
* :mod:`.timeline`: the individual execution events of a bundle
  (``iree-profile export``) and the device's busy time (their union);

The passes themselves are the built-in plugin ``profiling_pass``
(:mod:`ireebench.plugins.profiling_pass`): it declares the hooks
``ireebench_profiling_sinks`` and ``ireebench_profiling_pass``, runs one pass
per measured workload (the native ``iree-benchmark-module`` writing a HAL
profiling bundle) and feeds every sink.
"""

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
from .timeline import (
    ExecutionEvent,
    Timeline,
    busy_ns,
    parse_timeline,
    read_timeline,
    split_repetitions,
)

__all__ = [
    "DISPATCH_FUNCTION", "FUNCTION_ROW_TYPES", "HOST_EXECUTION_FUNCTION", "ExecutionEvent",
    "ProfilePass", "ProfileResult", "ProfilingSink", "StatisticsRow", "StatisticsSummary",
    "Timeline", "busy_ns", "merge_modes", "parse_statistics", "parse_timeline",
    "profiling_mode", "read_statistics", "read_timeline", "split_repetitions",
]
