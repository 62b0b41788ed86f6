"""Test plugin: a third-party reporter that records what it receives.

Selected with ``--plugin reporters_recording --reporter recording``; writes
one JSON object per call (context, runs, finalize) to its stream.
"""

import json

from ireebench import hookimpl
from ireebench.reporting import Reporter


class RecordingReporter(Reporter):
    """Writes a JSON line for every reporter call."""

    def report_context(self, context):
        self._record({"event": "context", "num_cpus": context.num_cpus,
                      "extra": context.extra})
        return True

    def report_runs(self, runs):
        self._record({"event": "runs", "rows": [
            {"name": run.benchmark_name, "run_type": run.run_type,
             "extra_row": run.extra_row, "iterations": run.iterations,
             "real_time": run.real_time, "error": run.error_occurred}
            for run in runs]})

    def finalize(self):
        self._record({"event": "finalize"})

    def _record(self, record):
        self.stream.write(json.dumps(record) + "\n")
        self.stream.flush()


@hookimpl
def ireebench_reporters():
    """Registers the ``recording`` reporter."""
    return {"recording": RecordingReporter}
