"""``--print_statistics``: the HAL allocators' statistics of each device, printed at exit.

Mirrors ``BenchmarkSession::Close`` of iree-benchmark-module: when the run
ends, per device, ``Device: <id>``, then what
``iree_hal_allocator_statistics_fprint`` writes (a header line and one line
per heap: peak, allocated, freed, live bytes), then an empty line, on
stderr, after the report and the outputs.

In process (a backend with the ``in_process`` capability) the statistics
are read from the open session in ``ireebench_sessionfinish`` (``trylast``:
after every other plugin's end-of-run lines, as the native tool prints them
last). A backend that hands the native tool's flags on (``native_flags``)
gets ``--print_statistics`` as it is (the option is marked
``native_flag``), and the native tool prints them. Other backends refuse
it in one line.
"""

from __future__ import annotations

from ireebench import hookimpl
from ireebench.backend import IN_PROCESS, NATIVE_FLAGS, refusal
from ireebench.errors import flag_error

# The header iree_hal_allocator_statistics_fprint writes before the per-heap lines.
STATISTICS_HEADER = "[[ iree_hal_allocator_t memory statistics ]]"


@hookimpl
def ireebench_addoption(parser):
    """Adds --print_statistics (the native tool's flag)."""
    parser.addoption(
        "--print_statistics", "print_statistics", type=bool, requires=(IN_PROCESS, NATIVE_FLAGS),
        group="Module, function and inputs (iree-benchmark-module)",
        help="Print allocator statistics per device to stderr at exit.",
        native_flag=True, whole_run=True)


@hookimpl
def ireebench_configure(config):
    backend = config.backend
    if config.getoption("print_statistics") and not (
            backend.has(IN_PROCESS) or backend.has(NATIVE_FLAGS)):
        raise flag_error("print_statistics", "true", refusal(config, IN_PROCESS))


@hookimpl(trylast=True)
def ireebench_sessionfinish(config, session):
    """Prints the statistics of each device of the in-process session."""
    if not config.getoption("print_statistics") or session is None or not session.devices:
        return
    for device_id, text in session.allocator_statistics():
        config.stderr.write(f"Device: {device_id}\n{STATISTICS_HEADER}\n{text}\n")
    config.stderr.flush()
