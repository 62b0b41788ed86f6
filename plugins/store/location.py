"""Where the results store is, and opening it: the one place SQLAlchemy is imported.

``--benchmark_storage=URL`` (else ``IREEBENCH_STORAGE``, else the default)
names the store:

* a path, or ``sqlite:///PATH`` (``sqlite:////abs/path``): an SQLite file;
* ``postgresql://USER@HOST/DB`` or a libpq URL with a socket directory,
  ``postgresql://bench@/results?host=/run/postgresql`` (the database must
  exist; its tables are created on first use);
* by default ``$XDG_DATA_HOME/ireebench/results.sqlite``
  (``~/.local/share/ireebench/results.sqlite``).

The database code (:mod:`.database`, SQLAlchemy Core and psycopg) is the
``store`` extra. It is imported here, inside :func:`_database`, only when
a store is used (or a URL shown): the one documented exception to
"imports at the top" (``tests/core/test_imports.py`` lists it), so that
``--help`` and runs without ``--benchmark_save`` never pay for importing
it. Without the extra, using the store is one line naming it (checked
before anything else, so that line is never another).

A URL is shown, everywhere, with its secrets masked
(:func:`display_url`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ireebench.errors import UsageError

EXTRA = 'pip install "ireebench[store]"'
ENVIRONMENT_VARIABLE = "IREEBENCH_STORAGE"
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*)://")
POSTGRES_SCHEMES = ("postgresql", "postgres", "postgresql+psycopg")
# The modules whose absence means the extra is not installed.
EXTRA_MODULES = ("sqlalchemy", "psycopg", "psycopg_binary")


def default_storage() -> Path:
    """``$XDG_DATA_HOME/ireebench/results.sqlite`` (the XDG base directory rule)."""
    data_home = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"),
                                                                ".local", "share")
    return Path(data_home) / "ireebench" / "results.sqlite"


def storage_url(value: str | None = None) -> str:
    """The store's URL: ``sqlite:///ABSOLUTE_PATH`` or a ``postgresql://`` URL."""
    text = (value or os.environ.get(ENVIRONMENT_VARIABLE) or "").strip()
    if not text:
        return f"sqlite:///{default_storage()}"
    scheme = _SCHEME.match(text)
    if scheme is None:
        return f"sqlite:///{Path(text).expanduser().resolve()}"
    name = scheme.group(1).lower()
    if name == "sqlite":
        path = text[len("sqlite:///"):] if text.startswith("sqlite:///") else ""
        if not path:
            raise UsageError(f"--benchmark_storage={text}: expected sqlite:///PATH")
        return f"sqlite:///{Path(path).expanduser().resolve()}"
    if name in POSTGRES_SCHEMES:
        return text
    raise UsageError(f"--benchmark_storage={display_url(text)}: unknown kind of store "
                     f"{name!r} (a path, sqlite:///PATH or postgresql://...)")


def sqlite_path(url: str) -> Path | None:
    """The file of an SQLite URL (None for PostgreSQL)."""
    return Path(url[len("sqlite:///"):]) if url.startswith("sqlite:///") else None


# The files SQLite keeps beside the database (WAL mode; a rollback journal).
SQLITE_COMPANIONS = ("-wal", "-shm", "-journal")


def register_store(files, url: str) -> None:
    """Registers an SQLite store's file and its companions as inputs of a run or
    command (:class:`ireebench.outfiles.RunFiles`): no output may replace them."""
    path = sqlite_path(url)
    if path is None:
        return
    files.add_input(f"the results store {url}", path)
    for suffix in SQLITE_COMPANIONS:
        files.add_input(f"the results store's {suffix} file {path}{suffix}", f"{path}{suffix}")


def _needs_extra(exc: ImportError) -> UsageError | None:
    """The line for a module of the extra that is missing (None for another one)."""
    if (exc.name or "").split(".")[0] in EXTRA_MODULES:
        return UsageError(f"the results store needs the 'store' extra: {EXTRA}")
    return None


def _database():
    """The database module (the ``store`` extra); without it, one line naming the extra."""
    try:
        from . import database  # the store extra, imported only here (module docstring)
    except ImportError as exc:
        raise (_needs_extra(exc) or exc) from None
    return database


def display_url(url: str) -> str:
    """The URL as messages show it, its password masked (SQLAlchemy's rendering:
    :func:`.database.display_url`); without the extra, nothing after the scheme
    but a path's."""
    if sqlite_path(url) is not None:
        return url
    try:
        return _database().display_url(url)
    except UsageError:
        scheme = _SCHEME.match(url)
        return f"{scheme.group(0)}..." if scheme else "..."


def open_store(url: str, create: bool, write: bool = True):
    """The :class:`~.database.Store` at ``url`` (its schema created or migrated).

    ``create``: make the database file (SQLite) when missing; otherwise a
    missing store is one line saying so. ``write=False``: the command only
    reads (``history``, ``store export``, ``stored:`` references): an SQLite
    store is opened read-only, so a reader who may not write it reads it.
    The extra is checked first: without it, that is the line.
    """
    database = _database()
    path = sqlite_path(url)
    if path is not None and not create and not path.exists():
        raise UsageError(f"--benchmark_storage={url}: no results store there yet (save a run "
                         "with --benchmark_save, or import reports: ireebench store import)")
    try:
        return database.Store(url, create, write=write)
    except ImportError as exc:  # psycopg, imported when a PostgreSQL store opens
        raise (_needs_extra(exc) or exc) from None
