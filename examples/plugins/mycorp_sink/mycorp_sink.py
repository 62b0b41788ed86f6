"""Example plugin: each dispatch's profiling row handed to a company's collector.

``--mycorp_collector=FILE`` appends one JSON line per dispatch function of
each measured benchmark (from the untimed profiling pass its sink asks for).
Put this file in the folder you run from and load it by name::

    ireebench --module=model.vmfb --plugin mycorp_sink --mycorp_collector=rows.jsonl
"""

from __future__ import annotations

from ireebench import ProfilingSink, UsageError, hookimpl
from ireebench.backend import PROFILING_PASSES


@hookimpl
def ireebench_addoption(parser):
    parser.addoption("--mycorp_collector", "mycorp_collector", default="", metavar="FILE",
                     group="mycorp_sink plugin", requires=PROFILING_PASSES,
                     help="Append each dispatch's profiling row to FILE as a JSON line.")


class CollectorSink(ProfilingSink):
    def __init__(self, config, stream):
        self.config, self.stream = config, stream

    def receive_rows(self, profile_pass, rows):
        import json  # here, not at the top: every ireebench command imports this module

        for row in rows:  # ireebench.profiling.StatisticsRow
            if row.is_function_row and row.total_duration_ns is not None:
                self.stream.write(json.dumps({
                    "run_id": self.config.run_id, "benchmark": profile_pass.workload.name,
                    "function": row.key, "calls": row.sample_count,
                    "total_ns": row.total_duration_ns}) + "\n")

    def close(self):
        self.stream.close()


@hookimpl
def ireebench_profiling_sinks(config):
    path = config.getoption("mycorp_collector")
    if not path:
        return None
    try:
        stream = open(path, "a", encoding="utf-8")  # noqa: SIM115 (closed by the sink's close)
    except OSError as exc:
        raise UsageError(f"--mycorp_collector={path}: {exc.strerror}") from None
    return [CollectorSink(config, stream)]
