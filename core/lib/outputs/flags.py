"""The comparison flags of ``--expected_output`` (IREE's comparison.cc), parsed.

Defaults and parsing only, so that the plugin's options and its
``ireebench_configure`` check need neither numpy nor the runtime; the
comparison itself is :mod:`.compare`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

# The flag defaults of comparison.cc, as `iree-benchmark-module --help` prints them.
DEFAULT_THRESHOLDS = {"f16": "0.001", "f32": "0.0001", "f64": "0.0001", "bf16": "0.01"}
DEFAULT_RTOL = "1e-05"
EQUALITY_MODES = ("approximate", "exact")
# Every comparison flag (the output_processing plugin's options) -> its default.
COMPARISON_FLAGS = {
    **{f"expected_{name}_threshold": text for name, text in DEFAULT_THRESHOLDS.items()},
    "expected_rtol": DEFAULT_RTOL,
    "equality_mode": EQUALITY_MODES[0],
}


@dataclass(frozen=True)
class Tolerances:
    """The comparison flags, parsed (``--equality_mode``, ``--expected_*``)."""

    mode: str = "approximate"
    rtol: float = float(DEFAULT_RTOL)
    atol: dict[str, float] = field(
        default_factory=lambda: {name: float(text) for name, text in DEFAULT_THRESHOLDS.items()})


def parse_tolerances(options: dict[str, str]) -> Tolerances:
    """Parses the comparison flags; raises ValueError naming the bad one.

    :param options: flag name (``expected_f32_threshold`` ...) -> text.
    """
    atol = {}
    for name in DEFAULT_THRESHOLDS:
        flag = f"expected_{name}_threshold"
        atol[name] = _tolerance(flag, options[flag])
    rtol = _tolerance("expected_rtol", options["expected_rtol"])
    mode = _unquote(options["equality_mode"])
    if mode not in EQUALITY_MODES:
        raise ValueError(f"--equality_mode={options['equality_mode']}: expected one of "
                         f"{', '.join(EQUALITY_MODES)}")
    return Tolerances(mode=mode, rtol=rtol, atol=atol)


def _unquote(text: str) -> str:
    # `iree-benchmark-module --help` is a flag file that writes string flags
    # quoted (--equality_mode="approximate"); IREE's flag parser strips them.
    text = str(text).strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return text[1:-1]
    return text


def _tolerance(flag: str, text: str) -> float:
    try:
        value = float(str(text).strip())
    except ValueError:
        value = math.nan
    if math.isnan(value) or value < 0:
        raise ValueError(f"--{flag}={text}: expected a number >= 0")
    return value
