"""What output processing does with the values: numpy and the runtime.

Imported by :mod:`ireebench.plugins.output_processing` when a run with
``--enable_output_processing`` first needs it: the ``--expected_output``
values parsed against the function's results, the outputs copied to host
memory (:mod:`.values`), then compared (:mod:`.compare`), written or
printed.
"""

from __future__ import annotations

import io
import os

import numpy as np
from ireebench.errors import UsageError
from ireebench.inputs import parse_inputs
from ireebench.lib.outputs import Tolerances
from ireebench.lib.outputs.compare import compare_lists
from ireebench.lib.outputs.values import (
    OutputValue,
    format_value,
    print_results,
    snapshot,
    to_numpy,
)
from ireebench.outfiles import write_to

__all__ = ["check_expected", "parse_expected", "print_results", "snapshot", "write_outputs"]


def parse_expected(specs: list[str], result_types: list[str]) -> list:
    """The ``--expected_output`` values, parsed against the function's results
    (``(ignored)`` is a Null of the result's type: the comparison skips it)."""
    return parse_inputs(specs, result_types, flag="expected_output")


def output_bytes(spec: str, value: OutputValue) -> bytes:
    try:
        array = to_numpy(value)
        if spec.endswith(".npy") and value.element_type is not None \
                and value.element_type.is_bf16:
            # numpy has no bfloat16; numpy_io.c refuses it the same way.
            raise ValueError("bf16 cannot be written to a .npy file (unsupported data encoding)")
    except ValueError as exc:
        raise UsageError(f"--output={spec}: {exc}") from None
    if spec.endswith(".npy"):
        buffer = io.BytesIO()
        np.save(buffer, array, allow_pickle=False)
        return buffer.getvalue()
    return np.ascontiguousarray(array).tobytes()


def write_outputs(specs, values, max_elements, stream) -> None:
    """Writes each output where its spec says, as IREE's tools do.

    ``@file`` starts the file, ``+file`` appends (to what this run wrote,
    or to the existing file); each file is then written once, atomically
    (or through, for a device or FIFO), so a failure leaves it untouched.
    """
    contents: dict[str, bytearray] = {}
    for spec, value in zip(specs, values):
        if spec == "":
            continue
        if spec == "-":
            stream.write(format_value(value, max_elements) + "\n")
            continue
        path = spec[1:]
        if spec[0] == "@" or path not in contents:
            contents[path] = bytearray()
            if spec[0] == "+" and os.path.isfile(path):
                try:
                    with open(path, "rb") as existing:
                        contents[path] += existing.read()
                except OSError as exc:
                    raise UsageError(f"--output={spec}: cannot read {path} to append to it: "
                                     f"{exc.strerror}") from None
        contents[path] += output_bytes(spec, value)
    for path, data in contents.items():
        write_to(path, "output", bytes(data))


def check_expected(values: list[OutputValue], expected: list, tolerances: Tolerances,
                   stream) -> int:
    """Compares as iree_tooling_process_results: reports, then [SUCCESS] or exit 1."""
    failures = compare_lists(expected, values, tolerances)
    if failures:
        stream.write("\n".join(failures) + "\n")
        return 1
    stream.write("[SUCCESS] all function outputs matched their expected values.\n")
    return 0
