"""``--expected_output`` comparison, as IREE's tools compare.

``approximate`` mode checks ``|actual - expected| <= atol + rtol * |expected|``
per element with the per-type thresholds (``--expected_f32_threshold`` ...),
NaN equal to NaN; ``exact`` compares bytes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from ireebench import dtypes
from ireebench.inputs import Null, Scalar, Tensor

from .values import OutputValue, format_array, format_element


@dataclass
class Tolerances:
    mode: str = "approximate"
    rtol: float = 1e-5
    atol: dict = None

    @classmethod
    def from_runtime_flags(cls, flags: list[str]) -> Tolerances:
        atol = {"f16": 1e-3, "f32": 1e-4, "f64": 1e-4, "bf16": 1e-2}
        tolerances = cls(atol=atol)
        for flag in flags:
            name, _, text = flag.lstrip("-").partition("=")
            try:
                if name.startswith("expected_") and name.endswith("_threshold"):
                    atol[name[len("expected_"):-len("_threshold")]] = float(text)
                elif name == "expected_rtol":
                    tolerances.rtol = float(text)
                elif name == "equality_mode":
                    tolerances.mode = text.strip('"')
            except ValueError:
                pass
        return tolerances


def compare(index: int, expected, actual: OutputValue, tolerances: Tolerances,
            max_elements: int) -> str | None:
    """Returns a ``[FAILED] result[i]: ...`` message, or None when they match."""
    where = f"[FAILED] result[{index}]: "
    if isinstance(expected, Null):  # (ignored)
        return None
    if isinstance(expected, Scalar):
        if actual.kind != "primitive":
            return where + f"variant types mismatch; expected a primitive but got {actual.kind}"
        exp, act = expected.value, actual.value
        if expected.cconv in "fF" and tolerances.mode != "exact":
            atol = tolerances.atol.get(dtypes.PRIMITIVE_TYPES[expected.cconv], 0.0)
            same = abs(act - exp) <= atol + tolerances.rtol * abs(exp) or (
                math.isnan(exp) and math.isnan(act))
        else:
            same = act == exp
        return None if same else where + f"value {act} does not match the expected {exp}"
    assert isinstance(expected, Tensor)
    if actual.kind != "buffer_view":
        return where + f"variant types mismatch; expected a buffer view but got {actual.kind}"
    exp_text = format_array(expected.array, expected.element_type, max_elements)
    act_text = format_array(actual.array, actual.element_type, max_elements)
    detail = (f"expected that the view is equal to contents of a view of "
              f"{exp_text.split('=', 1)[0]}\n  expected:\n{exp_text}\n  actual:\n{act_text}")
    if (tuple(expected.array.shape) != tuple(actual.array.shape)
            or expected.element_type.name != actual.element_type.name):
        return where + "metadata does not match; " + detail
    exp_flat, act_flat = expected.array.reshape(-1), actual.array.reshape(-1)
    if tolerances.mode == "exact" or not expected.element_type.is_float:
        exp_bits = exp_flat.view(np.dtype(f"u{exp_flat.itemsize}"))
        act_bits = act_flat.view(np.dtype(f"u{act_flat.itemsize}"))
        differs = exp_bits != act_bits
        if not differs.any():
            return None
        bad = int(np.argmax(differs))
    else:
        if expected.element_type.is_bf16:
            exp_f = dtypes.bf16_to_f32(exp_flat).astype(np.float64)
            act_f = dtypes.bf16_to_f32(act_flat).astype(np.float64)
        else:
            exp_f, act_f = exp_flat.astype(np.float64), act_flat.astype(np.float64)
        atol = tolerances.atol.get(expected.element_type.name, 0.0)
        with np.errstate(invalid="ignore"):
            ok = (np.abs(act_f - exp_f) <= atol + tolerances.rtol * np.abs(exp_f)) | (
                np.isnan(exp_f) & np.isnan(act_f))
        if ok.all():
            return None
        bad = int(np.argmin(ok))
    etype = expected.element_type
    return where + (f"element at index {bad} ({format_element(act_flat[bad], etype)}) does not "
                    f"match the expected ({format_element(exp_flat[bad], etype)}); {detail}")
