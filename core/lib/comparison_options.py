"""A library for the comparison flags of ``ireebench compare`` (``--alpha``,
``--confidence``, ``--metric``, ``--threshold``, ``--detectable``, ``--correction``
...) read into :class:`~ireebench.comparison.CompareOptions`: ``compare`` and
``ireebench report`` (which judges as compare does) check them the same way.
"""

from __future__ import annotations

import math

from ireebench.comparison import CompareOptions, parse_threshold
from ireebench.comparison.model import AUTO_METRIC, DEFAULT_CORRECTION, DEFAULT_DETECTABLE
from ireebench.comparison.utest import CORRECTIONS
from ireebench.errors import flag_error


def _level(flag: str, value: float) -> float:
    if not (0.0 < value < 1.0) or math.isnan(value):
        raise flag_error(flag, value, "must be between 0 and 1 (exclusive)")
    return value


def compare_options(params: dict) -> CompareOptions:
    """The checked :class:`CompareOptions` of the parsed flags."""
    alpha = _level("alpha", params["alpha"])
    confidence = params.get("confidence")
    confidence = 1.0 - alpha if confidence is None else _level("confidence", confidence)
    metric = str(params["metric"] or "").strip()
    if not metric:
        raise flag_error("metric", params["metric"], "name a number of the rows: real_time, "
                                                     "cpu_time, device_time, max_bytes_used, "
                                                     "a counter")
    thresholds = tuple(parse_threshold(text) for text in params.get("threshold") or ())
    # A command that reuses these options without the gate's own flags (the
    # report's) judges as compare does by default.
    correction = str(params.get("correction") or DEFAULT_CORRECTION).strip().lower()
    if correction not in CORRECTIONS:
        raise flag_error("correction", params.get("correction"),
                         f"one of {', '.join(CORRECTIONS)}")
    if metric == AUTO_METRIC and params.get("higher_is_better"):
        raise flag_error("metric", metric, "auto compares times: --higher_is_better "
                                           "does not apply")
    return CompareOptions(alpha=alpha, confidence=confidence, metric=metric,
                          thresholds=thresholds,
                          higher_is_better=params.get("higher_is_better"),
                          detectable=_detectable(params.get("detectable")),
                          correction=correction,
                          accept_cannot_judge=bool(params.get("accept_cannot_judge")))


def _detectable(text) -> float:
    """``--detectable=PERCENT``: a percentage >= 0 (None: the default)."""
    value = f"{DEFAULT_DETECTABLE * 100:g}%" if text is None else str(text).strip()
    try:
        percent = float(value[:-1]) if value.endswith("%") else math.nan
    except ValueError:
        percent = math.nan
    if not math.isfinite(percent) or percent < 0:
        raise flag_error("detectable", text, "expected a percentage >= 0 such as 10%")
    return percent / 100.0


__all__ = ["compare_options"]
