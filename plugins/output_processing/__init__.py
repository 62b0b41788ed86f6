"""Output processing: print, save (``--output``) or check (``--expected_output``)
the outputs of the last measured invocation, as iree-benchmark-module does.

The plugin owns its flags (those of IREE's process_results.c and
comparison.cc) and every step:

* ``ireebench_configure``: flag values (``--output`` syntax and paths, the
  comparison tolerances and ``--equality_mode``);
* ``ireebench_discovery_finish``: one function only (the native tool's
  rule); the ``--output`` count against the function's results and the
  ``--expected_output`` values parsed against them, so a typo costs nothing
  measured;
* ``ireebench_workload_finish``: the outputs of the last measured
  iteration copied to host memory (:mod:`.values`), before anything else
  can overwrite them;
* ``ireebench_measurements_finish``: as ``iree_tooling_process_results``:
  compared (:mod:`.compare`) when ``--expected_output`` is given (a mismatch
  exits 1), else written (``--output``), else printed; on the run's stdout.

Blocked with ``-p no:output_processing``, its flags are unknown flags.

The flags and their checks are here (:mod:`.flags`); the work on values
(parsing the expected ones, copying, comparing, writing, printing: numpy
and the runtime) is :mod:`.process`, imported when a run with
``--enable_output_processing`` first needs it (:func:`runtime_part`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ireebench import StashKey, hookimpl
from ireebench.backend import IN_PROCESS, NATIVE_FLAGS, refusal
from ireebench.errors import UsageError, flag_error
from ireebench.lib.outputs import COMPARISON_FLAGS, DEFAULT_THRESHOLDS, Tolerances, parse_tolerances
from ireebench.outfiles import (
    check_output_path,
    file_identity,
    register_input,
    run_files,
    value_file,
)
from ireebench.workload import split_cconv

GROUP = "Output processing (iree-benchmark-module)"
# Who acts on these flags: the in-process backend, or the native tool a backend hands them to.
HONOURED_BY = (IN_PROCESS, NATIVE_FLAGS)


@dataclass
class OutputState:
    """What one run's output processing knows."""

    tolerances: Tolerances = field(default_factory=Tolerances)  # the comparison flags
    expected: list | None = None  # parsed --expected_output values
    outputs: dict[str, list] = field(default_factory=dict)  # per workload name: OutputValues


STATE = StashKey[OutputState]()


def runtime_part():
    """:mod:`.process`, the work on the values, imported on first use."""
    from . import process  # numpy, the runtime: see LAZY_IMPORTS in tests/core/test_imports.py

    return process


@hookimpl
def ireebench_addoption(parser):
    """Adds the flags of IREE's process_results.c and comparison.cc.

    --enable_output_processing, --output, --expected_output,
    --output_max_element_count; --expected_{f16,f32,f64,bf16}_threshold,
    --expected_rtol and --equality_mode.
    """
    parser.addoption("--enable_output_processing", "enable_output_processing", type=bool,
                     group=GROUP,
                     help="Keep the outputs of the last measured invocation and print or "
                          "check them.", module_run=True, native_flag=True, whole_run=True,
                     requires=HONOURED_BY)
    parser.addoption("--output", "output", multiple=True, group=GROUP, metavar="SPEC",
                     help="How to handle an output: empty (ignore), -, @file.npy, +file.npy, "
                          "@file.bin, +file.bin; one per result.", module_run=True, native_flag=True,
                     requires=HONOURED_BY)
    parser.addoption("--expected_output", "expected_output", multiple=True, group=GROUP,
                     metavar="VALUE",
                     help="Expected output, in the --input format; (ignored) skips one.",
                     module_run=True, native_flag=True,
                     requires=HONOURED_BY)
    parser.addoption("--output_max_element_count", "output_max_element_count", type=int,
                     default=1024, group=GROUP,
                     help="Print at most this many elements of an output tensor.", module_run=True, native_flag=True,
                     requires=HONOURED_BY)
    for name in DEFAULT_THRESHOLDS:
        flag = f"expected_{name}_threshold"
        parser.addoption(f"--{flag}", flag, default=COMPARISON_FLAGS[flag], group=GROUP,
                         metavar="ATOL", show_default=True,
                         help=f"Per-element-type absolute tolerance for {name} in "
                              "approximate mode.", module_run=True, native_flag=True,
                     requires=HONOURED_BY)
    parser.addoption("--expected_rtol", "expected_rtol", default=COMPARISON_FLAGS["expected_rtol"],
                     group=GROUP, metavar="RTOL", show_default=True,
                     help="Relative tolerance shared across float types in approximate mode.",
                     module_run=True, native_flag=True,
                     requires=HONOURED_BY)
    parser.addoption("--equality_mode", "equality_mode",
                     default=COMPARISON_FLAGS["equality_mode"], group=GROUP,
                     metavar="approximate|exact", show_default=True,
                     help="approximate: abs(actual - expected) <= atol + rtol * abs(expected) "
                          "per element, NaN equal to NaN; exact: byte equality, tolerances "
                          "ignored.", module_run=True, native_flag=True,
                     requires=HONOURED_BY)


def _enabled(config) -> bool:
    return bool(config.getoption("enable_output_processing")) and STATE in config.stash


def _register_files(config, specs) -> None:
    """The --output files are the run's outputs, the --expected_output files its
    inputs (``ireebench.outfiles.RunFiles``: no output replaces an input)."""
    for value in config.getoption("expected_output") or ():
        register_input(config, f"--expected_output={value}", value_file(value))
    written = set()  # --output=@f.npy --output=+f.npy: one file, written then appended
    for spec in specs:
        if spec in ("", "-"):
            continue
        if spec[0] not in "@+":
            raise UsageError(f"--output={spec}: expected -, @file or +file")
        check_output_path("output", spec[1:])
        identity = file_identity(spec[1:])
        if identity not in written:
            written.add(identity)
            run_files(config).add_output(f"--output={spec}", spec[1:])


@hookimpl
def ireebench_configure(config):
    """Checks the flag values before anything runs."""
    count = config.getoption("output_max_element_count")
    if count is not None and count < 0:
        raise UsageError(f"--output_max_element_count={count}: must be >= 0")
    try:
        # Unlike the native tool (which reads `abc` as 0 and an unknown mode
        # as exact), a value that is not a tolerance or a mode is refused.
        tolerances = parse_tolerances({name: config.getoption(name, default)
                                       for name, default in COMPARISON_FLAGS.items()})
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if not config.getoption("enable_output_processing"):
        return
    _register_files(config, config.getoption("output") or ())
    backend = config.backend
    if backend.has(IN_PROCESS):
        config.stash[STATE] = OutputState(tolerances=tolerances)
    elif not backend.has(NATIVE_FLAGS):  # nor would the native tool that measures see them
        raise flag_error("enable_output_processing", "true", refusal(config, IN_PROCESS))


@hookimpl
def ireebench_discovery_finish(config, session, workloads):
    """One function, and expected values that parse against its results."""
    if not _enabled(config):
        return
    if len(workloads) != 1:
        raise UsageError("--enable_output_processing: output processing requires one "
                         "function; use --function")
    function = workloads[0].function
    result_types = split_cconv(function.results)
    expected_specs = list(config.getoption("expected_output") or [])
    if expected_specs:
        # `(ignored)` parses as a Null of the result's type: compare() skips it.
        config.stash[STATE].expected = runtime_part().parse_expected(expected_specs,
                                                                     result_types)
        return  # as process_results.c: with expected outputs, --output is not used
    _check_output_count(list(config.getoption("output") or []), function, result_types)


def _check_output_count(specs: list[str], function, result_types: list[str]) -> None:
    """``--output`` needs one spec per result, as ``iree_tooling_write_variants``.

    The native tool finds out after measuring; the calling convention says it
    before anything runs.
    """
    if specs and len(specs) != len(result_types):
        raise UsageError(
            f"--output: {len(specs)} outputs specified but the provided variant list only has "
            f"{len(result_types)} elements (function {function.name!r} returns "
            f"{len(result_types)} value(s))")


@hookimpl
def ireebench_workload_finish(config, session, workload, runs):
    """Copies the last measured outputs to host memory."""
    if not _enabled(config) or workload.last_batch is None:
        return  # failed or filtered: nothing ran to completion
    config.stash[STATE].outputs[workload.name] = runtime_part().snapshot(
        workload.last_batch.outputs(), session.device, split_cconv(workload.function.results))


@hookimpl
def ireebench_measurements_finish(config, workloads):
    """Compares, writes or prints the outputs (iree_tooling_process_results); a mismatch exits 1."""
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
        if state.expected is not None:
            exit_code = max(exit_code, runtime_part().check_expected(
                values, state.expected, state.tolerances, stream))
        elif output_specs:
            runtime_part().write_outputs(output_specs, values, max_elements, stream)
        else:
            runtime_part().print_results(values, max_elements, stream)
    stream.flush()
    return exit_code
