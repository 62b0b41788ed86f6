"""What is installed: versions of distributions, and entry points of a group.

Both come from :mod:`importlib.metadata`, whose import costs more than the
rest of ``ireebench --help`` together (email, zipfile, csv ...). So
:func:`entry_points` first looks whether any installed distribution can
declare an entry point of the group at all, as importlib.metadata would
find them: the ``*.dist-info`` and ``*.egg-info`` directories (an egg's
``EGG-INFO``) on ``sys.path``, whose ``entry_points.txt`` names the group.
Only then, or where it cannot tell (a zip file on ``sys.path``, a finder
that provides distributions of its own), is :mod:`.distributions`
imported to read them; most environments have no ireebench plugin
installed, and their commands never import importlib.metadata.
:func:`distribution_version` reads a version from the same directories
(``--version``), importing it only where they cannot tell.
"""

from __future__ import annotations

import importlib.machinery
import os
import re
import sys

METADATA_SUFFIXES = (".dist-info", ".egg-info")
ENTRY_POINTS_FILE = "entry_points.txt"


def entry_points(group: str) -> list:
    """The installed entry points of ``group`` (:class:`importlib.metadata.EntryPoint`)."""
    if not may_declare_entry_points(group):
        return []
    from . import (
        _distributions as distributions,  # importlib.metadata: see LAZY_IMPORTS in test_imports.py
    )

    return distributions.entry_points(group)


def distribution_version(*names: str) -> str | None:
    """The version of the first of ``names`` that is installed, or None: read from
    its metadata directory as importlib.metadata would find it (the first on
    ``sys.path``), which is imported only where that cannot tell (``--version``
    paid ~10 ms for its import)."""
    for name in names:
        found = _version_from_directory(name)
        if found is _UNKNOWN:
            break
        if found is not None:
            return found
    else:
        return None
    from . import (
        _distributions as distributions,  # importlib.metadata: see LAZY_IMPORTS in test_imports.py
    )

    return distributions.distribution_version(*names)


_UNKNOWN = object()


def _normalized(name: str) -> str:
    """A distribution's name as importlib.metadata's lookup compares it (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower().replace("-", "_")


def _version_from_directory(name: str):
    """``name``'s version from the first metadata directory of it on ``sys.path``;
    None when there is none, _UNKNOWN where only importlib.metadata can tell (a
    finder of its own, an archive, a directory without a version)."""
    if any(finder is not importlib.machinery.PathFinder
           and getattr(finder, "find_distributions", None) is not None
           for finder in sys.meta_path):
        return _UNKNOWN
    wanted = _normalized(name)
    for entry in sys.path:
        for directory in _metadata_directories(entry or "."):
            if directory is None:
                return _UNKNOWN
            base = os.path.basename(directory)
            if base.lower() == "egg-info":
                return _UNKNOWN  # an .egg's: named by the egg
            if _normalized(base.rpartition(".")[0].partition("-")[0]) != wanted:
                continue
            metadata = "METADATA" if base.lower().endswith(".dist-info") else "PKG-INFO"
            path = directory if os.path.isfile(directory) else os.path.join(directory, metadata)
            try:
                with open(path, encoding="utf-8", errors="replace") as handle:
                    for line in handle:
                        if not line.strip():
                            break
                        if line.lower().startswith("version:"):
                            return line.split(":", 1)[1].strip()
            except OSError:
                pass
            return _UNKNOWN
    return None


def may_declare_entry_points(group: str) -> bool:
    """False only when no distribution importlib.metadata would find declares
    an entry point of ``group``; True when one may (or it cannot tell)."""
    for finder in sys.meta_path:
        if finder is not importlib.machinery.PathFinder and \
                getattr(finder, "find_distributions", None) is not None:
            return True  # distributions of its own: only importlib.metadata asks it
    section = f"[{group}]"
    for entry in sys.path:
        for directory in _metadata_directories(entry or "."):
            if directory is None:
                return True  # not a directory (a zip file): importlib.metadata reads it
            try:
                with open(os.path.join(directory, ENTRY_POINTS_FILE), encoding="utf-8",
                          errors="replace") as handle:
                    if section in handle.read():
                        return True
            except OSError:
                continue  # no entry points (or a PKG-INFO file named .egg-info)
    return False


def _metadata_directories(path: str):
    """The metadata directories importlib.metadata finds in the ``sys.path`` entry
    ``path``; None for an entry it reads as an archive."""
    try:
        children = os.listdir(path)
    except NotADirectoryError:
        yield None
        return
    except OSError:
        return  # missing or unreadable: importlib.metadata finds nothing there either
    egg = path.lower().endswith(".egg")
    for child in children:
        low = child.lower()
        if low.endswith(METADATA_SUFFIXES) or egg and low == "egg-info":
            yield os.path.join(path, child)
