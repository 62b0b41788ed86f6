"""Checks ``--input`` tensors against the function's declared signature.

The compiler records each exported function's signature in its
``iree.abi.declaration`` reflection attribute, e.g.::

    sync func @add(%input0: tensor<4xf32>, %input1: tensor<4xf32>) -> (...)

A tensor of the wrong shape or element type would only fail inside the
timed invocation (``hal.buffer_view.assert``) and become an error row; this
module catches it before anything runs, as a one-line usage error naming the
``--input`` and its value. Anything it cannot read (no declaration, dynamic
dimensions, element types ireebench cannot spell) is left for the runtime.
"""

from __future__ import annotations

import re

from . import dtypes
from .errors import INVALID_ARGUMENT, UsageError

_TENSOR = re.compile(r"^tensor<(?P<body>.*)>$")


def split_top_level(text: str, separator: str = ",") -> list[str]:
    """Splits ``text`` at ``separator`` outside ``<>``, ``()``, ``[]`` and ``{}``."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char in "<([{":
            depth += 1
        elif char in ">)]}":
            depth -= 1
        elif char == separator and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return [part.strip() for part in parts if part.strip()]


def declared_input_types(declaration: str) -> list[str] | None:
    """The argument types of a declaration (``tensor<4xf32>``, ``i32`` ...).

    Returns None when the declaration cannot be read.
    """
    start = declaration.find("(")
    if start < 0:
        return None
    depth = 0
    for end in range(start, len(declaration)):
        char = declaration[end]
        if char in "<([{":
            depth += 1
        elif char in ">)]}":
            depth -= 1
            if depth == 0:
                break
    else:
        return None
    types = []
    for argument in split_top_level(declaration[start + 1 : end]):
        _name, colon, rest = argument.partition(":")
        if not colon:
            return None
        # Drop trailing argument attributes ({iree.abi.name = ...}).
        types.append(split_top_level(rest.strip(), " ")[0] if rest.strip() else "")
    return types


def parse_tensor_type(text: str) -> tuple[list[int | None], str] | None:
    """``tensor<4x?xf32>`` -> ([4, None], "f32"); None if not a ranked tensor."""
    match = _TENSOR.match(text.strip())
    if not match:
        return None
    body = split_top_level(match.group("body"))[0]  # drop an encoding
    parts = body.split("x")
    if "<" in body or "*" in body:  # complex<f32>, unranked: not checked
        return None
    dims: list[int | None] = []
    for dim in parts[:-1]:
        if dim == "?":
            dims.append(None)
        elif dim.isascii() and dim.isdigit():
            dims.append(int(dim))
        else:
            return None
    return dims, parts[-1]


def _integer_width(element_type: str) -> int | None:
    match = re.fullmatch(r"[su]?i(\d+)", element_type)
    return int(match.group(1)) if match else None


def element_types_compatible(declared: str, given: str) -> bool:
    """Mirrors ``hal.buffer_view.assert``: integers of one width match
    whatever their signedness (and i1 is stored as 8 bits); floats must be
    the same type."""
    if declared == given:
        return True
    widths = [_integer_width(declared), _integer_width(given)]
    if None in widths:
        return False
    widths = [8 if width == 1 else width for width in widths]
    return widths[0] == widths[1]


def _shape_text(shape, element_type: str) -> str:
    return "x".join([*(str(d) for d in shape), element_type])


def _argument_types(function) -> list[str] | None:
    declaration = function.attr("iree.abi.declaration")
    return declared_input_types(declaration) if declaration else None


def _matches(declared: str, shape, given_type: str) -> bool:
    parsed = parse_tensor_type(declared)
    if parsed is None:
        return True  # nothing ireebench can judge: the runtime will
    dims, element_type = parsed
    if dtypes.by_name(element_type) is None:
        return True
    shape_ok = len(shape) == len(dims) and all(d is None or d == s for d, s in zip(dims, shape))
    return shape_ok and element_types_compatible(element_type, given_type)


def tensor_checker(function):
    """A ``check(index, shape, element_type, spec_text)`` for :func:`ireebench.inputs.parse_inputs`.

    Called with the shape and element type of a tensor value before any of
    its elements is built, so ``--input=4000000000xf32=1`` for a
    ``tensor<4xf32>`` is refused without allocating 16 GB. None when the
    function declares nothing to check against.
    """
    types = _argument_types(function)
    if types is None:
        return None

    def check(index: int, shape, element_type: str, spec_text: str) -> None:
        if index < len(types) and not _matches(types[index], list(shape), element_type):
            raise UsageError(
                f"--input={spec_text or _shape_text(shape, element_type)}: argument {index} of "
                f"@{function.name} is {types[index]}, got {_shape_text(shape, element_type)}",
                status=INVALID_ARGUMENT,  # the native tool's hal.buffer_view.assert
            )

    return check


def check_inputs(function, values) -> None:
    """Raises :class:`UsageError` for a tensor that cannot match its argument.

    For values whose shape is known only once loaded (``.npy`` files); the
    shapes written on the command line are checked while parsing
    (:func:`tensor_checker`).

    :param function: the :class:`ireebench.workload.FunctionInfo`.
    :param values: parsed values (:mod:`ireebench.inputs`), one per argument.
    """
    check = tensor_checker(function)
    if check is None or len(_argument_types(function)) != len(values):
        return
    for index, value in enumerate(values):
        if getattr(value, "array", None) is None or value.storage_only:
            continue  # a primitive, a null, or storage (a bare buffer)
        check(index, value.array.shape, value.element_type.name, value.spec)


def example_input(declared: str) -> str:
    """An ``--input`` value that fits a declared argument type, for hints.

    ``tensor<4xf32>`` -> ``4xf32=0``, ``tensor<f32>`` -> ``f32=0``, ``i32`` ->
    ``0``; ``...`` where the type has dynamic dimensions or is not a tensor
    or primitive ireebench can spell.
    """
    if declared in dtypes.PRIMITIVE_TYPES.values():
        return "0"
    parsed = parse_tensor_type(declared)
    if parsed is None or None in parsed[0] or dtypes.by_name(parsed[1]) is None:
        return "..."
    return _shape_text(parsed[0], parsed[1]) + "=0"


def example_inputs(function) -> list[str]:
    """``--input=...`` flags that fit ``function``'s declaration (``--input=...`` if unknown)."""
    declaration = function.attr("iree.abi.declaration")
    types = declared_input_types(declaration) if declaration else None
    if not types:
        return ["--input=..."]
    return [f"--input={example_input(declared)}" for declared in types]


__all__ = [
    "check_inputs", "declared_input_types", "parse_tensor_type", "tensor_checker"
]
