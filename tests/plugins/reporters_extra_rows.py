"""Test plugin: one extra row under each benchmark, and a log of streamed runs.

``--stream_log=FILE`` appends one JSON line per run received by the
streaming hook ``ireebench_benchmark_result``.
"""

import json

from ireebench import hookimpl
from ireebench.results import Counter, Run

_state = {"log": None}


@hookimpl
def ireebench_addoption(parser):
    """Adds --stream_log."""
    parser.addoption("--stream_log", "stream_log", default="", metavar="FILE",
                     help="Append every streamed run to FILE (test plugin).")


@hookimpl
def ireebench_configure(config):
    """Remembers where the streamed runs go."""
    _state["log"] = config.getoption("stream_log") or None


@hookimpl
def ireebench_report_extra_rows(workload, runs):
    """An ``<name>/extra`` row at half the first repetition's time."""
    first = next((r for r in runs if r.run_type == "iteration" and not r.error_occurred), None)
    if first is None:
        return None
    return [Run(name=f"{workload.name}/extra", run_name=f"{workload.name}/extra",
                iterations=first.iterations,
                real_accumulated_time=first.real_accumulated_time / 2,
                cpu_accumulated_time=first.cpu_accumulated_time / 2,
                time_unit=first.time_unit, family_index=first.family_index,
                extra_row=True, counters={"calls": Counter(1.0)})]


@hookimpl
def ireebench_benchmark_result(run):
    """Logs each run as it finishes."""
    if _state["log"]:
        with open(_state["log"], "a") as handle:
            handle.write(json.dumps({"name": run.benchmark_name, "run_type": run.run_type,
                                     "error": run.error_occurred,
                                     "extra_row": run.extra_row}) + "\n")
