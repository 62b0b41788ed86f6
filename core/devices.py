"""The ``--device`` values and their HAL drivers, read without the runtime.

Plugins that only need to know which devices a run names (native passes,
provenance, the MLIR compiler's target) read them here; asking the
runtime whether a driver exists is :func:`ireebench._session.check_drivers`.
"""

from __future__ import annotations

# The HAL device without --device, as in the native tool.
DEFAULT_DEVICE = "local-task"


def device_uris(config) -> list[str]:
    """The --device values, or the default device."""
    return list(config.getoption("device") or []) or [DEFAULT_DEVICE]


def driver_of(uri: str) -> str:
    """``cuda://0`` -> ``cuda``, ``local-task`` -> ``local-task``."""
    return uri.split("://", 1)[0].split(":", 1)[0]


__all__ = [
    "device_uris", "driver_of"
]
