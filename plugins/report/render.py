"""What a report needs before it is drawn, without matplotlib.

The drawing (:mod:`.build`, :mod:`.charts`) imports matplotlib, the
``report`` extra, which a benchmark run and ``--help`` must not pay for:
:func:`load_renderer` is the one place that imports it, when a report is
made (the documented lazy import of ``tests/core/test_imports.py``), and
says in one line which extra to install when it is missing. The checks of
the outputs and of the inputs' contents (nothing to draw) are here too, so
that they come before anything is drawn.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from ireebench.errors import UsageError

CHART_FORMATS = ("svg", "png")
EXTRA = 'pip install "ireebench[report]"'
# The libraries the drawing imports: missing, the report names the extra.
REQUIRED = ("matplotlib",)


def missing_library() -> str:
    """The first library of :data:`REQUIRED` that is not installed ("" if none)."""
    for name in REQUIRED:
        if importlib.util.find_spec(name) is None:
            return name
    return ""


def require_renderer(flag: str) -> None:
    """A one-line error naming the extra when the drawing's libraries are missing."""
    missing = missing_library()
    if missing:
        raise UsageError(f"{flag}: needs {missing}, which is not installed: {EXTRA}")


def load_renderer(flag: str = "report"):
    """The drawing module (:mod:`ireebench.plugins.report.build`), imported now."""
    require_renderer(flag)
    try:
        from . import build  # the documented lazy import (tests/core/test_imports.py)
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] in REQUIRED:
            raise UsageError(f"{flag}: needs {exc.name}, which is not installed: "
                             f"{EXTRA}") from None
        raise
    return build


def check_output_dir(path: str, flag: str = "output_dir") -> None:
    """``--output_dir``: a directory, or a path whose parent is one (it is created)."""
    if not path:
        return
    target = Path(path)
    if target.exists() and not target.is_dir():
        raise UsageError(f"--{flag}={path}: not a directory")
    if not target.exists() and not target.parent.is_dir():
        raise UsageError(f"--{flag}={path}: directory {target.parent} does not exist")


def readable_reports(config, reports: list, what: str = "report") -> list:
    """The reports (:class:`.data.Report`), once each one with nothing to draw was
    said in one line; when none has anything, that line is the error."""
    empty = [(report, report.nothing_to_draw()) for report in reports]
    empty = [(report, reason) for report, reason in empty if reason]
    if len(empty) == len(reports):
        report, reason = empty[0]
        more = f" (and {len(empty) - 1} more input(s))" if len(empty) > 1 else ""
        raise UsageError(f"{what}: {report.label}: nothing to draw ({reason}){more}")
    for report, reason in empty:
        config.stderr.write(f"ireebench: warning: {what}: {report.label}: nothing to draw "
                            f"({reason})\n")
    return reports
