"""The ``local`` executor (``--executor=local``, the default): points measured on this machine.

An essential plugin. The in-process backend measures a run's points in
this process (sessions shared, repetitions interleaved); only points that
cannot share it (their runtime flags differ: IREE's flags are
process-global) are handed to this executor, and so are the processes of
``--benchmark_processes`` (:mod:`ireebench._processes`); it measures each in a
process of its own, one after the other: ``python -m ireebench`` with the
point's command line (:class:`ireebench.executor.PointJob`), its JSON report
read from stdout. See :mod:`ireebench.executor`.
"""

from __future__ import annotations

import os
import sys

from ireebench import hookimpl
from ireebench.executor import LOCAL, POINT_PROCESS_ENV, Executor, PointOutcome


def run_point_processes(config, jobs):
    """Each job in a process of its own, in order; its outcome as it ends."""
    environment = {**os.environ, **POINT_PROCESS_ENV}
    for job in jobs:
        command = [sys.executable, "-m", "ireebench", *job.command]
        import subprocess
        proc = subprocess.run(command, capture_output=True, text=True, errors="replace",
                              check=False, stdin=subprocess.DEVNULL, env=environment)
        yield PointOutcome(job, proc.stdout, proc.stderr, proc.returncode)


@hookimpl
def ireebench_executors(config):
    """Provides ``--executor=local``."""
    return [Executor(LOCAL, run_point_processes,
                     "measures on this machine: in this process, or a point in a process of "
                     "its own where its runtime flags differ (the default)",
                     measures_here=True)]
