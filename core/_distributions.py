"""Installed distributions read with :mod:`importlib.metadata`.

Imported by :mod:`.installed` only when there is something to read (an
entry point of a group some distribution declares, a version asked for):
importlib.metadata's own imports cost a command that needs none of it
more than the rest of its start.
"""

from __future__ import annotations

import importlib.metadata


def entry_points(group: str) -> list:
    """The installed entry points of ``group``."""
    return list(importlib.metadata.entry_points(group=group))


def distribution_version(*names: str) -> str | None:
    """The version of the first of ``names`` that is installed, or None."""
    for name in names:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None
