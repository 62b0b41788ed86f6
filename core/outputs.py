"""Output values of the last measured invocation: copy, print, save, compare.

Printing follows iree-run-module (``result[0]: hal.buffer_view`` then
``2x3xf32=[2 5 6][8 2E+10 0.2]``; floats as ``%G``, elision with ``...``
after --output_max_element_count elements). Comparison follows IREE's
``--expected_output`` rules: ``approximate`` mode checks
``|actual - expected| <= atol + rtol * |expected|`` per element with the
per-type thresholds (``--expected_f32_threshold`` ...), NaN equal to NaN;
``exact`` compares bytes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import dtypes
from .inputs import Null, Scalar, Tensor


@dataclass
class OutputValue:
    """A host copy of one result."""

    kind: str  # "buffer_view", "primitive", "null", "other"
    array: np.ndarray | None = None  # buffer views (bf16 as uint16 bits)
    element_type: dtypes.ElementType | None = None
    value: int | float | None = None  # primitives
    type_name: str = ""  # i32, f32 ... for primitives; ref type name otherwise


def snapshot(vm_list, device, result_types: str = "") -> list[OutputValue]:
    """Copies the results to host memory so nothing can overwrite them later."""
    import iree.runtime as rt

    values = []
    if vm_list is None:
        return values
    for index in range(vm_list.size):
        item = vm_list.get_variant(index)
        cconv = result_types[index] if index < len(result_types) else ""
        if item is None:
            values.append(OutputValue("null"))
        elif isinstance(item, (bool, int, float)):
            name = dtypes.PRIMITIVE_TYPES.get(cconv, "f32" if isinstance(item, float) else "i32")
            values.append(OutputValue("primitive", value=item, type_name=name))
        else:
            try:
                view = vm_list.get_as_object(index, rt.HalBufferView)
            except Exception:  # noqa: BLE001 - not a buffer view
                values.append(OutputValue("other", type_name=type(item).__name__))
                continue
            element_type = dtypes.by_hal(view.element_type)
            if element_type is None:
                values.append(OutputValue("other", type_name="hal.buffer_view"))
                continue
            host = rt.DeviceArray(device, view, implicit_host_transfer=True,
                                  override_dtype=element_type.numpy).to_host()
            values.append(OutputValue("buffer_view", array=np.array(host, copy=True),
                                      element_type=element_type))
    return values


def _format_element(value, element_type: dtypes.ElementType) -> str:
    if element_type.is_bf16:
        value = dtypes.bf16_to_f32(np.array([value], dtype=np.uint16))[0]
    if element_type.is_float:
        return format(float(value), "G")
    return str(int(value))


def format_array(array: np.ndarray, element_type: dtypes.ElementType, max_elements: int) -> str:
    """``2x3xf32=[2 5 6][8 2E+10 0.2]`` like iree_hal_buffer_view_format."""
    budget = [max_elements]

    def leaf(values) -> str:
        count = min(budget[0], len(values))
        text = " ".join(_format_element(v, element_type) for v in values[:count])
        budget[0] -= count
        return text + ("..." if count < len(values) else "")

    def recurse(sub: np.ndarray) -> str:
        if sub.ndim <= 1:
            return leaf(sub.reshape(-1))
        return "".join(f"[{recurse(row)}]" for row in sub)

    shape = "x".join(str(d) for d in array.shape)
    prefix = f"{shape}x{element_type.name}" if shape else element_type.name
    return f"{prefix}={recurse(array)}"


def format_value(value: OutputValue, max_elements: int) -> str:
    """The body printed after ``result[i]: `` (type line + contents)."""
    if value.kind == "primitive":
        body = format(value.value, "G") if value.type_name.startswith("f") else str(value.value)
        return f"{value.type_name}={body}"
    if value.kind == "buffer_view":
        return "hal.buffer_view\n" + format_array(value.array, value.element_type, max_elements)
    if value.kind == "null":
        return "(null)"
    return f"{value.type_name}\n(no printer)"


def print_results(values: list[OutputValue], max_elements: int, stream) -> None:
    for index, value in enumerate(values):
        stream.write(f"result[{index}]: {format_value(value, max_elements)}\n")


def to_numpy(value: OutputValue) -> np.ndarray:
    if value.kind == "buffer_view":
        return value.array
    if value.kind == "primitive":
        return np.array(value.value, dtype=dtypes.ELEMENT_TYPES[value.type_name].numpy)
    raise ValueError(f"cannot write a {value.type_name or value.kind} value")


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
    return where + (f"element at index {bad} ({_format_element(act_flat[bad], etype)}) does not "
                    f"match the expected ({_format_element(exp_flat[bad], etype)}); {detail}")
