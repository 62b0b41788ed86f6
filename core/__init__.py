"""ireebench: benchmark IREE modules, flag-compatible with iree-benchmark-module.

Python API::

    import ireebench
    result = ireebench.run(["--module=model.vmfb", "--device=local-sync"])
    for run in result.runs:
        print(run.benchmark_name, run.real_time, run.time_unit)
"""

from __future__ import annotations

import io

import pluggy

from .errors import UsageError

__version__ = "0.1.0"

hookimpl = pluggy.HookimplMarker("ireebench")


def run(argv: list[str], stdout=None, stderr=None):
    """Runs ireebench with command-line flags and returns a RunResult.

    Results are :class:`ireebench.results.Run` objects with numbers. The
    display report goes to ``stdout`` (default: discarded, so a notebook
    stays clean; pass ``sys.stdout`` to see it). User errors raise
    :class:`UsageError`.
    """
    from .cli import execute

    return execute(argv, stdout or io.StringIO(), stderr or io.StringIO())


__all__ = ["UsageError", "__version__", "hookimpl", "run"]
