"""``--expected_output`` comparison, as IREE's tools compare.

Mirrors ``iree_tooling_compare_variant_lists`` (runtime/src/iree/tooling/
comparison.cc) and the buffer view matchers it uses
(buffer_view_matchers.c), report lines included:

* a list of the wrong length: ``[FAILED] expected 1 list elements but 2
  provided``;
* ``(ignored)`` (an empty expected value) matches anything;
* buffer views: the metadata first (``[FAILED] result[1]: metadata is f32;
  expected that the view matches 4xf32; expected that the view is equal to
  contents of a view of 4xf32``), then the elements (``[FAILED] result[0]:
  element at index 0 (2) does not match the expected (2.00001); expected that
  the view is equal to contents of a view of 4xf32``), each followed by the
  expected and actual views, printed with at most 1024 elements whatever
  ``--output_max_element_count`` says (the native tool hard-codes 1024 here);
* anything else of different kinds: ``[FAILED] result[0]: variant types
  mismatch; expected hal.buffer_view but got empty``.

Element equality follows ``--equality_mode``: ``approximate`` checks
``abs(actual - expected) <= atol + rtol * abs(expected)`` per float element
(f16, bf16 and f32 in single precision, f64 in double), with the per-type
absolute tolerance (``--expected_f32_threshold`` ...) and ``--expected_rtol``,
NaN equal to NaN and infinities equal to themselves; integers, booleans and
``exact`` mode compare bytes.

Primitive results (``i32=7``) are compared by value, as
``iree_tooling_compare_values`` does, with its report lines (``[FAILED]
result[1]: i32 values differ`` / ``  expected: 8`` / ``  actual: 7``). The
native tool never reaches that function: an inverted condition in
``iree_tooling_compare_variants`` reports every primitive result as
``variant types mismatch; expected i32 but got i32``. That is a deliberate
difference (docs/usage.md).
"""

from __future__ import annotations

import numpy as np
from ireebench import dtypes
from ireebench.inputs import Null, Scalar, Tensor

from .flags import Tolerances
from .values import OutputValue, format_array, format_element, shape_and_type

# iree_tooling_compare_variant_lists passes max_element_count=1024 to every
# comparison, whatever --output_max_element_count is.
COMPARE_MAX_ELEMENTS = 1024

def compare_lists(expected: list, actual: list[OutputValue],
                  tolerances: Tolerances) -> list[str]:
    """The ``[FAILED] ...`` reports of a comparison; empty when everything matched."""
    if len(expected) != len(actual):
        return [f"[FAILED] expected {len(expected)} list elements but {len(actual)} provided"]
    return [report for index, (exp, act) in enumerate(zip(expected, actual))
            if (report := compare(index, exp, act, tolerances))]


def compare(index: int, expected, actual: OutputValue, tolerances: Tolerances) -> str | None:
    """Returns the ``[FAILED] result[i]: ...`` report, or None when they match."""
    where = f"[FAILED] result[{index}]: "
    if isinstance(expected, Null):  # (ignored), (null): an empty expected value
        return None
    if isinstance(expected, Scalar):
        return _compare_primitive(where, expected, actual)
    assert isinstance(expected, Tensor)
    if expected.storage_only or actual.kind != "buffer_view":
        expected_type = "hal.buffer" if expected.storage_only else "hal.buffer_view"
        return where + (f"variant types mismatch; expected {expected_type} but got "
                        f"{variant_type(actual)}")
    described = shape_and_type(expected.array.shape, expected.element_type)
    detail = _buffer_view_mismatch(expected, actual, tolerances)
    if detail is None:
        return None
    return (where + f"{detail}; expected that the view is equal to contents of a view of "
            f"{described}\n  expected:\n"
            f"{format_array(expected.array, expected.element_type, COMPARE_MAX_ELEMENTS)}\n"
            f"  actual:\n"
            f"{format_array(actual.array, actual.element_type, COMPARE_MAX_ELEMENTS)}")


def variant_type(value: OutputValue) -> str:
    """The type name comparison.cc prints for a variant (``i32``, ``hal.buffer_view``, ``empty``)."""
    if value.kind == "null":
        return "empty"
    if value.kind == "buffer_view":
        return "hal.buffer_view"
    return value.type_name


def _compare_primitive(where: str, expected: Scalar, actual: OutputValue) -> str | None:
    type_name = dtypes.PRIMITIVE_TYPES[expected.cconv]
    if actual.kind != "primitive":
        return where + f"variant types mismatch; expected {type_name} but got " \
                       f"{variant_type(actual)}"
    if expected.cconv in "fF":
        storage = np.float32 if expected.cconv == "f" else np.float64
        exp, act = storage(expected.value), storage(actual.value)
        if exp == act:
            return None
        shown = (format(float(exp), "G"), format(float(act), "G"))
    else:
        if int(expected.value) == int(actual.value):
            return None
        shown = (str(int(expected.value)), str(int(actual.value)))
    return where + f"{type_name} values differ\n  expected: {shown[0]}\n  actual: {shown[1]}"


def _buffer_view_mismatch(expected: Tensor, actual: OutputValue,
                          tolerances: Tolerances) -> str | None:
    """The matcher's description of the first difference, or None when equal."""
    if (tuple(expected.array.shape) != tuple(actual.array.shape)
            or expected.element_type.hal != actual.element_type.hal):
        return (f"metadata is {shape_and_type(actual.array.shape, actual.element_type)}; "
                f"expected that the view matches "
                f"{shape_and_type(expected.array.shape, expected.element_type)}")
    exp_flat, act_flat = expected.array.reshape(-1), actual.array.reshape(-1)
    element_type = actual.element_type
    if tolerances.mode == "exact" or not element_type.is_float:
        exp_bits = exp_flat.view(np.dtype(f"u{exp_flat.itemsize}"))
        act_bits = act_flat.view(np.dtype(f"u{act_flat.itemsize}"))
        equal = exp_bits == act_bits
    else:
        equal = _approximately_equal(exp_flat, act_flat, element_type, tolerances)
    if equal.all():
        return None
    bad = int(np.argmin(equal))
    return (f"element at index {bad} ({format_element(act_flat[bad], element_type)}) does "
            f"not match the expected ({format_element(exp_flat[bad], element_type)})")


def _approximately_equal(expected: np.ndarray, actual: np.ndarray,
                         element_type: dtypes.ElementType, tolerances: Tolerances) -> np.ndarray:
    """``abs(actual - expected) <= atol + rtol * abs(expected)``, NaN equal to NaN."""
    if element_type.is_bf16:
        expected, actual = dtypes.bf16_to_f32(expected), dtypes.bf16_to_f32(actual)
    precision = np.float64 if element_type.name == "f64" else np.float32
    expected, actual = expected.astype(precision), actual.astype(precision)
    atol = precision(tolerances.atol.get(element_type.name, 0.0))
    rtol = precision(tolerances.rtol)
    with np.errstate(invalid="ignore", over="ignore"):
        # Infinities match only themselves (inf - inf is NaN, and inf <= inf
        # would let any infinity match); NaN matches NaN.
        finite = np.isfinite(expected) & np.isfinite(actual)
        close = finite & (np.abs(actual - expected) <= atol + rtol * np.abs(expected))
    return close | (expected == actual) | (np.isnan(expected) & np.isnan(actual))
