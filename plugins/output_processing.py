"""--enable_output_processing: print, save (--output) or check (--expected_output)
the outputs of the last measured invocation, as iree-benchmark-module does."""

from __future__ import annotations

import sys

import numpy as np
from ireebench import hookimpl
from ireebench.errors import UsageError
from ireebench.inputs import parse_inputs
from ireebench.outputs import Tolerances, compare, format_value, print_results, to_numpy


def _write_outputs(specs, values, max_elements, stream) -> None:
    opened: dict[str, object] = {}
    try:
        for spec, value in zip(specs, values):
            if spec == "":
                continue
            if spec == "-":
                stream.write(format_value(value, max_elements) + "\n")
                continue
            if spec[0] not in "@+":
                raise UsageError(f"--output={spec}: expected -, @file or +file")
            path = spec[1:]
            handle = opened.get(path)
            if handle is None or spec[0] == "@":
                if handle is not None:
                    handle.close()
                mode = "ab" if spec[0] == "+" else "wb"
                try:
                    handle = open(path, mode)  # noqa: SIM115 - closed below
                except OSError as exc:
                    raise UsageError(f"--output={spec}: cannot write: {exc.strerror}") from None
                opened[path] = handle
            try:
                array = to_numpy(value)
            except ValueError as exc:
                raise UsageError(f"--output={spec}: {exc}") from None
            if path.endswith(".npy"):
                np.save(handle, array, allow_pickle=False)
            else:
                handle.write(np.ascontiguousarray(array).tobytes())
    finally:
        for handle in opened.values():
            handle.close()


@hookimpl
def ireebench_process_outputs(config, session, workloads):
    if not config.getoption("enable_output_processing"):
        return None
    max_elements = config.getoption("output_max_element_count")
    expected_specs = list(config.getoption("expected_output") or [])
    output_specs = list(config.getoption("output") or [])
    stream = sys.stdout
    exit_code = 0
    for workload in workloads:
        values = workload.outputs
        if values is None:
            continue  # failed or filtered: nothing ran to completion
        if output_specs:
            if len(output_specs) > len(values):
                raise UsageError(
                    f"--output: {len(output_specs)} given but {workload.function.name!r} "
                    f"returned {len(values)} value(s)"
                )
            _write_outputs(output_specs, values, max_elements, stream)
        if expected_specs:
            result_types = list(workload.function.results)
            # `(ignored)` parses as a Null of the result's type: compare() skips it.
            expected = parse_inputs(expected_specs, result_types, flag="expected_output")
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
                exit_code = 1
            else:
                stream.write("[SUCCESS] all function outputs matched their expected values.\n")
        if not output_specs and not expected_specs:
            print_results(values, max_elements, stream)
    stream.flush()
    return exit_code
