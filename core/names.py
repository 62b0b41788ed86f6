"""How a benchmarked function is named in reports: the native tool's rule.

iree-benchmark-module registers each function as ``"BM_" + name`` with
``MeasureProcessCPUTime()->UseRealTime()``, so Google Benchmark reports it
as ``BM_<fn>/process_time/real_time``; ``--benchmark_filter`` matches that
name and ``--benchmark_list_tests`` prints it. Rows a plugin appends under a
benchmark (dispatch statistics) are named ``BM_<fn>/<row>``.

A point of a sweep adds its parameters after the function, as Google
Benchmark's ``ArgNames`` do (``BenchmarkInstance``: the function name,
then ``name:value`` per argument, then the time type):
``BM_forward/bs:4/seq:2048/process_time/real_time``; a suite entry's
``name`` prefixes its rows (``mlp/BM_forward/bs:4/process_time/real_time``).
"""

from __future__ import annotations

PREFIX = "BM_"
TIMING_SUFFIX = "/process_time/real_time"
# Characters with a meaning in the POSIX extended regex of --benchmark_filter.
_ERE_SPECIAL = set("\\.[]()*+?{}|^$")


def format_value(value) -> str:
    """A parameter value as names and ``{NAME}`` substitution spell it.

    Integers plainly (Google Benchmark's ``%" PRId64``), floats in their
    shortest round-trip form (``0.5``, ``1e-05``), booleans ``true``/``false``,
    anything else as its text.
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def params_suffix(params: dict) -> str:
    """``bs:4/seq:2048``: the parameters of a point, in axis order ("" for none)."""
    return "/".join(f"{name}:{format_value(value)}" for name, value in params.items())


def family_name(function: str, params: dict | None = None, prefix: str = "") -> str:
    """``BM_<fn>``, or a point's ``[prefix/]BM_<fn>/bs:4``: the benchmark's family name."""
    name = PREFIX + function
    if params:
        name += "/" + params_suffix(params)
    return f"{prefix}/{name}" if prefix else name


def run_name(function: str, params: dict | None = None, prefix: str = "") -> str:
    """``BM_<fn>[/bs:4]/process_time/real_time``: the reported, filtered and listed name."""
    return family_name(function, params, prefix) + TIMING_SUFFIX


def family_of(run_name_: str) -> str:
    """The family name of a reported name (``BM_add/process_time/real_time`` -> ``BM_add``)."""
    return run_name_.removesuffix(TIMING_SUFFIX)


def function_of(name: str) -> str:
    """The function of a family or run name (``BM_add/process_time/real_time`` -> ``add``;
    ``mlp/BM_add/bs:4/process_time/real_time`` -> ``add``)."""
    parts = name.split("/")
    first = next((part for part in parts if part.startswith(PREFIX)), parts[0])
    return first.removeprefix(PREFIX)


def row_name(family: str, row: str) -> str:
    """``BM_<fn>/<row>``: a row a plugin appends under a benchmark."""
    return f"{family}/{row}"


def is_internal(function: str) -> bool:
    """Names discovery never benchmarks without --function: ``__*`` or containing ``$``.

    The native tool's rule (``AddWorkload``: internal or special functions).
    """
    return function.startswith("__") or "$" in function


def ere_escape(text: str) -> str:
    """``text`` as a literal in Google Benchmark's POSIX extended regex.

    Python's ``re.escape`` is not usable: it writes escapes such as ``\\-``
    that are undefined in a POSIX ERE.
    """
    return "".join("\\" + c if c in _ERE_SPECIAL else c for c in text)


__all__ = [
    "TIMING_SUFFIX", "ere_escape", "family_of", "format_value", "function_of",
    "is_internal", "row_name"
]
