"""Adds IREE provenance to the report context.

Keys are prefixed so Google Benchmark's consumers (compare.py, dashboards)
ignore them: the ireebench and iree-base-runtime versions, the devices, the
benchmarked module's path and sha256, and the loaded plugins.
"""

from __future__ import annotations

import hashlib
import importlib.metadata

from ireebench import __version__, hookimpl
from ireebench.plugins_util import loaded_plugin_names


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    except OSError:
        return ""
    return digest.hexdigest()


def _runtime_version() -> str:
    try:
        return importlib.metadata.version("iree-base-runtime")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


@hookimpl
def ireebench_report_context(config, context):
    modules = list(config.getoption("module") or [])
    module = modules[-1] if modules else ""
    context.extra["ireebench_version"] = __version__
    context.extra["iree_runtime_version"] = _runtime_version()
    context.extra["iree_devices"] = list(config.getoption("device") or []) or ["local-task"]
    context.extra["iree_module"] = module
    context.extra["iree_module_sha256"] = _sha256(module) if module and module != "-" else ""
    context.extra["ireebench_plugins"] = loaded_plugin_names(config.pm)
