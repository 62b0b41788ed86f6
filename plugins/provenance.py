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
from ireebench.modules import last_images
from ireebench.pluginmanager import loaded_plugin_names
from ireebench.session import device_uris
from ireebench.version import runtime_version


def benchmarked_module(config) -> tuple[str, str]:
    """(reported path, sha256) of the last --module.

    The digest is that of the bytes the run took (what was benchmarked, also
    for a module read from stdin, reported as ``-``); "" when the run took
    none (a backend that hands the path on).
    """
    specs = list(config.getoption("module") or [])
    if not specs:
        return "", ""
    spec = specs[-1]
    image = last_images(config)[-1]
    digest = image.sha256 if image is not None else ""
    return ("-" if spec == "-" else os.path.abspath(spec)), digest


@hookimpl(tryfirst=True)
def ireebench_report_context(config, context):
    """Records versions, devices, the module and its sha256, and the plugins."""
    reported, digest = benchmarked_module(config)
    context.extra["ireebench_version"] = __version__
    context.extra["iree_runtime_version"] = runtime_version()
    context.extra["iree_devices"] = device_uris(config)
    context.extra["iree_module"] = reported
    context.extra["iree_module_sha256"] = digest
    context.extra["ireebench_plugins"] = loaded_plugin_names(config.pm)
    context.extra["ireebench_run_id"] = config.run_id
