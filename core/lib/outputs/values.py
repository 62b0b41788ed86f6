"""Output values of the last measured invocation: host copies, printing, saving.

Printing follows ``iree_tooling_format_variant`` (runtime/src/iree/tooling/
function_io.c): ``result[0]: hal.buffer_view`` then ``2x3xf32=[2 5 6][8 2E+10
0.2]`` (elements as ``iree_hal_format_element``: floats ``%G``, elision with
``...`` after --output_max_element_count elements), primitives ``i32=7`` /
``f32=%g``, ``(null)`` for an empty value, i1 elements as hex bytes
(``01 00``), a ``vm.list`` as ``child_list[i]: ...`` lines, and ``<ref
type>`` / ``(no printer)`` for other references.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import iree.runtime as rt
import numpy as np
from ireebench import dtypes

# "<VmRef hal.buffer at 0x...>": the bindings name a reference's type only there.
_REF_TYPE = re.compile(r"^<VmRef (?P<type>\S+) at ")


@dataclass
class OutputValue:
    """A host copy of one result."""

    kind: str  # "buffer_view", "primitive", "null", "list", "other"
    # buffer views (bf16 as uint16 bits); the bytes of a hal.buffer/vm.buffer as i8
    array: np.ndarray | None = None
    element_type: dtypes.ElementType | None = None
    value: int | float | None = None  # primitives
    type_name: str = ""  # i32, f32 ... for primitives; the ref type name otherwise
    children: list[OutputValue] | None = None  # the elements of a vm.list


def snapshot(vm_list, device, result_types=()) -> list[OutputValue]:
    """Copies the results to host memory so nothing can overwrite them later.

    As the native tool's ``SnapshotList``, nested lists are copied too.

    :param result_types: the calling convention of each result (``i``,
        ``f``, ``r`` ...), which names the type of primitive results.
    """
    values = []
    if vm_list is None:
        return values
    for index in range(vm_list.size):
        item = vm_list.get_variant(index)
        cconv = result_types[index] if index < len(result_types) else ""
        if item is None or _is_null_ref(item):
            values.append(OutputValue("null"))
        elif isinstance(item, (bool, int, float)):
            values.append(OutputValue("primitive", value=item,
                                      type_name=_value_type(vm_list, index, cconv, item)))
        else:
            values.append(_snapshot_ref(vm_list, index, item, device))
    return values


def _value_type(vm_list, index: int, cconv: str, item) -> str:
    """i32, i64, f32 or f64: from the calling convention, else from the list element."""
    if cconv in dtypes.PRIMITIVE_TYPES:
        return dtypes.PRIMITIVE_TYPES[cconv]
    try:  # elements of nested lists: the bindings name the value type only here
        record = vm_list.get_serialized_trace_value(index)
        return next(key for key in record if key != "type")
    except Exception:  # noqa: BLE001 - no record: guess from the Python type
        return "f32" if isinstance(item, float) else "i32"


def _is_null_ref(item) -> bool:
    return isinstance(item, rt.VmRef) and repr(item) == "<VmRef NULL>"


def _ref_type_name(item) -> str:
    match = _REF_TYPE.match(repr(item))
    return match.group("type") if match else type(item).__name__


def _snapshot_ref(vm_list, index: int, item, device) -> OutputValue:
    if item.isinstance(rt.VmVariantList):
        return OutputValue("list", type_name=_ref_type_name(item),
                           children=snapshot(vm_list.get_as_list(index), device))
    if item.isinstance(rt.HalBuffer):
        # Written as an i8 array of its bytes (iree_tooling_write_variants).
        buffer = vm_list.get_as_object(index, rt.HalBuffer)
        view = rt.HalBufferView(buffer, [buffer.byte_length()], rt.HalElementType.INT_8)
        return OutputValue("other", type_name=_ref_type_name(item),
                           array=_host_copy(device, view, dtypes.ELEMENT_TYPES["i8"]))
    if item.isinstance(rt.VmBuffer):
        data = bytes(memoryview(vm_list.get_as_object(index, rt.VmBuffer)))
        return OutputValue("other", type_name=_ref_type_name(item),
                           array=np.frombuffer(data, dtype=np.int8).copy())
    if not item.isinstance(rt.HalBufferView):
        return OutputValue("other", type_name=_ref_type_name(item))
    view = vm_list.get_as_object(index, rt.HalBufferView)
    element_type = dtypes.by_hal(view.element_type)
    if element_type is None:
        return OutputValue("other", type_name="hal.buffer_view")
    return OutputValue("buffer_view", array=_host_copy(device, view, element_type),
                       element_type=element_type)


def _host_copy(device, view, element_type: dtypes.ElementType) -> np.ndarray:
    """The view's elements in the host storage dtype (bf16 as its uint16 bits).

    ``override_dtype`` would convert values (bf16 1.5 -> uint16 1), so the
    array comes in its natural dtype and is reinterpreted, bits unchanged.
    """
    try:
        host = rt.DeviceArray(device, view, implicit_host_transfer=True).to_host()
    except Exception:  # noqa: BLE001 - no numpy dtype for it (bf16 without ml_dtypes)
        host = rt.DeviceArray(device, view, implicit_host_transfer=True,
                              override_dtype=element_type.numpy).to_host()
    array = np.array(host, copy=True).reshape(tuple(view.shape))
    if array.dtype == element_type.numpy:
        return array
    if array.dtype.itemsize == element_type.numpy.itemsize:
        return array.view(element_type.numpy)
    return array.astype(element_type.numpy)


def format_element(value, element_type: dtypes.ElementType) -> str:
    """One element as ``iree_hal_format_element`` prints it (floats ``%G``)."""
    if element_type.is_bf16:
        value = dtypes.bf16_to_f32(np.array([value], dtype=np.uint16))[0]
    if element_type.is_float:
        return format(float(value), "G")
    if element_type.name == "i1":
        # BOOL_8 has no case in iree_hal_format_element: printed as hex bytes.
        return f"{int(value):02X}"
    return str(int(value))


def shape_and_type(shape, element_type: dtypes.ElementType) -> str:
    """``2x3xf32``, or ``f32`` for a 0-d view (iree_hal_append_shape_and_element_type_string)."""
    return "x".join([*(str(dim) for dim in shape), element_type.name])


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

    return f"{shape_and_type(array.shape, element_type)}={recurse(array)}"


def format_value(value: OutputValue, max_elements: int) -> str:
    """The body printed after ``result[i]: `` (type line + contents)."""
    if value.kind == "primitive":
        # IREE_PRINT_VARIANT_CASE_F prints primitives with %g (tensors use %G).
        body = format(value.value, "g") if value.type_name.startswith("f") else str(value.value)
        return f"{value.type_name}={body}"
    if value.kind == "buffer_view":
        return "hal.buffer_view\n" + format_array(value.array, value.element_type, max_elements)
    if value.kind == "null":
        return "(null)"
    if value.kind == "list":
        # iree_tooling_format_variants("child_list", ...): one line per element.
        return value.type_name + "\n" + "".join(
            f"child_list[{index}]: {format_value(child, max_elements)}\n"
            for index, child in enumerate(value.children))
    return f"{value.type_name}\n(no printer)"


def print_results(values: list[OutputValue], max_elements: int, stream) -> None:
    for index, value in enumerate(values):
        stream.write(f"result[{index}]: {format_value(value, max_elements)}\n")


def to_numpy(value: OutputValue) -> np.ndarray:
    """The array ``--output`` writes, as ``iree_tooling_create_buffer_view_from_variant``.

    A primitive is a 0-d array of its type; an empty value a zero-length i8
    array (which keeps the values of a .npy file in order); a hal.buffer or
    vm.buffer an i8 array of its bytes.
    """
    if value.kind == "buffer_view":
        return value.array
    if value.kind == "primitive":
        return np.array(value.value, dtype=dtypes.ELEMENT_TYPES[value.type_name].numpy)
    if value.kind == "null":
        return np.zeros(0, dtype=np.int8)
    if value.kind == "other" and value.array is not None:  # hal.buffer, vm.buffer
        return value.array
    raise ValueError("unsupported output source type; expected: !hal.buffer, "
                     f"!hal.buffer_view, !vm.buffer (got {value.type_name})")
