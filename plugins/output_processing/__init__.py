"""Output processing: print, save (``--output``) or check (``--expected_output``)
the outputs of the last measured invocation, as iree-benchmark-module does.

The plugin owns its flags and every step:

* ``ireebench_configure``: flag values (``--output`` syntax and paths);
* ``ireebench_discovery_finish``: one function only (the native tool's
  rule); ``--expected_output`` values parsed against the function's results,
  so a typo costs nothing measured;
* ``ireebench_workload_finish``: the outputs of the last measured
  iteration copied to host memory (:mod:`.values`), before anything else
  can overwrite them;
* ``ireebench_measurements_finish``: printed, written or compared
  (:mod:`.compare`) on the run's stdout; a mismatch exits 1.

Blocked with ``-p no:output_processing``, its flags are unknown flags.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass, field

import numpy as np
from ireebench import StashKey, hookimpl
from ireebench.errors import UsageError
from ireebench.inputs import parse_inputs
from ireebench.outfiles import OutputFile, check_output_path

from .compare import Tolerances, compare
from .values import OutputValue, format_value, print_results, snapshot, to_numpy

GROUP = "Output processing (iree-benchmark-module)"


@dataclass
class OutputState:
    """What one run's output processing knows."""

    expected: list | None = None  # parsed --expected_output values
    outputs: dict[str, list[OutputValue]] = field(default_factory=dict)  # per workload name


STATE = StashKey[OutputState]()


@hookimpl
def ireebench_addoption(parser):
    """Adds --enable_output_processing, --output, --expected_output, --output_max_element_count."""
    parser.addoption("--enable_output_processing", "enable_output_processing", type=bool,
                     group=GROUP,
                     help="Keep the outputs of the last measured invocation and print or "
                          "check them.")
    parser.addoption("--output", "output", multiple=True, group=GROUP, metavar="SPEC",
                     help="Where an output goes: -, @file.npy, +file.npy, @file.bin, +file.bin.")
    parser.addoption("--expected_output", "expected_output", multiple=True, group=GROUP,
                     metavar="VALUE",
                     help="Expected output, in the --input format; (ignored) skips one.")
    parser.addoption("--output_max_element_count", "output_max_element_count", type=int,
                     default=1024, group=GROUP,
                     help="Print at most this many elements of an output tensor.")


def _enabled(config) -> bool:
    return bool(config.getoption("enable_output_processing")) and STATE in config.stash


def _check_output_specs(specs) -> None:
    for spec in specs:
        if spec in ("", "-"):
            continue
        if spec[0] not in "@+":
            raise UsageError(f"--output={spec}: expected -, @file or +file")
        check_output_path("output", spec[1:])


@hookimpl
def ireebench_configure(config):
    """Checks the flag values before anything runs."""
    count = config.getoption("output_max_element_count")
    if count is not None and count < 0:
        raise UsageError(f"--output_max_element_count={count}: must be >= 0")
    if not config.getoption("enable_output_processing"):
        return
    _check_output_specs(config.getoption("output") or ())
    config.stash[STATE] = OutputState()


@hookimpl
def ireebench_discovery_finish(config, session, workloads):
    """One function, and expected values that parse against its results."""
    if not _enabled(config):
        return
    if len(workloads) != 1:
        raise UsageError("--enable_output_processing: output processing requires one "
                         "function; use --function")
    expected_specs = list(config.getoption("expected_output") or [])
    if expected_specs:
        result_types = list(workloads[0].function.results)
        # `(ignored)` parses as a Null of the result's type: compare() skips it.
        config.stash[STATE].expected = parse_inputs(expected_specs, result_types,
                                                    flag="expected_output")


@hookimpl
def ireebench_workload_finish(config, session, workload, runs):
    """Copies the last measured outputs to host memory."""
    if not _enabled(config) or workload.last_batch is None:
        return  # failed or filtered: nothing ran to completion
    config.stash[STATE].outputs[workload.name] = snapshot(
        workload.last_batch.outputs(), session.device, workload.function.results)


def _output_bytes(spec: str, value: OutputValue) -> bytes:
    try:
        array = to_numpy(value)
    except ValueError as exc:
        raise UsageError(f"--output={spec}: {exc}") from None
    if spec.endswith(".npy"):
        buffer = io.BytesIO()
        np.save(buffer, array, allow_pickle=False)
        return buffer.getvalue()
    return np.ascontiguousarray(array).tobytes()


def _write_outputs(specs, values, max_elements, stream) -> None:
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
                with open(path, "rb") as existing:
                    contents[path] += existing.read()
        contents[path] += _output_bytes(spec, value)
    for path, data in contents.items():
        handle = OutputFile(path, "output", binary=True)
        handle.stream.write(bytes(data))
        handle.close()


def _check_expected(config, values, expected, max_elements, stream) -> int:
    tolerances = Tolerances.from_runtime_flags(config.runtime_flags)
    failures = []
    if len(expected) != len(values):
        failures.append(
            f"[FAILED] expected {len(expected)} output(s) but the function returned "
            f"{len(values)}"
        )
    for index, (exp, act) in enumerate(zip(expected, values)):
        message = compare(index, exp, act, tolerances, max_elements)
        if message:
            failures.append(message)
    if failures:
        stream.write("\n".join(failures) + "\n")
        return 1
    stream.write("[SUCCESS] all function outputs matched their expected values.\n")
    return 0


@hookimpl
def ireebench_measurements_finish(config, workloads):
    """Prints, writes or compares the outputs; a mismatch exits 1."""
    if not _enabled(config):
        return None
    state = config.stash[STATE]
    max_elements = config.getoption("output_max_element_count")
    output_specs = list(config.getoption("output") or [])
    stream = config.stdout
    exit_code = 0
    for workload in workloads:
        values = state.outputs.get(workload.name)
        if values is None:
            continue
        if output_specs:
            if len(output_specs) > len(values):
                raise UsageError(
                    f"--output: {len(output_specs)} given but {workload.function.name!r} "
                    f"returned {len(values)} value(s)"
                )
            _write_outputs(output_specs, values, max_elements, stream)
        if state.expected is not None:
            exit_code = max(exit_code, _check_expected(config, values, state.expected,
                                                       max_elements, stream))
        if not output_specs and state.expected is None:
            print_results(values, max_elements, stream)
    stream.flush()
    return exit_code
