"""IREE element type names (as spelled in ``--input``) and their numpy/HAL types."""

from __future__ import annotations

import functools
from dataclasses import dataclass


@dataclass(frozen=True)
class ElementType:
    """An element type. Its numpy and HAL types are looked up when first asked, so
    that parsing a type (a signature, ``--input``'s grammar) imports neither numpy
    nor the IREE runtime."""

    name: str  # IREE spelling: f32, i8, ui16, bf16, i1 ...
    dtype_name: str  # numpy's name of the host storage dtype (bf16 as uint16 bits)
    hal_name: str  # the HalElementType member
    is_float: bool = False
    is_bf16: bool = False  # stored as uint16 bit patterns

    @property
    def numpy(self):
        """The host storage dtype (numpy.dtype)."""
        return _numpy_dtype(self.dtype_name)

    @property
    def hal(self) -> int:
        """The HalElementType value."""
        from iree.runtime import HalElementType

        return int(getattr(HalElementType, self.hal_name))


@functools.cache
def _numpy_dtype(name: str):
    import numpy as np

    return np.dtype(name)


def _t(name, dtype, hal, **kw):
    return ElementType(name, dtype, hal, **kw)


ELEMENT_TYPES: dict[str, ElementType] = {
    t.name: t
    for t in [
        _t("i1", "bool", "BOOL_8"),
        _t("i8", "int8", "INT_8"),
        _t("si8", "int8", "SINT_8"),
        _t("ui8", "uint8", "UINT_8"),
        _t("i16", "int16", "INT_16"),
        _t("si16", "int16", "SINT_16"),
        _t("ui16", "uint16", "UINT_16"),
        _t("i32", "int32", "INT_32"),
        _t("si32", "int32", "SINT_32"),
        _t("ui32", "uint32", "UINT_32"),
        _t("i64", "int64", "INT_64"),
        _t("si64", "int64", "SINT_64"),
        _t("ui64", "uint64", "UINT_64"),
        _t("f16", "float16", "FLOAT_16", is_float=True),
        _t("f32", "float32", "FLOAT_32", is_float=True),
        _t("f64", "float64", "FLOAT_64", is_float=True),
        _t("bf16", "uint16", "BFLOAT_16", is_float=True, is_bf16=True),
    ]
}

# Calling-convention codes of primitive arguments/results -> their type name.
PRIMITIVE_TYPES = {"i": "i32", "I": "i64", "f": "f32", "F": "f64"}


def by_name(name: str) -> ElementType | None:
    return ELEMENT_TYPES.get(name)


def by_hal(value: int) -> ElementType | None:
    return _by_hal().get(int(value))


@functools.cache
def _by_hal() -> dict[int, ElementType]:
    """HAL element type value -> preferred IREE spelling (for printing outputs)."""
    table: dict[int, ElementType] = {}
    for element_type in ELEMENT_TYPES.values():
        table.setdefault(element_type.hal, element_type)
    return table


def by_numpy(dtype) -> ElementType | None:
    import numpy as np

    return _by_numpy().get(np.dtype(dtype).newbyteorder("=")) if dtype.kind != "O" else None


@functools.cache
def _by_numpy() -> dict:
    # numpy dtype -> element type, for .npy inputs. As IREE's numpy_io.c reads a
    # .npy `descr`: kind `b` is a boolean (i1), `i` a signed integer (si8 ...
    # si64), `u` an unsigned one (ui8 ... ui64), `f` an IEEE float; so an int32
    # array is an si32 tensor and prints as `2xsi32=...`, as the native tools do.
    import numpy as np

    return {
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


def bf16_to_f32(bits):
    import numpy as np

    return (bits.astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16(values):
    """Rounds to nearest even, like IREE's bf16 conversion."""
    import numpy as np

    as_int = np.asarray(values, dtype=np.float32).view(np.uint32)
    rounding = ((as_int >> 16) & 1) + 0x7FFF
    return ((as_int + rounding) >> 16).astype(np.uint16)


__all__ = [
    "by_name"
]
