"""Adds IREE provenance to the report context.

The JSON reporter writes these keys into ``"context"`` after Google
Benchmark's own fields and the ``--benchmark_context`` entries, so consumers
that read Google Benchmark's JSON (compare.py, dashboards) ignore them:

``ireebench_version``
    version of ireebench.
``iree_runtime_version``
    version of the installed iree-base-runtime package.
``iree_devices``
    the HAL devices, as given with ``--device`` (default ``local-task``).
``iree_module``
    the benchmarked module (the last ``--module``): an absolute path, or
    ``-`` when it was read from standard input.
``iree_module_sha256``
    sha256 of the module's bytes (also for a module read from stdin).
``ireebench_plugins``
    names of the loaded plugins, built-in ones included.
``ireebench_run_id``
    the run's ``config.run_id``, which every hook of the run can read too
    (a streaming sink records it with each row to join them with the report).
"""

from __future__ import annotations

import os

from ireebench import __version__, hookimpl
from ireebench.modules import copied_files, file_sha256
from ireebench.pluginmanager import loaded_plugin_names
from ireebench.session import device_uris
from ireebench.version import runtime_version


def benchmarked_module(config) -> tuple[str, str]:
    """(reported path, readable path) of the last --module.

    The bytes are hashed from the run's private copy (what was benchmarked,
    also for a module read from stdin, reported as ``-``).
    """
    specs = list(config.getoption("module") or [])
    if not specs:
        return "", ""
    spec = specs[-1]
    copy = copied_files(config)[-1]
    readable = copy or ("" if spec == "-" else spec)
    if spec == "-":
        return "-", readable
    return os.path.abspath(spec), readable


@hookimpl(tryfirst=True)
def ireebench_report_context(config, context):
    """Records versions, devices, the module and its sha256, and the plugins."""
    reported, readable = benchmarked_module(config)
    context.extra["ireebench_version"] = __version__
    context.extra["iree_runtime_version"] = runtime_version()
    context.extra["iree_devices"] = device_uris(config)
    context.extra["iree_module"] = reported
    context.extra["iree_module_sha256"] = file_sha256(readable) if readable else ""
    context.extra["ireebench_plugins"] = loaded_plugin_names(config.pm)
    context.extra["ireebench_run_id"] = config.run_id
