"""The ``--input`` grammar of IREE's tools, parsed on the host.

Mirrors ``iree_tooling_parse_variants`` (runtime/src/iree/tooling/function_io.c):

* ``42``, ``-3.14``: a primitive, when the argument is a primitive (cconv
  ``i``/``I``/``f``/``F``).
* ``2x2xi32=1 2 3 4``: a tensor; values separated by spaces, commas or
  brackets (``[[1 2][3 4]]``); no values = zeros; one value = splat;
  integers may be hex (``0x1f``). ``f32=1.5`` and ``xf32=1.5`` (an empty
  shape before the last ``x``, as IREE's Python wrapper writes a 0-d numpy
  array) are 0-d tensors, as ``iree_hal_parse_shape_and_element_type``
  reads them.
* ``2x2xf32=@file.bin`` / ``=+file.bin``: raw bytes from the start of a file,
  or continuing where the previous input read that file.
* ``@f.npy`` / ``+f.npy``: one array from a .npy file (from the start / next);
  ``*f.npy``: every remaining array. Loaded with ``allow_pickle=False``.
* ``&2xf32``: storage (a bare buffer instead of a buffer view).
* ``(null)`` / ``(ignored)``: a zero primitive or a null reference.

Parsing returns :class:`Tensor`/:class:`Scalar`/:class:`Null` values or
raises :class:`UsageError`; nothing else. Its status is the native tool's:
``INVALID_ARGUMENT`` for a value or shape it cannot parse, ``UNKNOWN`` for
a file it cannot open (what IREE's stdio streams return). Turning them into device buffers is
:func:`to_vm_list`, done once before timing.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, field

from . import dtypes
from .errors import INVALID_ARGUMENT, RESOURCE_EXHAUSTED, UNKNOWN, UsageError, flag_error, one_line


@dataclass
class Scalar:
    cconv: str  # i, I, f or F
    value: int | float


@dataclass
class Tensor:
    array: object  # a numpy.ndarray: host storage (bf16 as uint16 bits)
    element_type: dtypes.ElementType
    storage_only: bool = False  # `&`: pass the buffer, not a buffer view
    spec: str = ""  # the --input it came from, for error messages


@dataclass
class Null:
    cconv: str


InputValue = Scalar | Tensor | Null

_INT_LIMITS = {"i": (-(2**31), 2**32 - 1), "I": (-(2**63), 2**64 - 1)}
_SEPARATORS = re.compile(r"[\s,\[\]]+")
_MAX_ELEMENTS = 1 << 32


@dataclass(frozen=True)
class _Spec:
    """One value string and the flag it came from: errors name both."""

    flag: str  # "input", or "expected_output" (same grammar)
    text: str

    def error(self, reason: str, status: str = INVALID_ARGUMENT) -> UsageError:
        return flag_error(self.flag, self.text, reason, status)


class _Streams:
    """Open files shared by the inputs of one parse, for ``+``/``*``."""

    def __init__(self):
        self._files: dict[str, object] = {}

    def open(self, path: str, append: bool, spec: _Spec):
        handle = self._files.get(path)
        if handle is None:
            try:
                handle = open(path, "rb")  # noqa: SIM115 - closed by close()
            except FileNotFoundError:
                raise spec.error(f"file not found: {path}", UNKNOWN) from None
            except OSError as exc:
                raise spec.error(f"cannot read {path}: {exc.strerror}", UNKNOWN) from None
            self._files[path] = handle
        elif not append:
            handle.seek(0)
        return handle

    def close(self):
        for handle in self._files.values():
            handle.close()
        self._files.clear()


def parse_inputs(specs: list[str] | tuple[str, ...], argument_types: list[str],
                 flag: str = "input", check=None) -> list[InputValue]:
    """Parses ``--input`` strings against the function's argument types.

    :param flag: the flag the strings came from (``expected_output`` uses the
        same grammar); error messages name it.
    """
    streams = _Streams()
    values: list[InputValue] = []
    try:
        for raw in specs:
            spec = _Spec(flag, raw.strip())
            remaining = argument_types[len(values) :]
            position = functools.partial(check, len(values)) if check else None
            for value in _parse_one(spec, remaining, streams, position):
                if isinstance(value, Tensor):
                    value.spec = spec.text
                values.append(value)
    finally:
        streams.close()
    return values


def _expect(remaining: list[str], spec: _Spec) -> str:
    if not remaining:
        raise spec.error("function expected fewer input values")
    return remaining[0]


def _parse_one(spec: _Spec, remaining: list[str], streams: _Streams,
               check=None) -> list[InputValue]:
    text = spec.text
    if not text:
        raise spec.error("no value specified for input")
    if text in ("(null)", "(ignored)"):
        return [Null(_expect(remaining, spec))]
    if text[0] in "@+*":
        return _parse_npy(spec, remaining, streams)
    if text.startswith("&"):
        _expect_ref(remaining, spec)
        tensor = parse_tensor(text[1:], spec, streams)  # storage: not a view, not checked
        tensor.storage_only = True
        return [tensor]
    cconv = _expect(remaining, spec)
    if cconv in dtypes.PRIMITIVE_TYPES:
        return [_parse_primitive(spec, cconv)]
    if cconv != "r":
        raise spec.error(f"unsupported argument type `{cconv}`")
    if "=" not in text and "x" not in text:
        raise spec.error(
            "invalid tensor specification, requires at least a shape/type (`4x2xf32=...`)"
        )
    return [parse_tensor(text, spec, streams, check)]


def _parse_int(text: str) -> int:
    return int(text, 0) if text.lower().lstrip("+-").startswith("0x") else int(text, 10)


def _parse_primitive(spec: _Spec, cconv: str) -> Scalar:
    type_name = dtypes.PRIMITIVE_TYPES[cconv]
    text = spec.text
    # Accept an explicit `i32=42` spelling too (what the tools print).
    if "=" in text:
        prefix, text = text.split("=", 1)
        if prefix.strip() not in (type_name, ""):
            raise spec.error(
                f"function signature mismatch: argument is {type_name}, value is {prefix.strip()}"
            )
    text = text.strip()
    try:
        if cconv in "iI":
            value = _parse_int(text)
            low, high = _INT_LIMITS[cconv]
            if not low <= value <= high:
                raise ValueError
            return Scalar(cconv, value)
        return Scalar(cconv, float(text))
    except ValueError:
        raise spec.error(f"parsing value `{text}` as {type_name}") from None


def _parse_shape_and_type(metadata: str, spec: _Spec) -> tuple[list[int], dtypes.ElementType]:
    # As iree_hal_parse_shape_and_element_type: the type follows the last `x`;
    # an empty shape before it (`xf32`) is rank 0, like no `x` at all (`f32`).
    import numpy as np

    shape_text, _, type_name = metadata.strip().rpartition("x")
    type_name = type_name.strip()
    element_type = dtypes.by_name(type_name)
    if element_type is None:
        raise spec.error(
            f"unknown element type `{type_name}` (known: {', '.join(dtypes.ELEMENT_TYPES)})"
        )
    shape = []
    for dim in shape_text.split("x") if shape_text.strip() else []:
        dim = dim.strip()
        # isdigit() alone accepts "²" and other digits int() refuses.
        if not (dim.isascii() and dim.isdigit()):
            raise spec.error(f"invalid shape dimension `{dim}`")
        shape.append(int(dim))
    # Zero dims do not excuse huge others: numpy cannot even shape such an array.
    if int(np.prod([max(dim, 1) for dim in shape], dtype=np.float64)) > _MAX_ELEMENTS:
        raise spec.error(f"shape {metadata} is too large", RESOURCE_EXHAUSTED)
    return shape, element_type


def _check_brackets(text: str, spec: _Spec) -> None:
    depth = 0
    for char in text:
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth < 0:
                break
    if depth != 0:
        raise spec.error("unbalanced brackets in values")


def _convert_values(tokens: list[str], element_type: dtypes.ElementType,
                    spec: _Spec):  # a numpy.ndarray
    import numpy as np

    try:
        if element_type.is_float:
            floats = np.array([float(t) for t in tokens], dtype=np.float64)
            if element_type.is_bf16:
                return dtypes.f32_to_bf16(floats.astype(np.float32))
            with np.errstate(over="ignore"):
                return floats.astype(element_type.numpy)
        ints = [_parse_int(t) for t in tokens]
    except ValueError as exc:
        bad = next((t for t in tokens if not _is_number(t, element_type)), str(exc))
        raise spec.error(f"parsing value `{bad}` as {element_type.name}") from None
    if element_type.name == "i1":
        return np.array([i != 0 for i in ints], dtype=np.bool_)
    info = np.iinfo(element_type.numpy)
    # Signless integers accept the unsigned range too (bit patterns), like IREE.
    low = info.min
    high = info.max if element_type.name.startswith(("si", "ui")) else (1 << info.bits) - 1
    for value in ints:
        if not low <= value <= high:
            raise spec.error(f"value `{value}` out of range for {element_type.name}")
    bits = np.array([v & ((1 << info.bits) - 1) for v in ints], dtype=np.uint64)
    return bits.astype(np.dtype(f"u{info.bits // 8}")).view(element_type.numpy)


def _is_number(token: str, element_type: dtypes.ElementType) -> bool:
    try:
        float(token) if element_type.is_float else _parse_int(token)
        return True
    except ValueError:
        return False


def parse_tensor(text: str, spec: _Spec, streams: _Streams | None = None,
                 check=None) -> Tensor:
    """Parses ``SHAPExTYPE[=values|@file|+file]`` into a host tensor."""
    try:
        return _parse_tensor(text, spec, streams, check)
    except MemoryError:
        # A shape under the element limit can still exceed the host's memory.
        raise spec.error("not enough host memory for this tensor", RESOURCE_EXHAUSTED) from None


def _parse_tensor(text: str, spec: _Spec, streams: _Streams | None, check=None) -> Tensor:
    import numpy as np

    metadata, has_values, contents = text.partition("=")
    shape, element_type = _parse_shape_and_type(metadata, spec)
    if check is not None:  # before a single element is built
        check(shape, element_type.name, spec.text)
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    contents = contents.strip()
    if has_values and contents[:1] in ("@", "+"):
        if streams is None:
            raise spec.error("file contents are not allowed here")
        path = contents[1:]
        handle = streams.open(path, append=contents[0] == "+", spec=spec)
        nbytes = count * element_type.numpy.itemsize
        data = handle.read(nbytes)
        if len(data) != nbytes:
            raise spec.error(f"{path} has {len(data)} bytes left, {nbytes} needed for {metadata}")
        array = np.frombuffer(data, dtype=element_type.numpy).reshape(shape).copy()
        return Tensor(array, element_type)
    _check_brackets(contents, spec)
    tokens = [t for t in _SEPARATORS.split(contents) if t]
    if not tokens:
        array = np.zeros(count, dtype=element_type.numpy)
    else:
        values = _convert_values(tokens, element_type, spec)
        if len(values) == 1:
            array = np.full(count, values[0], dtype=element_type.numpy)
        elif len(values) == count:
            array = values
        else:
            raise spec.error(
                f"value count mismatch: {metadata} needs {count} values, got {len(values)}"
            )
    return Tensor(array.reshape(shape), element_type)


def _load_npy(handle, path: str, spec: _Spec) -> Tensor:
    import numpy as np

    try:
        array = np.load(handle, allow_pickle=False)
    except Exception as exc:  # noqa: BLE001 - a corrupt header raises anything
        # (ValueError, EOFError, tokenize.TokenError, MemoryError ...); the
        # file is data, so every failure is the user's file, never a crash.
        detail = one_line(exc) or type(exc).__name__
        raise spec.error(f"cannot load {path}: {detail}") from None
    if not isinstance(array, np.ndarray):
        raise spec.error(f"{path} is not a .npy array")
    element_type = dtypes.by_numpy(array.dtype)
    if element_type is None:
        raise spec.error(f"{path}: unsupported numpy dtype {array.dtype}")
    # np.array, not np.ascontiguousarray: the latter makes a 0-d array 1-d,
    # and a 0-d array is a 0-d tensor (`f32=2.5`), as IREE's numpy_io reads it.
    return Tensor(np.array(array, dtype=element_type.numpy, order="C"), element_type)


def _parse_npy(spec: _Spec, remaining: list[str], streams: _Streams) -> list[InputValue]:
    mode, path = spec.text[0], spec.text[1:]
    if not path.endswith(".npy"):
        raise spec.error("only numpy (.npy) files are supported for metadata-less variant I/O")
    handle = streams.open(path, append=mode != "@", spec=spec)
    if mode != "*":
        _expect_ref(remaining, spec)
        return [_load_npy(handle, path, spec)]
    values: list[InputValue] = []
    size = os.fstat(handle.fileno()).st_size
    while handle.tell() < size:
        _expect_ref(remaining[len(values) :], spec)
        values.append(_load_npy(handle, path, spec))
    return values


def _expect_ref(remaining: list[str], spec: _Spec) -> None:
    """The next argument must be a reference (a tensor, storage or .npy array)."""
    cconv = _expect(remaining, spec)
    if cconv != "r":
        raise spec.error(
            f"function signature mismatch: expected cconv type `{cconv}` but provided type `r`"
        )


@dataclass
class PreparedInputs:
    """Inputs materialized once on the device, ready for every invocation."""

    vm_list: object  # iree.runtime.VmVariantList
    items: list = field(default_factory=list)  # (push method name, value) pairs

    def clone(self, extra_capacity: int = 0):
        """A new VmVariantList with the same values (for async invocations)."""
        import iree.runtime as rt

        clone = rt.VmVariantList(len(self.items) + extra_capacity)
        for method, value in self.items:
            getattr(clone, method)(value)
        return clone


def to_vm_list(values: list[InputValue], device) -> PreparedInputs:
    """Uploads host values into device buffers and a VM argument list."""
    import iree.runtime as rt
    import numpy as np

    items = []
    null = None  # the null reference, made once for every `(null)` argument
    for value in values:
        if isinstance(value, Scalar):
            method = "push_int" if value.cconv in "iI" else "push_float"
            items.append((method, value.value))
        elif isinstance(value, Null):
            if value.cconv in "iI":
                items.append(("push_int", 0))
            elif value.cconv in "fF":
                items.append(("push_float", 0.0))
            else:
                if null is None:
                    null = null_reference(device)
                items.append(("push_ref", null))
        else:
            buffer_view = device.allocator.allocate_buffer_copy(
                memory_type=rt.MemoryType.DEVICE_LOCAL,
                allowed_usage=rt.BufferUsage.DEFAULT | rt.BufferUsage.MAPPING,
                device=device,
                buffer=np.ascontiguousarray(value.array).reshape(-1)
                if value.array.ndim == 0
                else np.ascontiguousarray(value.array),
                element_type=value.element_type.hal,
            )
            if value.array.ndim == 0:
                buffer_view = rt.HalBufferView(buffer_view.get_buffer(), [], value.element_type.hal)
            ref = buffer_view.get_buffer() if value.storage_only else buffer_view
            items.append(("push_ref", ref))
    vm_list = rt.VmVariantList(max(len(items), 1))
    for method, item in items:
        getattr(vm_list, method)(item)
    return PreparedInputs(vm_list, items)


def prepare_inputs(values, session, argument_types: list[str] | None = None) -> PreparedInputs:
    """Numpy arrays and numbers as a kind's prepared inputs, uploaded once.

    For a kind that makes its own inputs (``InvocationKind.build_inputs``):
    no ``--input`` text, no ``.npy`` round trip. Each value is a numpy array
    (a tensor argument: its dtype gives the element type; ``bool`` is i1),
    an ``int`` or a ``float`` (a primitive argument: ``argument_types``, the
    function's calling convention codes such as ``["r", "i"]``, says i32 or
    i64, f32 or f64; without it ints are i32 and floats f32), or a value
    :func:`parse_inputs` returned.
    """
    import numpy as np

    prepared: list[InputValue] = []
    for index, value in enumerate(values):
        cconv = argument_types[index] if argument_types and index < len(argument_types) else ""
        if isinstance(value, (Scalar, Tensor, Null)):
            prepared.append(value)
        elif isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
            array = np.asarray(value)
            element_type = dtypes.by_numpy(array.dtype)
            if element_type is None:
                raise UsageError(f"input {index}: unsupported numpy dtype {array.dtype}")
            prepared.append(Tensor(np.ascontiguousarray(array, dtype=element_type.numpy),
                                   element_type, spec=f"<array {index}>"))
        elif isinstance(value, (int, np.integer)):
            prepared.append(Scalar(cconv if cconv in ("i", "I") else "i", int(value)))
        else:
            prepared.append(Scalar(cconv if cconv in ("f", "F") else "f", float(value)))
    return to_vm_list(prepared, session.device)


# An ordinal no device list reaches: hal.devices.get returns a null reference for it.
_NO_DEVICE = 2**31 - 1


def null_reference(device):
    """A reference to nothing, to pass a ``(null)`` reference argument.

    The native tool pushes ``iree_vm_ref_null()`` into the argument list
    (``iree_tooling_parse_null_into``), which the callee receives as a null
    ``!hal.buffer_view`` (or any other reference type). The Python bindings
    have no such value: ``VmVariantList.push_ref(None)`` is refused and every
    ``VmRef`` they hand out refers to an object. The narrowest way found to
    make one with the bindings alone:

    1. ``hal.devices.get`` of the HAL module returns a null reference for an
       ordinal past the device count; invoking it leaves an empty element in
       its result list;
    2. a Python-defined VM module (``PyModuleInterface``) function taking one
       reference (cconv ``0r_v``), invoked with that list, receives the null
       reference as a ``VmRef`` (``<VmRef NULL>``);
    3. ``push_ref`` of that ``VmRef`` stores an empty element, exactly what
       ``iree_vm_list_push_ref_retain(list, &null_ref)`` stores natively.

    The modules live in a private VM instance and context released on return;
    the null reference owns nothing.
    """
    import iree.runtime as rt

    captured: list = []
    instance = rt.VmInstance()
    hal_module = rt.create_hal_module(instance, device)
    interface = rt.PyModuleInterface("ireebench_null", lambda _module: None)
    interface.export("capture", "0r_v", lambda _state, ref: captured.append(ref))
    capture_module = interface.create()
    devices_get = hal_module.lookup_function("devices.get")
    capture = capture_module.lookup_function("capture")
    if devices_get is None or capture is None:
        raise UsageError("--input=(null): this iree.runtime cannot make a null reference "
                         "(its HAL module has no devices.get)")
    context = rt.VmContext(instance, [hal_module, capture_module])
    ordinal = rt.VmVariantList(1)
    ordinal.push_int(_NO_DEVICE)
    nulls = rt.VmVariantList(1)
    context.invoke(devices_get, ordinal, nulls)
    context.invoke(capture, nulls, rt.VmVariantList(0))
    if len(captured) != 1 or repr(captured[0]) != "<VmRef NULL>":
        raise UsageError("--input=(null): this iree.runtime cannot make a null reference "
                         f"(hal.devices.get returned {nulls!r})")
    return captured[0]


__all__ = [
    "Null", "PreparedInputs", "Scalar", "Tensor", "parse_inputs", "prepare_inputs",
    "to_vm_list"
]
