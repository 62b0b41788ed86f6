"""Fuzzing the --input parser: whatever the strings (and .npy bytes), it
returns values or raises UsageError, nothing else.

``parse_inputs`` runs on the host before any device exists, so a stray
exception there would reach the user as a traceback.
"""

from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from ireebench.errors import UsageError
from ireebench.inputs import Null, Scalar, Tensor, parse_inputs

ARGUMENT_TYPES = [[], ["r"], ["i"], ["I"], ["f"], ["F"], ["r", "r"], ["i", "r"], ["r", "f"],
                  ["r", "r", "r"]]

FUZZ = settings(max_examples=250, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

# Pieces of the grammar, glued together in any order: more interesting
# strings than uniform text, which rarely even contains an `x` and an `=`.
FRAGMENTS = st.sampled_from([
    "4", "2", "0", "1", "x", "xx", "=", "==", "@", "+", "*", "&", "[", "]", "[[", "]]", " ",
    ",", "\t", "-", "-1", "0x1f", "0x", "1e3", "1e999", "nan", "inf", "-inf", ".", "e",
    "f32", "f16", "bf16", "f64", "i1", "i8", "si8", "ui8", "i32", "ui32", "i64", "q32",
    "(null)", "(ignored)", "?", "\u00b2", "\u0663", "\x00", "\u00e9", ".npy", ".bin",
    "missing.npy", "/", "18446744073709551616", "99999999999", "4294967296",
])
GRAMMAR_TEXT = st.lists(FRAGMENTS, max_size=12).map("".join)
ANY_TEXT = st.text(max_size=24)

# Well-formed shapes stay tiny; huge ones must be refused, not allocated.
DIMS = st.lists(st.one_of(st.integers(0, 5), st.integers(2**33, 2**40)), max_size=3)
ELEMENT_TYPES = st.sampled_from(["i1", "i8", "ui8", "si16", "i32", "i64", "f16", "f32", "f64",
                                 "bf16", "x32", ""])
VALUES = st.lists(st.one_of(st.integers(-(2**70), 2**70).map(str),
                            st.floats(allow_nan=True).map(repr), FRAGMENTS), max_size=6)


@st.composite
def tensor_specs(draw) -> str:
    dims = draw(DIMS)
    metadata = "x".join([*(str(d) for d in dims), draw(ELEMENT_TYPES)])
    separator = draw(st.sampled_from([" ", ",", "][", " [", "]"]))
    values = separator.join(draw(VALUES))
    if draw(st.booleans()):
        values = f"[{values}]"
    return f"{metadata}={values}" if draw(st.booleans()) else metadata


def assert_values_or_usage_error(specs, argument_types) -> None:
    """The property: values of the right kinds, or a one-line UsageError."""
    try:
        values = parse_inputs(specs, argument_types)
    except UsageError as exc:
        assert str(exc) and "\n" not in str(exc), repr(str(exc))
        return
    assert len(values) <= len(argument_types)
    for value in values:
        assert isinstance(value, (Scalar, Tensor, Null)), value
        if isinstance(value, Tensor):
            assert isinstance(value.array, np.ndarray)
            assert value.array.dtype == value.element_type.numpy


@FUZZ
@given(st.lists(st.one_of(ANY_TEXT, GRAMMAR_TEXT), max_size=3), st.sampled_from(ARGUMENT_TYPES))
@example(["\u00b2xf32=1"], ["r"])  # isdigit() but not int(): once a ValueError
@example(["4xf32=1 2 3 4"], ["r"])
@example(["42"], ["i"])
@example(["i32=42"], ["i"])
@example(["0x"], ["I"])
@example(["&4xi8=1"], ["r"])
@example(["(null)"], ["f"])
def test_any_strings(specs, argument_types):
    assert_values_or_usage_error(specs, argument_types)


@FUZZ
@given(st.lists(tensor_specs(), min_size=1, max_size=3), st.sampled_from(ARGUMENT_TYPES))
@example(["8589934592x8589934592xi8=1"], ["r"])
@example(["0x3xf32=1"], ["r"])
@example(["0x8589934592x8589934592xi1"], ["r"])  # empty, yet unshapeable: once a ValueError
def test_tensor_grammar(specs, argument_types):
    assert_values_or_usage_error(specs, argument_types)


def _npy_bytes(array) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


GOOD_NPY = _npy_bytes(np.arange(6, dtype=np.float32).reshape(2, 3)) + _npy_bytes(
    np.arange(3, dtype=np.int8))


@pytest.fixture(scope="module")
def npy_path(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz") / "input.npy"


@FUZZ
@given(data=st.data())
def test_corrupt_npy_files(npy_path, data):
    """Mutated and truncated .npy files: refused with UsageError, never a crash."""
    content = bytearray(GOOD_NPY)
    for _ in range(data.draw(st.integers(0, 6), label="mutations")):
        index = data.draw(st.integers(0, len(content) - 1))
        content[index] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(content)), label="length")
    npy_path.write_bytes(bytes(content[:cut]) + data.draw(st.binary(max_size=16)))
    mode = data.draw(st.sampled_from("@+*"), label="mode")
    assert_values_or_usage_error([f"{mode}{npy_path}"], ["r", "r"])


def test_corrupt_npy_header_is_a_usage_error(npy_path):
    """Found by the fuzzer: numpy's header parser raised tokenize.TokenError."""
    header = b"{'descr': '<f4',\xff'fortran_order': False, 'shape': (2, 3), }"
    npy_path.write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header)
    with pytest.raises(UsageError, match="cannot load"):
        parse_inputs([f"@{npy_path}"], ["r"])
