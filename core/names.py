"""How a benchmarked function is named in reports: the native tool's rule.

iree-benchmark-module registers each function as ``"BM_" + name`` with
``MeasureProcessCPUTime()->UseRealTime()``, so Google Benchmark reports it
as ``BM_<fn>/process_time/real_time``; ``--benchmark_filter`` matches that
name and ``--benchmark_list_tests`` prints it. Rows a plugin appends under a
benchmark (dispatch statistics) are named ``BM_<fn>/<row>``.
"""

from __future__ import annotations

PREFIX = "BM_"
TIMING_SUFFIX = "/process_time/real_time"


def family_name(function: str) -> str:
    """``BM_<fn>``: the benchmark's family name."""
    return PREFIX + function


def run_name(function: str) -> str:
    """``BM_<fn>/process_time/real_time``: the reported, filtered and listed name."""
    return family_name(function) + TIMING_SUFFIX


def family_of(run_name_: str) -> str:
    """The family name of a reported name (``BM_add/process_time/real_time`` -> ``BM_add``)."""
    return run_name_.removesuffix(TIMING_SUFFIX)


def function_of(name: str) -> str:
    """The function of a family or run name (``BM_add/process_time/real_time`` -> ``add``)."""
    return name.removeprefix(PREFIX).split("/", 1)[0]


def row_name(family: str, row: str) -> str:
    """``BM_<fn>/<row>``: a row a plugin appends under a benchmark."""
    return f"{family}/{row}"


def is_internal(function: str) -> bool:
    """Names discovery never benchmarks without --function: ``__*`` or containing ``$``.

    The native tool's rule (``AddWorkload``: internal or special functions).
    """
    return function.startswith("__") or "$" in function
