"""What names stored runs: ``stored:...`` references and ``--where KEY=VALUE`` filters.

A reference is ``stored:SELECTOR`` with an optional query of filters::

    stored:latest                   the newest complete run
    stored:latest~1                 the one before it
    stored:3f2a9c1b                 a run by its id (a unique prefix of 4+ characters)
    stored:history                  the recent runs: a baseline (``--window`` per benchmark)
    stored:latest?branch=main&host=ci-7

Filters, from the query and from ``--where`` (repeatable; all must hold):
the keys of :data:`COLUMN_FILTERS` match the run's provenance (those of
:data:`ROW_FILTERS` each row's own: its fingerprint, devices and module's
sha256), any other key matches a ``--benchmark_context`` entry (a tag) of
that name. Nothing
here touches a database (this module loads with every run).
"""

from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass

from ireebench.errors import UsageError

PREFIX = "stored:"
LATEST = "latest"
HISTORY = "history"

# filter key -> (runs column, how it matches): "=" equal, "prefix", "contains" (a JSON list)
COLUMN_FILTERS = {
    "branch": ("git_branch", "="),
    "commit": ("git_commit", "prefix"),
    "host": ("host_name", "="),
    "fingerprint": ("fingerprint", "prefix"),
    "status": ("status", "="),
    "source": ("source", "="),
    "module_sha256": ("module_sha256", "prefix"),
    "ireebench_version": ("ireebench_version", "="),
    "iree_version": ("iree_version", "="),
    "run": ("run_id", "prefix"),
    "device": ("devices", "contains"),  # a HAL device URI, or the start of one (its driver)
}
# The filters of a row's own provenance (columns of ireebench_rows too): where a
# query selects rows, they select rows (a sweep's local-task rows, a suite's
# rows of one module); elsewhere a run with such a row.
ROW_FILTERS = frozenset({"fingerprint", "module_sha256", "device"})
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*\Z")
_LATEST = re.compile(r"latest(?:~(\d+))?\Z")
_RUN_ID = re.compile(r"[0-9a-fA-F]{4,64}\Z")
# latest~N: more runs back than any store holds is a typo (and would overflow
# the databases' 64-bit OFFSET).
MAX_OFFSET = 10**9


@dataclass(frozen=True)
class Reference:
    """A parsed ``stored:`` reference."""

    text: str
    selector: str  # LATEST, HISTORY, or a run id prefix
    offset: int = 0  # latest~N
    filters: tuple[tuple[str, str], ...] = ()


def is_stored(reference: str) -> bool:
    return isinstance(reference, str) and reference.startswith(PREFIX)


def parse_filter(text: str, where: str = "--where") -> tuple[str, str]:
    """``KEY=VALUE`` (``where`` names the flag or reference in the message)."""
    key, separator, value = str(text).partition("=")
    key = key.strip()
    if not separator or not _KEY.match(key):
        raise UsageError(f"{where}={text}: expected KEY=VALUE (e.g. branch=main, "
                         f"commit=3f2a9c, host=NAME, or a --benchmark_context key)")
    return key, value


def parse_reference(text: str) -> Reference:
    """Parses ``stored:SELECTOR[?KEY=VALUE&...]``; a malformed one is one line."""
    body = text[len(PREFIX):]
    selector, _, query = body.partition("?")
    filters = []
    for item in filter(None, query.split("&")):
        key, value = parse_filter(urllib.parse.unquote(item), text)
        filters.append((key, value))
    latest = _LATEST.match(selector)
    if latest:
        offset = latest.group(1) or "0"
        if len(offset) > len(str(MAX_OFFSET)) or int(offset) > MAX_OFFSET:
            raise UsageError(f"{text}: ~{offset[:24]}{'...' if len(offset) > 24 else ''} is "
                             f"more runs back than a store holds (at most ~{MAX_OFFSET})")
        return Reference(text, LATEST, int(offset), tuple(filters))
    if selector == HISTORY:
        return Reference(text, HISTORY, 0, tuple(filters))
    if _RUN_ID.match(selector):
        return Reference(text, selector.lower(), 0, tuple(filters))
    raise UsageError(f"{text}: unknown stored reference (stored:latest, stored:latest~N, "
                     "stored:history, stored:RUN_ID, each with an optional ?KEY=VALUE&...)")
