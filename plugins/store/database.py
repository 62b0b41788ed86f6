"""The results store: one SQLAlchemy Core code path for SQLite and PostgreSQL.

Imported only when a store is used (:func:`.location.open_store`: the
``store`` extra). A save is one transaction (a process killed mid-save leaves
no partial run); concurrent saves all land (SQLite in WAL mode with a busy
timeout of :data:`BUSY_TIMEOUT_S` and ``BEGIN IMMEDIATE``, PostgreSQL's
advisory lock for the schema); a database's error is one line naming the
store. Queries select runs by the filters of :mod:`.references`; ``latest``
and ``history`` use complete runs that measured one of the compared run's
benchmarks with the same row fingerprint (any machine with ``any_machine``),
never that run itself. See docs/store.md, "The database".
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import signal
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa
from ireebench.comparison.machine import describe_machine, row_context, row_fingerprint
from ireebench.errors import UsageError, one_line
from ireebench.signals import held_signal

from .records import COMPLETE, RunRecord, row_provenance
from .references import COLUMN_FILTERS, LATEST, ROW_FILTERS
from .schema import SCHEMA_VERSION, apply_migrations, rows, runs, stored_version, tags

# How long a save waits for another writer's lock (SQLite), in slices of
# LOCK_POLL_S (see Store._begin); after LOCK_NOTE_S it says so.
BUSY_TIMEOUT_S = 60.0
LOCK_POLL_S = 0.1
LOCK_NOTE_S = 1.0
_SQLITE_BUSY = 5
# The advisory lock key of schema migrations on PostgreSQL ("ireebnch").
_MIGRATION_LOCK = 0x6972656562_6e6368
_WRITE = "ireebench_write"
_SQLITE = "sqlite:///"
_SHORT_ID = 12
# libpq's query parameters that hold a secret; shown as MASK in every message.
SECRET_PARAMETERS = ("password", "sslpassword")
MASK = "***"
_MASKED_VALUE = "IREEBENCHMASKED"  # a placeholder SQLAlchemy renders as it is
_SECRET_QUERY = re.compile(r"(?i)((?:^|&)(?:" + "|".join(SECRET_PARAMETERS) + r")=)([^&]*)")


def _writable(path: Path) -> bool:
    """This user may write an SQLite file and its directory (its -wal, -shm files)."""
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)


class _LockTimeout(Exception):
    """Another writer held the lock past BUSY_TIMEOUT_S."""


def short_id(run_id: str) -> str:
    return run_id[:_SHORT_ID]


def display_url(url: str) -> str:
    """The URL as every message, listing and report shows it: rendered by SQLAlchemy
    with the password masked (``URL.render_as_string(hide_password=True)``), libpq's
    secret query parameters (``?password=``, ``?sslpassword=``) masked too. A URL
    SQLAlchemy cannot parse is masked by hand: nothing of what stands between the
    user name and the last ``@`` is shown."""
    if url.startswith(_SQLITE):
        return url  # a path: no secret
    try:
        parsed = sa.engine.make_url(url)
    except (ValueError, sa.exc.ArgumentError):
        return _masked_by_hand(url)
    if parsed.host and "@" in parsed.host:  # a raw '@' in the password: SQLAlchemy splits it
        return _masked_by_hand(url)
    query = {key: (_MASKED_VALUE if key.lower() in SECRET_PARAMETERS else value)
             for key, value in parsed.query.items()}
    shown = parsed.set(query=query).render_as_string(hide_password=True)
    # The query as libpq users write it (?host=/run/postgresql), not percent-encoded.
    base, question, rest = shown.partition("?")
    return base + question + urllib.parse.unquote(rest).replace(_MASKED_VALUE, MASK)


def _masked_by_hand(url: str) -> str:
    scheme, separator, rest = url.partition("://")
    head, question, query = rest.partition("?")
    userinfo, at, host = head.rpartition("@")
    if at:
        user, colon, _ = userinfo.partition(":")
        head = f"{user}:{MASK}@{host}" if colon else f"{user}@{host}"
    query = _SECRET_QUERY.sub(lambda match: match.group(1) + MASK, query)
    return f"{scheme}{separator}{head}{question}{query}"


def _secrets(url: str) -> list[str]:
    """The secrets a URL holds, as given and percent-decoded, longest first (for
    scrubbing the messages of the database's errors)."""
    found = []
    _, _, rest = url.partition("://")
    head, _, query = rest.partition("?")
    userinfo, at, _ = head.rpartition("@")
    if at and ":" in userinfo:
        found.append(userinfo.partition(":")[2])
    found += [match.group(2) for match in _SECRET_QUERY.finditer(query)]
    found += [urllib.parse.unquote(secret) for secret in found]
    return sorted({secret for secret in found if secret}, key=len, reverse=True)


def engine_url(url: str) -> sa.engine.URL:
    """The SQLAlchemy URL of a ``postgresql://`` store (psycopg 3), checked: a URL it
    cannot parse, a port that is not a number, a raw ``@`` in the password are one
    line (the password masked)."""
    shown = display_url(url)
    try:
        parsed = sa.engine.make_url(url)
    except ValueError:  # int(port)
        raise UsageError(f"--benchmark_storage={shown}: the port is not a number") from None
    except sa.exc.ArgumentError:
        raise UsageError(f"--benchmark_storage={shown}: not a URL SQLAlchemy can parse "
                         "(postgresql://USER:PASSWORD@HOST:PORT/DATABASE)") from None
    if parsed.host and "@" in parsed.host:
        raise UsageError(f"--benchmark_storage={shown}: an '@' in the user name or password "
                         "must be written %40")
    if parsed.port is not None and not 0 < parsed.port < 65536:
        raise UsageError(f"--benchmark_storage={shown}: the port {parsed.port} is not "
                         "between 1 and 65535")
    return parsed.set(drivername="postgresql+psycopg")


@dataclass(frozen=True)
class RunSummary:
    """What listings show of a stored run (for one of its benchmarks, from
    :meth:`Store.benchmarks`: ``machine``, ``fingerprint`` and the module are
    that benchmark's rows' own)."""

    pk: int
    run_id: str
    date: str
    run_time: float
    status: str
    source: str
    host_name: str
    machine: str
    fingerprint: str
    git_commit: str
    git_branch: str
    tags: dict
    module: str = ""
    module_sha256: str = ""

    @property
    def label(self) -> str:
        return f"stored:{short_id(self.run_id)}"


_SUMMARY_COLUMNS = (runs.c.id, runs.c.run_id, runs.c.date, runs.c.run_time, runs.c.status,
                    runs.c.source, runs.c.host_name, runs.c.machine, runs.c.fingerprint,
                    runs.c.git_commit, runs.c.git_branch, runs.c.tags, runs.c.module,
                    runs.c.module_sha256)
_NEWEST_FIRST = (runs.c.run_time.desc(), runs.c.id.desc())
# What a benchmark's rows say for themselves (a sweep's, a suite's differ by row).
_ROW_SUMMARY = ("machine", "fingerprint", "module", "module_sha256")


def _summary(row) -> RunSummary:
    return RunSummary(row.id, row.run_id, row.date, row.run_time, row.status, row.source,
                      row.host_name, row.machine, row.fingerprint, row.git_commit,
                      row.git_branch, json.loads(row.tags or "{}"), row.module,
                      row.module_sha256)


def _filter_clause(key: str, value: str, on_rows: bool = False):
    """The WHERE clause of one ``KEY=VALUE`` filter (see :mod:`.references`).

    A filter of a row's own provenance (:data:`.references.ROW_FILTERS`)
    applies to the rows of a query that selects rows (``on_rows``), else
    holds for a run with such a row."""
    if key in COLUMN_FILTERS:
        column, how = COLUMN_FILTERS[key]
        row_level = key in ROW_FILTERS
        column = (rows if row_level else runs).c[column]
        if how == "prefix":
            clause = column.startswith(value, autoescape=True)
        elif how == "contains":  # a device URI of the JSON list, or its driver: cuda, cuda://0
            clause = column.contains(json.dumps(value)[:-1], autoescape=True)
        else:
            clause = column == value
        if row_level and not on_rows:
            return sa.exists().where(rows.c.run == runs.c.id, clause)
        return clause
    return sa.exists().where(tags.c.run == runs.c.id, tags.c.key == key, tags.c.value == value)


def _clauses(filters, complete_only: bool, on_rows: bool = False) -> list:
    clauses = [_filter_clause(key, value, on_rows) for key, value in filters]
    if complete_only and not any(key == "status" for key, _ in filters):
        clauses.append(runs.c.status == COMPLETE)
    return clauses


def _like_rows(like: dict | None) -> list[dict]:
    """The rows of ``like`` that measured something (not failed), with a name."""
    found = []
    for entry in (like or {}).get("benchmarks") or []:
        if isinstance(entry, dict) and not entry.get("error_occurred"):
            name = entry.get("run_name") or entry.get("name")
            if isinstance(name, str) and name:
                found.append(entry)
    return found


def _like_names(like: dict | None) -> list[str]:
    names = []
    for entry in _like_rows(like):
        name = entry.get("run_name") or entry.get("name")
        if name not in names:
            names.append(name)
    return names


def _like_context(like: dict | None) -> dict:
    context = (like or {}).get("context")
    return context if isinstance(context, dict) else {}


def _like_run_id(like: dict | None) -> str | None:
    """The id of the run ``like`` is a report of (it was saved), if any."""
    found = _like_context(like).get("ireebench_run_id")
    return found if isinstance(found, str) and found else None


def _like_machines(like: dict | None) -> dict[str, list[str]]:
    """Row fingerprint -> the names of ``like``'s benchmarks measured there (each
    row's own machine and devices: a sweep over devices has several)."""
    context = _like_context(like)
    machines: dict[str, list[str]] = {}
    memo: dict = {}
    for entry in _like_rows(like):
        names = machines.setdefault(row_provenance(context, entry, memo)["fingerprint"], [])
        name = entry.get("run_name") or entry.get("name")
        if name not in names:
            names.append(name)
    return machines


def _describe_like(like: dict | None) -> str:
    """The machines of ``like``'s rows, for messages."""
    context = _like_context(like)
    described = []
    for entry in _like_rows(like) or [{}]:
        text = describe_machine(row_context(context, entry))
        if text not in described:
            described.append(text)
    return "; ".join(described)


def _describe(filters) -> str:
    return "&".join(f"{key}={value}" for key, value in filters)


class Store:
    """An open results store (see the module docstring).

    ``write=False``: the command only reads; SQLite is opened read-only (see
    :meth:`_sqlite_target`) and never migrated. ``notify(text)``: where the store says why a save
    waits (another writer's lock) and that a signal waits for the save.
    """

    def __init__(self, url: str, create: bool = True, write: bool = True, notify=None):
        self.url = url
        self.display = display_url(url)
        self._secrets = _secrets(url)
        self.write = write or create
        self.notify = notify
        with self._errors("cannot open it"):
            self.engine = self._engine(url, create)
            try:
                self._migrate()
            except BaseException:
                # Closed, SQLite removes the -wal and -shm files its failed
                # open made beside a file that is no (sound) store.
                self.engine.dispose()
                raise
        # No connection is kept between uses: a run opens its store before its
        # worker forks, and a database connection must not cross a fork (SQLite
        # and libpq alike); the supervisor would also hold it to its end, which
        # does not collect its objects (gc.freeze in the CLI), so the last close
        # would never checkpoint an SQLite store's -wal file away.
        self.engine.dispose()

    # --- connection ----------------------------------------------------------

    @contextlib.contextmanager
    def _errors(self, action: str):
        """Database errors as one line naming the store."""
        try:
            yield
        except UsageError:
            raise
        except _LockTimeout:
            raise UsageError(f"--benchmark_storage={self.display}: {action}: another process "
                             f"held the store's write lock for {BUSY_TIMEOUT_S:g} s (SQLite: "
                             "database is locked)") from None
        except (sa.exc.SQLAlchemyError, OSError) as exc:
            detail = getattr(exc, "orig", None) or exc
            raise UsageError(f"--benchmark_storage={self.display}: {action}: "
                             f"{self._scrubbed(one_line(detail))}") from None

    def _scrubbed(self, text: str) -> str:
        """A database's message with the URL's secrets masked (a driver may quote them)."""
        text = text.replace(self.url, self.display)
        for secret in self._secrets:
            text = text.replace(secret, MASK)
        return text

    def _engine(self, url: str, create: bool):
        path = Path(url[len(_SQLITE):]) if url.startswith(_SQLITE) else None
        if path is None:
            self.kind = "postgresql"
            return sa.create_engine(engine_url(url), connect_args={"connect_timeout": 10})
        self.kind = "sqlite"
        if create:
            path.parent.mkdir(parents=True, exist_ok=True)
        engine = sa.create_engine(self._sqlite_target(path, create),
                                  connect_args={"timeout": BUSY_TIMEOUT_S})
        sa.event.listen(engine, "connect", _sqlite_connect if self.write else _sqlite_read_only)
        sa.event.listen(engine, "begin", _sqlite_begin)
        return engine

    def _sqlite_target(self, path: Path, create: bool) -> str:
        """The SQLite URI: ``mode=rwc`` to create, ``rw`` to write, else ``mode=ro``, and
        ``immutable=1`` where SQLite could not open a WAL store read-only otherwise:
        a directory this user cannot write (a 0644 store of another user) and no
        ``-wal`` file, so that every committed run is in the file itself."""
        mode = "rwc" if create else "rw" if self.write else "ro"
        target = f"sqlite:///file:{urllib.parse.quote(str(path))}?mode={mode}&uri=true"
        if not self.write and not os.access(path.parent, os.W_OK) and \
                not os.path.exists(f"{path}-wal"):
            target += "&immutable=1"
        return target

    @contextlib.contextmanager
    def _transaction(self, write: bool = False):
        connection, transaction = self._begin(write)
        with connection, transaction:
            yield connection

    def _begin(self, write: bool):
        """A connection and its transaction. An SQLite write begins with ``BEGIN
        IMMEDIATE`` (the write lock first), waiting for another writer's lock in
        slices of :data:`LOCK_POLL_S`, in Python: a signal that arrives meanwhile
        is handled (held back by a save, acknowledged to a worker's supervisor)
        within a slice, never after the whole wait; the wait ends after
        :data:`BUSY_TIMEOUT_S` (:class:`_LockTimeout`)."""
        start = time.monotonic()
        told = set()
        while True:
            connection = self.engine.connect()
            try:
                connection.execution_options(**{_WRITE: write})
                return connection, connection.begin()
            except sa.exc.OperationalError as exc:
                connection.close()
                if not (write and self.kind == "sqlite" and _locked(exc)):
                    raise
            waited = time.monotonic() - start
            if waited >= BUSY_TIMEOUT_S:
                raise _LockTimeout()
            self._tell_waiting(waited, told)

    def _tell_waiting(self, waited: float, told: set) -> None:
        """Says, once each, that the save waits for a lock and that a signal waits
        for the save (a second one abandons it)."""
        if self.notify is None:
            return
        if waited >= LOCK_NOTE_S and "lock" not in told:
            told.add("lock")
            self.notify(f"waiting for another process's write lock on {self.display} "
                        f"(up to {BUSY_TIMEOUT_S:g} s)")
        signum = held_signal()
        if signum is not None and "signal" not in told:
            told.add("signal")
            self.notify(f"{signal.Signals(signum).name} received: saving the run first "
                        "(a second one abandons the save)")

    def _migrate(self) -> None:
        with self._transaction() as connection:
            found = stored_version(connection)
        if found == SCHEMA_VERSION:
            return
        if found < SCHEMA_VERSION and not self.write and self.kind == "sqlite":
            # A reader's SQLite file is open read-only: reopened to migrate it
            # if this user may write it (PostgreSQL's permissions decide there).
            if found == 0:
                raise UsageError(f"--benchmark_storage={self.display}: no results store there "
                                 "yet (save a run with --benchmark_save, or import reports: "
                                 "ireebench store import)")
            if not _writable(Path(self.url[len(_SQLITE):])):
                raise UsageError(f"--benchmark_storage={self.display}: the store's schema "
                                 f"version {found} is older than this ireebench's "
                                 f"({SCHEMA_VERSION}), and you may not write it to migrate "
                                 "it: its owner's next save or import will")
            self.engine.dispose()
            self.write = True
            self.engine = self._engine(self.url, create=False)
        if found < SCHEMA_VERSION:
            with self._transaction(write=True) as connection:
                if self.kind == "postgresql":
                    connection.execute(sa.select(sa.func.pg_advisory_xact_lock(_MIGRATION_LOCK)))
                found = apply_migrations(connection)
        if found > SCHEMA_VERSION:
            raise UsageError(f"--benchmark_storage={self.display}: the store's schema version "
                             f"{found} is newer than this ireebench knows ({SCHEMA_VERSION}): "
                             "upgrade ireebench")

    def close(self) -> None:
        self.engine.dispose()

    # --- saving --------------------------------------------------------------

    def save(self, record: RunRecord) -> tuple[str, bool]:
        """Stores a run in one transaction: ``(run_id, True)``, or the id of the stored
        run with the same id or report and ``False``."""
        columns = record.columns()
        with self._errors("cannot save the run"), self._transaction(write=True) as connection:
            found = connection.execute(
                sa.select(runs.c.run_id).where(sa.or_(
                    runs.c.run_id == record.run_id,
                    runs.c.report_sha256 == columns["report_sha256"]))).first()
            if found is not None:
                return found.run_id, False
            pk = connection.execute(runs.insert().values(**columns)).inserted_primary_key[0]
            if record.rows:
                memo: dict = {}  # a point's rows share their provenance
                connection.execute(rows.insert(), [
                    dict(run=pk, **row.columns(record.context, memo)) for row in record.rows])
            if record.tags:
                connection.execute(tags.insert(), [
                    {"run": pk, "key": str(key), "value": str(value)}
                    for key, value in record.tags.items()])
        return record.run_id, True

    # --- one run -------------------------------------------------------------

    def _reports(self, connection, pks: list[int]) -> dict[int, tuple[RunSummary, str]]:
        found = connection.execute(sa.select(*_SUMMARY_COLUMNS, runs.c.report)
                                   .where(runs.c.id.in_(pks)))
        return {row.id: (_summary(row), row.report) for row in found}

    def run(self, selector: str, filters=(), like: dict | None = None,
            any_machine: bool = False, offset: int = 0, reference: str = "",
            listed: frozenset | set = frozenset()) -> tuple:
        """``(RunSummary, report text)`` of ``stored:latest`` (``offset`` back) or of a
        run id prefix; the message of a reference naming nothing says why. ``like``'s
        own run is never the answer; if it is one of ``listed`` (the command named it as
        ``stored:latest~N`` itself) it keeps its place in the runs ``offset`` counts."""
        reference = reference or f"stored:{selector}"
        with self._errors("cannot read it"), self._transaction() as connection:
            if selector != LATEST:
                query = (sa.select(runs.c.id, runs.c.run_id)
                         .where(runs.c.run_id.startswith(selector, autoescape=True),
                                *_clauses(filters, False)).limit(3))
                found = connection.execute(query).all()
                if not found:
                    raise UsageError(f"{reference}: no stored run has that id in "
                                     f"{self.display}")
                if len(found) > 1:
                    listed = ", ".join(short_id(row.run_id) for row in found)
                    raise UsageError(f"{reference}: the id matches several runs ({listed}...): "
                                     "give more of it")
                return self._reports(connection, [found[0].id])[found[0].id]
            chosen, named, others = self._like_clauses(like, any_machine)
            own = _like_run_id(like)
            if own is not None and own in listed:
                others = []
            clauses = [*_clauses(filters, True), *others]
            matching = [sa.exists().where(rows.c.run == runs.c.id, chosen)] \
                if chosen is not None else []
            query = (sa.select(runs.c.id, runs.c.run_id).where(*clauses, *matching)
                     .order_by(*_NEWEST_FIRST).offset(offset).limit(2))
            found = [row for row in connection.execute(query) if row.run_id != own][:1]
            pk = found[0].id if found else None
            if pk is None:
                raise UsageError(self._nothing(connection, reference, filters, clauses,
                                               chosen is not named, named, like))
            return self._reports(connection, [pk])[pk]

    def _like_clauses(self, like: dict | None, any_machine: bool) -> tuple:
        """``(chosen, named, others)`` for runs to compare with ``like``: the clause of
        the stored rows it may be compared with (its benchmarks' names, each on the
        fingerprint of its own row; any machine with ``any_machine``), the clause of
        its names on any machine, both on ``ireebench_rows`` (None: no restriction),
        and the run clauses that leave ``like`` itself out."""
        if like is None:
            return None, None, []
        context = _like_context(like)
        names = _like_names(like)
        named = rows.c.run_name.in_(names) if names else None
        if any_machine:
            chosen = named
        else:
            machines = _like_machines(like)
            chosen = sa.or_(*(sa.and_(rows.c.fingerprint == fingerprint,
                                      rows.c.run_name.in_(names_there))
                              for fingerprint, names_there in machines.items())) \
                if machines else rows.c.fingerprint == row_fingerprint(context)
        others = []
        own_id = _like_run_id(like)
        if own_id:
            others.append(runs.c.run_id != own_id)
        return chosen, named, others

    def _nothing(self, connection, reference, filters, clauses, by_machine, named,
                 like) -> str:
        """Why a reference names no run: the machine (other machines have some), the
        filters, or an empty store. ``clauses``: on ``ireebench_runs``; ``by_machine``:
        the runs were chosen by machine; ``named``: the clause of ``like``'s names on
        ``ireebench_rows``, or None."""
        if by_machine:
            chosen = (sa.select(runs.c.id, rows.c.machine, runs.c.run_time)
                      .join(rows, rows.c.run == runs.c.id)
                      .where(*clauses, *([named] if named is not None else [])))
            newest = connection.execute(chosen.order_by(*_NEWEST_FIRST).limit(1)).first()
            if newest is not None:
                count = connection.execute(sa.select(sa.func.count(sa.distinct(
                    chosen.subquery().c.id)))).scalar()
                return (f"{reference}: no stored run on this machine "
                        f"({_describe_like(like)}); {count} on other "
                        f"machines, the newest on {newest.machine} (--any_machine uses them)")
        total = connection.execute(sa.select(sa.func.count()).select_from(runs)).scalar()
        if total:
            shown = _describe(filters) or "status=complete"
            what = " of these benchmarks" if _like_names(like) else ""
            return f"{reference}: no stored run{what} matches {shown} ({total} stored)"
        return (f"{reference}: no stored run in {self.display} (save one with "
                "--benchmark_save)")

    # --- a history -----------------------------------------------------------

    def history(self, filters=(), like: dict | None = None, any_machine: bool = False,
                window: int = 10) -> tuple[list[tuple[RunSummary, dict]], str]:
        """The runs of each of ``like``'s benchmarks, its last ``window`` each, newest
        first: ``([(summary, report restricted to those benchmarks)], note)``; the
        note says why there is none."""
        with self._errors("cannot read it"), self._transaction() as connection:
            chosen, named, others = self._like_clauses(like, any_machine)
            clauses = [*_clauses(filters, True, on_rows=True), *others]
            pairs = (sa.select(rows.c.run_name, rows.c.run)
                     .join(runs, runs.c.id == rows.c.run)
                     .where(*clauses, *([chosen] if chosen is not None else []),
                            rows.c.error_occurred == sa.false())
                     .group_by(rows.c.run_name, rows.c.run).subquery())
            rank = sa.func.row_number().over(partition_by=pairs.c.run_name,
                                             order_by=_NEWEST_FIRST).label("rank")
            ranked = (sa.select(pairs.c.run_name, pairs.c.run, rank)
                      .join(runs, runs.c.id == pairs.c.run).subquery())
            chosen = connection.execute(sa.select(ranked.c.run_name, ranked.c.run)
                                        .where(ranked.c.rank <= window)).all()
            allowed: dict[int, set[str]] = {}
            for row in chosen:
                allowed.setdefault(row.run, set()).add(row.run_name)
            note = ""
            if not allowed:
                note = self._nothing(connection, "stored:history", filters,
                                     [*_clauses(filters, True), *others],
                                     like is not None and chosen is not named, named, like)
            found = self._reports(connection, list(allowed))
        history = []
        for pk, (summary, text) in sorted(found.items(),
                                          key=lambda item: (-item[1][0].run_time, -item[0])):
            report = json.loads(text)
            report["benchmarks"] = [entry for entry in report.get("benchmarks") or []
                                    if isinstance(entry, dict)
                                    and (entry.get("run_name") or entry.get("name"))
                                    in allowed[pk]]
            history.append((summary, report))
        return history, note

    def benchmarks(self, filters=(), name_filter=None, limit: int = 0):
        """``{run_name: [(RunSummary, [row JSON objects])]}``, oldest run first, for every
        stored benchmark ``name_filter(run_name)`` accepts (its last ``limit`` runs);
        each summary has the machine, fingerprint and module of that benchmark's rows."""
        with self._errors("cannot read it"), self._transaction() as connection:
            clauses = _clauses(filters, False, on_rows=True)
            names = connection.execute(
                sa.select(rows.c.run_name).join(runs, runs.c.id == rows.c.run)
                .where(*clauses).distinct()).scalars().all()
            names = sorted(name for name in names if name_filter is None or name_filter(name))
            if not names:
                return {}
            found = connection.execute(
                sa.select(*_SUMMARY_COLUMNS, rows.c.run_name, rows.c.data,
                          *(rows.c[name].label(f"row_{name}") for name in _ROW_SUMMARY))
                .join(rows, rows.c.run == runs.c.id)
                .where(*clauses, rows.c.run_name.in_(names))
                .order_by(runs.c.run_time, runs.c.id, rows.c.position)).all()
        history: dict[str, list] = {name: [] for name in names}
        for row in found:
            series = history[row.run_name]
            if not series or series[-1][0].pk != row.id:
                own = {name: getattr(row, f"row_{name}") for name in _ROW_SUMMARY}
                series.append((dataclasses.replace(_summary(row), **own), []))
            series[-1][1].append(json.loads(row.data))
        if limit:
            history = {name: series[-limit:] for name, series in history.items()}
        return history


def _sqlite_connect(dbapi_connection, connection_record) -> None:
    """WAL, the busy timeout, and transactions begun by us (``_sqlite_begin``)."""
    dbapi_connection.isolation_level = None  # pysqlite's own BEGIN off: see _sqlite_begin
    cursor = dbapi_connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
    cursor.execute("PRAGMA journal_mode = WAL")
    # WAL with NORMAL: a committed run survives a killed process (not a power cut
    # before the next checkpoint), and a save does not wait for fsync twice.
    cursor.execute("PRAGMA synchronous = NORMAL")
    cursor.execute("PRAGMA foreign_keys = ON")
    cursor.close()


def _sqlite_read_only(dbapi_connection, connection_record) -> None:
    """A reader's connection: the busy timeout, nothing that would write."""
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
    cursor.close()


def _locked(exc: sa.exc.OperationalError) -> bool:
    """SQLite's SQLITE_BUSY: another connection holds the lock."""
    return getattr(exc.orig, "sqlite_errorcode", None) == _SQLITE_BUSY or \
        "database is locked" in str(exc.orig)


def _sqlite_begin(connection) -> None:
    """``BEGIN IMMEDIATE`` for a write: the write lock first, waiting for it at most
    one :data:`LOCK_POLL_S` slice here (``Store._begin`` waits on in Python)."""
    if not connection.get_execution_options().get(_WRITE, False):
        connection.exec_driver_sql("BEGIN")
        return
    connection.exec_driver_sql(f"PRAGMA busy_timeout = {int(LOCK_POLL_S * 1000)}")
    try:
        connection.exec_driver_sql("BEGIN IMMEDIATE")
    finally:
        connection.exec_driver_sql(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
