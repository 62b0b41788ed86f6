"""Versions: ireebench's (also in pyproject.toml), and of what it runs on.

Shared by ``ireebench --version``, ``ireebench plugins`` and the report
context (the ``provenance`` plugin).
"""

from __future__ import annotations

import platform

from ._installed import distribution_version

__version__ = "0.1.0"

RUNTIME_DISTRIBUTIONS = ("iree-base-runtime", "iree-runtime")
COMPILER_DISTRIBUTIONS = ("iree-base-compiler", "iree-compiler")


def runtime_version() -> str:
    """Version of the installed IREE runtime package, or "unknown"."""
    return distribution_version(*RUNTIME_DISTRIBUTIONS) or "unknown"


def compiler_version() -> str | None:
    """Version of the installed IREE compiler package, or None."""
    return distribution_version(*COMPILER_DISTRIBUTIONS)


def version_lines(pm=None) -> list[str]:
    """What ``ireebench --version`` prints (pytest's ``--version`` spirit)."""
    lines = [f"ireebench {__version__}",
             f"iree-base-runtime {runtime_version()}",
             f"iree-base-compiler {compiler_version() or 'not installed'}",
             f"Python {platform.python_version()} ({platform.python_implementation()})"]
    infos = getattr(pm, "infos", {}) or {}
    third_party = [info for info in infos.values() if not info.builtin]
    if third_party:
        lines.append("plugins:")
        for info in third_party:
            version = f" {info.version}" if info.version else ""
            where = info.distribution or info.path
            lines.append(f"  {info.name}{version} ({info.origin}: {where})")
    return lines


__all__ = [
    "__version__", "compiler_version", "runtime_version"
]
