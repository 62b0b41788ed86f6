"""Names in a .vmfb that are not valid UTF-8, made loadable for the Python runtime.

The native tools run a module whose function name or reflection attribute
is not valid UTF-8 (they never decode names); the Python bindings cannot:
``VmModule.function_names`` and ``VmFunction.reflection`` raise, and
``lookup_function`` takes only valid strings. So, before the in-process
session loads a module (:func:`ireebench._modules.open_vm_module`), :func:`repaired_names`
reads the strings the bindings decode — the module name, the exported
function names and the reflection attributes of the bytecode module's
flatbuffer (``iree/schemas/bytecode_module_def.fbs``) — and, only if one
is not valid UTF-8, makes a second copy where each undecodable byte is a
``?``, same length, nothing else touched. The benchmark keeps the original
name (as Python spells undecodable bytes: surrogate escapes), which the
reports write back as the original bytes (JSON as ``\\udcXX``), and which
the native passes, reading the unpatched bytes, understand.

The reader knows just enough of the flatbuffer format for those strings; a
module it cannot read is left as it is (the runtime then says what is
wrong).
"""

from __future__ import annotations

import struct

# BytecodeModuleDef fields (bytecode_module_def.fbs), in declaration order.
_MODULE_NAME, _MODULE_ATTRS, _EXPORTED_FUNCTIONS, _FUNCTION_SIGNATURES = 0, 3, 7, 8
_EXPORT_LOCAL_NAME = 0  # ExportFunctionDef.local_name
_SIGNATURE_ATTRS = 1  # FunctionSignatureDef.attrs
_ATTR_KEY, _ATTR_VALUE = 0, 1  # AttrDef
_ZIP_LOCAL_HEADER = b"PK\x03\x04"


class _Flatbuffer:
    """Read-only access to tables, strings and vectors of one flatbuffer."""

    def __init__(self, data, base: int):
        self.data = data
        self.base = base

    def _u32(self, position: int) -> int:
        return struct.unpack_from("<I", self.data, position)[0]

    def root(self) -> int:
        return self.base + self._u32(self.base)

    def field(self, table: int, index: int) -> int | None:
        vtable = table - struct.unpack_from("<i", self.data, table)[0]
        vtable_size = struct.unpack_from("<H", self.data, vtable)[0]
        slot = 4 + 2 * index
        if slot + 2 > vtable_size:
            return None
        offset = struct.unpack_from("<H", self.data, vtable + slot)[0]
        return table + offset if offset else None

    def target(self, position: int) -> int:
        return position + self._u32(position)

    def string(self, table: int, index: int) -> tuple[int, int] | None:
        """(start, length) of a string field."""
        position = self.field(table, index)
        if position is None:
            return None
        start = self.target(position)
        return start + 4, self._u32(start)

    def tables(self, table: int, index: int) -> list[int]:
        """The tables of a vector-of-tables field."""
        position = self.field(table, index)
        if position is None:
            return []
        vector = self.target(position)
        return [self.target(vector + 4 + 4 * i) for i in range(self._u32(vector))]


def _flatbuffer_start(data) -> int | None:
    """Where the size-prefixed module flatbuffer starts (in a zip, or the file itself)."""
    if data[:4] == _ZIP_LOCAL_HEADER:  # the polyglot zip: module.fb is stored first
        method, = struct.unpack_from("<H", data, 8)
        name_length, extra_length = struct.unpack_from("<HH", data, 26)
        name = bytes(data[30:30 + name_length])
        if method != 0 or name != b"module.fb":
            return None
        start = 30 + name_length + extra_length
    else:
        start = 0
    return start if data[start + 8:start + 12] == b"IREE" else None


def _strings(data) -> list[tuple[int, int, bool]]:
    """(start, length, is a function name) of every string the bindings decode."""
    start = _flatbuffer_start(data)
    if start is None:
        return []
    buffer = _Flatbuffer(data, start + 4)  # after the size prefix
    module = buffer.root()
    found = [(buffer.string(module, _MODULE_NAME), False)]
    for table in buffer.tables(module, _MODULE_ATTRS):
        found += [(buffer.string(table, _ATTR_KEY), False),
                  (buffer.string(table, _ATTR_VALUE), False)]
    for table in buffer.tables(module, _EXPORTED_FUNCTIONS):
        found.append((buffer.string(table, _EXPORT_LOCAL_NAME), True))
    for signature in buffer.tables(module, _FUNCTION_SIGNATURES):
        for table in buffer.tables(signature, _SIGNATURE_ATTRS):
            found += [(buffer.string(table, _ATTR_KEY), False),
                      (buffer.string(table, _ATTR_VALUE), False)]
    return [(span[0], span[1], is_name) for span, is_name in found if span is not None]


def _repaired(raw: bytes) -> bytes:
    """``raw`` with each byte of an invalid UTF-8 sequence replaced by ``?``."""
    text = raw.decode("utf-8", "surrogateescape")
    return "".join("?" if 0xDC80 <= ord(c) <= 0xDCFF else c for c in text).encode()


def repaired_names(data) -> tuple[bytearray | None, dict[str, str]]:
    """The module bytes ``data`` with names the Python runtime can decode.

    :return: ``(None, {})`` when every name decodes (the usual case: only
        the few name strings are read), else a repaired copy of the bytes and
        a map from each repaired function name to the original (with
        surrogate escapes).
    """
    try:
        spans = _strings(data)
    except (struct.error, IndexError, ValueError):
        return None, {}  # not a layout this reader knows: the runtime will judge it
    bad = []
    for start, length, is_name in spans:
        raw = bytes(data[start:start + length])
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            bad.append((start, length, is_name, raw))
    if not bad:
        return None, {}
    repaired_data = bytearray(data)
    renamed: dict[str, str] = {}
    for start, length, is_name, raw in bad:
        repaired = _repaired(raw)
        repaired_data[start:start + length] = repaired
        if is_name:
            renamed[repaired.decode()] = raw.decode("utf-8", "surrogateescape")
    return repaired_data, renamed

