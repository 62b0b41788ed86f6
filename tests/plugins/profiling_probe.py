"""Test plugin: profiling sinks and a wrapper of the profiling pass that log events.

``--probe_log=FILE`` turns it on; every event is one JSON line in FILE:

* two sinks (``first`` and ``second``) log ``begin``, ``rows``, ``end`` and
  ``close``; ``--probe_fail_in=METHOD`` makes the first sink raise there;
* ``ireebench_profile_rows`` logs ``hook_rows``;
* a wrapper of ``ireebench_profiling_pass`` logs ``wrap_begin`` before the
  pass and ``wrap_end`` after it, and runs the native tool under a command
  prefix that logs ``native`` (so the log shows the pass ran in between).
"""

import json
import sys
from pathlib import Path

from ireebench import hookimpl
from ireebench.profiling import ProfilingSink


def _log(config_or_path, event: str, **data) -> None:
    path = config_or_path if isinstance(config_or_path, str) else \
        config_or_path.getoption("probe_log")
    with open(path, "a") as handle:
        handle.write(json.dumps({"event": event, **data}) + "\n")


# Runs the command after it, having logged one line: a stand-in for an
# external profiler that launches the program it profiles.
LAUNCHER = (
    "import json, os, sys\n"
    "with open(sys.argv[1], 'a') as f:\n"
    "    f.write(json.dumps({'event': 'native', 'env': os.environ.get('PROBE_ENV', '')}) + '\\n')\n"
    "os.execv(sys.argv[2], sys.argv[2:])\n"
)


class LoggingSink(ProfilingSink):
    def __init__(self, path: str, label: str, fail_in: str = ""):
        self.path, self.label, self.fail_in = path, label, fail_in

    def _maybe_fail(self, method):
        if self.fail_in == method:
            raise RuntimeError(f"probe sink asked to fail in {method}")

    def begin_pass(self, profile_pass):
        self._maybe_fail("begin_pass")
        _log(self.path, "begin", sink=self.label, workload=profile_pass.workload.name,
             mode=profile_pass.mode, iterations=profile_pass.iterations,
             repetitions=profile_pass.repetitions)

    def receive_rows(self, profile_pass, rows):
        self._maybe_fail("receive_rows")
        _log(self.path, "rows", sink=self.label, workload=profile_pass.workload.name,
             functions=sorted({r.key for r in rows if r.is_function_row}),
             calls={r.key: r.sample_count for r in rows if r.is_function_row},
             row_types=sorted({r.row_type for r in rows}),
             bundle_exists=Path(profile_pass.bundle_path).is_file())

    def end_pass(self, profile_pass, result):
        self._maybe_fail("end_pass")
        _log(self.path, "end", sink=self.label, workload=profile_pass.workload.name,
             ok=result.ok, error=result.error, iterations=result.iterations,
             bundle_exists=Path(profile_pass.bundle_path).is_file())

    def close(self):
        _log(self.path, "close", sink=self.label)


@hookimpl
def ireebench_addoption(parser):
    parser.addoption("--probe_log", "probe_log", default="", help="Test: event log file.")
    parser.addoption("--probe_fail_in", "probe_fail_in", default="",
                     help="Test: sink method that raises.")


@hookimpl
def ireebench_profiling_sinks(config):
    path = config.getoption("probe_log")
    if not path:
        return None
    return [LoggingSink(path, "first", config.getoption("probe_fail_in")),
            LoggingSink(path, "second")]


_HOOK_LOG = {}  # ireebench_profile_rows has no config: the log path, set at configure


@hookimpl
def ireebench_configure(config):
    _HOOK_LOG["path"] = config.getoption("probe_log")


@hookimpl
def ireebench_profile_rows(workload, rows, bundle_path):
    path = _HOOK_LOG.get("path")
    if path:
        _log(path, "hook_rows", workload=workload.name, rows=len(rows),
             bundle_exists=Path(bundle_path).is_file())


@hookimpl(wrapper=True)
def ireebench_profiling_pass(config, workload, runs, profile_pass):
    if not config.getoption("probe_log"):
        return (yield)
    _log(config, "wrap_begin", workload=workload.name,
         bundle_exists=Path(profile_pass.bundle_path).is_file())
    profile_pass.env["PROBE_ENV"] = "set-by-wrapper"
    profile_pass.command_prefix[:0] = [sys.executable, "-c", LAUNCHER,
                                       config.getoption("probe_log")]
    result = yield
    _log(config, "wrap_end", workload=workload.name, ok=result.ok,
         bundle_exists=Path(profile_pass.bundle_path).is_file())
    return result
