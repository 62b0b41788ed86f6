"""Adds IREE provenance to the report context, and to each row of a run of several points.

The JSON reporter writes the keys (``ireebench_version``,
``iree_runtime_version``, ``iree_devices``, ``iree_module``,
``iree_module_sha256``, ``iree_modules``, ``ireebench_plugins``,
``ireebench_run_id``) into ``"context"`` after Google Benchmark's own fields,
so its readers ignore them. In a run of several points the context describes
the run as a whole and every row carries its own point's devices and module
(``ireebench_point_context``), which readers take over the context's
(:func:`ireebench.comparison.machine.row_context`). Each key: docs/reporters.md,
"Provenance in the context".
"""

from __future__ import annotations

import os

from ireebench import __version__, hookimpl
from ireebench.backend import last_images
from ireebench.comparison.machine import combined_provenance
from ireebench.devices import device_uris
from ireebench.hookcall import loaded_plugin_names
from ireebench.points import is_sweep, points_of
from ireebench.version import runtime_version


def benchmarked_module(config) -> tuple[str, str]:
    """(reported path, sha256) of the last --module of a configuration (the run's,
    or a point's).

    The digest is that of the bytes the run took (what was benchmarked, also
    for a module read from stdin, reported as ``-``); "" when the run took
    none (a backend that hands the path on, a point whose module failed).
    """
    specs = list(config.getoption("module") or [])
    if not specs:
        return "", ""
    spec = specs[-1]
    image = last_images(config)[-1]
    digest = image.sha256 if image is not None else ""
    return ("-" if spec == "-" else os.path.abspath(spec)), digest


def point_provenance(config) -> dict:
    """A configuration's devices, module and the module's sha256, as context entries."""
    reported, digest = benchmarked_module(config)
    return {"iree_devices": device_uris(config), "iree_module": reported,
            "iree_module_sha256": digest}


@hookimpl(tryfirst=True)
def ireebench_report_context(config, context):
    """Records versions, devices, the module and its sha256, and the plugins."""
    points = [point_provenance(point.config) for point in points_of(config)] \
        if is_sweep(config) else []
    first = points[0] if points else point_provenance(config)
    context.extra["ireebench_version"] = __version__
    context.extra["iree_runtime_version"] = runtime_version()
    context.extra.update(first)
    if points:  # the run as a whole: every point's devices and modules
        context.extra["iree_devices"], context.extra["iree_modules"] = \
            combined_provenance(points)
    context.extra["ireebench_plugins"] = loaded_plugin_names(config.pm)
    context.extra["ireebench_run_id"] = config.run_id


@hookimpl
def ireebench_point_context(config):
    """A point's devices, module and the module's sha256, for each of its rows."""
    return point_provenance(config)
