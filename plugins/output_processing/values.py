"""Output values of the last measured invocation: host copies, printing, saving.

Printing follows iree-run-module (``result[0]: hal.buffer_view`` then
``2x3xf32=[2 5 6][8 2E+10 0.2]``; floats as ``%G``, elision with ``...``
after --output_max_element_count elements).
"""

from __future__ import annotations

from dataclasses import dataclass

import iree.runtime as rt
import numpy as np
from ireebench import dtypes


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


def format_element(value, element_type: dtypes.ElementType) -> str:
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
        text = " ".join(format_element(v, element_type) for v in values[:count])
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
