"""Number formatting shared by reporters, as Google Benchmark prints numbers.

Google Benchmark writes numbers with C++ streams and printf; these helpers
give the same text from Python so that reports stay byte-compatible:

- :func:`cpp_stream`: ``std::ostream << double`` (CSV cells, load averages,
  the console's MHz),
- :func:`json_double`: the JSON reporter's ``std::scientific`` with 16
  fractional digits (``7.8407499998434105e+00``; ``null`` for NaN and
  infinities, see there), and :func:`finite_json` for JSON written with
  ``json.dumps``,
- :func:`human_readable`: the console's counters (``152.154k``),
- :func:`format_time`: the console's time columns.
"""

from __future__ import annotations

import math

_BIG_SI = ["k", "M", "G", "T", "P", "E", "Z", "Y"]
_BIG_IEC = ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi"]
_SMALL_SI = ["m", "u", "n", "p", "f", "a", "z", "y"]


def cpp_stream(value: float) -> str:
    """``std::ostream << double`` with the default precision (6, %g-like)."""
    text = format(value, ".6g")
    if "e" in text:
        mantissa, exponent = text.split("e")
        sign = exponent[0]
        digits = exponent[1:].lstrip("0").rjust(2, "0")
        text = f"{mantissa}e{sign}{digits}"
    return text


def json_double(value: float) -> str:
    """A double as Google Benchmark's JSON reporter writes it, but always valid JSON.

    ``std::scientific`` with ``max_digits10 - 1`` (16) fractional digits.
    Google Benchmark writes NaN and infinities as bare ``NaN`` /
    ``Infinity``, which no JSON parser but Python's reads (jq, browsers,
    Go and Rust refuse the whole file); ireebench writes ``null`` for them,
    as JavaScript's ``JSON.stringify`` does: the file stays valid JSON,
    Python reads ``None``, and compare.py, which reads only the times (never
    non-finite), is unaffected.
    """
    value = float(value)
    if not math.isfinite(value):
        return "null"
    return format(value, ".16e")


def finite_json(value):
    """``value`` (parsed JSON) with every NaN and infinity replaced by None, so that
    ``json.dumps(..., allow_nan=False)`` writes valid JSON (see :func:`json_double`)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: finite_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [finite_json(item) for item in value]
    return value


def human_readable(value: float, one_k: int = 1000) -> str:
    """Google Benchmark's HumanReadableNumber (precision 1): 152.154k, 30.5m."""
    sign = ""
    if value < 0:
        sign, value = "-", -value
    threshold = 1.0
    big = threshold * one_k
    if value > big:
        scaled = value
        units = _BIG_IEC if one_k == 1024 else _BIG_SI
        for unit in units:
            scaled /= one_k
            if scaled <= big:
                return f"{sign}{cpp_stream(scaled)}{unit}"
        return f"{sign}{cpp_stream(value)}"
    if value < threshold and value < 0.01:
        scaled = value
        for unit in _SMALL_SI:
            scaled *= one_k
            if scaled >= threshold:
                return f"{sign}{cpp_stream(scaled)}{unit}"
    return f"{sign}{cpp_stream(value)}"


def format_time(value: float) -> str:
    """The console's time column (Google Benchmark's FormatTime)."""
    if value < 1.0:
        return f"{value:10.3f}"
    if value < 10.0:
        return f"{value:10.2f}"
    if value < 100.0:
        return f"{value:10.1f}"
    if value > 9999999999:
        return f"{value:1.4e}"
    return f"{value:10.0f}"
