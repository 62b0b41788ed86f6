"""IREE element type names (as spelled in ``--input``) and their numpy/HAL types."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from iree.runtime import HalElementType


@dataclass(frozen=True)
class ElementType:
    name: str  # IREE spelling: f32, i8, ui16, bf16, i1 ...
    numpy: np.dtype  # storage dtype on the host
    hal: int  # HalElementType value
    is_float: bool = False
    is_bf16: bool = False  # stored as uint16 bit patterns


def _t(name, dtype, hal, **kw):
    return ElementType(name, np.dtype(dtype), int(hal), **kw)


ELEMENT_TYPES: dict[str, ElementType] = {
    t.name: t
    for t in [
        _t("i1", np.bool_, HalElementType.BOOL_8),
        _t("i8", np.int8, HalElementType.INT_8),
        _t("si8", np.int8, HalElementType.SINT_8),
        _t("ui8", np.uint8, HalElementType.UINT_8),
        _t("i16", np.int16, HalElementType.INT_16),
        _t("si16", np.int16, HalElementType.SINT_16),
        _t("ui16", np.uint16, HalElementType.UINT_16),
        _t("i32", np.int32, HalElementType.INT_32),
        _t("si32", np.int32, HalElementType.SINT_32),
        _t("ui32", np.uint32, HalElementType.UINT_32),
        _t("i64", np.int64, HalElementType.INT_64),
        _t("si64", np.int64, HalElementType.SINT_64),
        _t("ui64", np.uint64, HalElementType.UINT_64),
        _t("f16", np.float16, HalElementType.FLOAT_16, is_float=True),
        _t("f32", np.float32, HalElementType.FLOAT_32, is_float=True),
        _t("f64", np.float64, HalElementType.FLOAT_64, is_float=True),
        _t("bf16", np.uint16, HalElementType.BFLOAT_16, is_float=True, is_bf16=True),
    ]
}

# Calling-convention codes of primitive arguments/results -> their type name.
PRIMITIVE_TYPES = {"i": "i32", "I": "i64", "f": "f32", "F": "f64"}

# HAL element type value -> preferred IREE spelling (for printing outputs).
_BY_HAL: dict[int, ElementType] = {}
for _type in ELEMENT_TYPES.values():
    _BY_HAL.setdefault(_type.hal, _type)

# numpy dtype -> element type, for .npy inputs. As IREE's numpy_io.c reads a
# .npy `descr`: kind `b` is a boolean (i1), `i` a signed integer (si8 ...
# si64), `u` an unsigned one (ui8 ... ui64), `f` an IEEE float; so an int32
# array is an si32 tensor and prints as `2xsi32=...`, as the native tools do.
_BY_NUMPY = {
    np.dtype(np.bool_): ELEMENT_TYPES["i1"],
    np.dtype(np.int8): ELEMENT_TYPES["si8"],
    np.dtype(np.uint8): ELEMENT_TYPES["ui8"],
    np.dtype(np.int16): ELEMENT_TYPES["si16"],
    np.dtype(np.uint16): ELEMENT_TYPES["ui16"],
    np.dtype(np.int32): ELEMENT_TYPES["si32"],
    np.dtype(np.uint32): ELEMENT_TYPES["ui32"],
    np.dtype(np.int64): ELEMENT_TYPES["si64"],
    np.dtype(np.uint64): ELEMENT_TYPES["ui64"],
    np.dtype(np.float16): ELEMENT_TYPES["f16"],
    np.dtype(np.float32): ELEMENT_TYPES["f32"],
    np.dtype(np.float64): ELEMENT_TYPES["f64"],
}


def by_name(name: str) -> ElementType | None:
    return ELEMENT_TYPES.get(name)


def by_hal(value: int) -> ElementType | None:
    return _BY_HAL.get(int(value))


def by_numpy(dtype: np.dtype) -> ElementType | None:
    return _BY_NUMPY.get(np.dtype(dtype).newbyteorder("=")) if dtype.kind != "O" else None


def bf16_to_f32(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16(values: np.ndarray) -> np.ndarray:
    """Rounds to nearest even, like IREE's bf16 conversion."""
    as_int = np.asarray(values, dtype=np.float32).view(np.uint32)
    rounding = ((as_int >> 16) & 1) + 0x7FFF
    return ((as_int + rounding) >> 16).astype(np.uint16)
