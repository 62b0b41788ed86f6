"""The store's tables and their versions (SQLAlchemy Core; one code path for SQLite and PostgreSQL).

Tables (prefixed ``ireebench_`` so a team's existing database can hold them):
``ireebench_schema`` (the version), ``ireebench_runs`` (a stored run: the
report's text and sha256, its provenance), ``ireebench_rows`` (a report row:
its full JSON object, the indexed columns queries use, its samples and,
since version 2, its own provenance, :func:`ireebench.comparison.machine.row_context`)
and ``ireebench_tags`` (the ``--benchmark_context`` entries).

**Migrations** are this module's :data:`MIGRATIONS`, applied in order inside
one write transaction that holds the database's write lock, so processes
opening a store at once migrate it once and a migration killed halfway
leaves the previous version; when a step changes a table, the tables a
previous step created are frozen in that step. Why steps of our own rather
than Alembic, and the versions: docs/store.md, "The database".
"""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

schema_version = sa.Table(
    "ireebench_schema", metadata,
    sa.Column("version", sa.Integer, nullable=False),
)

runs = sa.Table(
    "ireebench_runs", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("run_id", sa.String(64), nullable=False, unique=True),
    sa.Column("report_sha256", sa.String(64), nullable=False, unique=True),
    sa.Column("run_time", sa.Double, nullable=False, index=True),  # the run's date, epoch s
    sa.Column("date", sa.String(64), nullable=False),  # as the context says it
    sa.Column("saved_at", sa.Double, nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("exit_status", sa.Integer),
    sa.Column("source", sa.String(16), nullable=False),
    sa.Column("source_path", sa.Text, nullable=False),
    sa.Column("host_name", sa.String(255), nullable=False, index=True),
    sa.Column("fingerprint", sa.String(32), nullable=False, index=True),
    sa.Column("machine", sa.Text, nullable=False),
    sa.Column("devices", sa.Text, nullable=False),  # JSON list
    sa.Column("ireebench_version", sa.String(64), nullable=False),
    sa.Column("iree_version", sa.String(64), nullable=False),
    sa.Column("module", sa.Text, nullable=False),
    sa.Column("module_sha256", sa.String(64), nullable=False, index=True),
    sa.Column("compile_flags", sa.Text, nullable=False),  # JSON list
    sa.Column("plugins", sa.Text, nullable=False),  # JSON list
    sa.Column("git_commit", sa.String(64), nullable=False, index=True),
    sa.Column("git_branch", sa.String(255), nullable=False, index=True),
    sa.Column("tags", sa.Text, nullable=False),  # JSON object
    sa.Column("context", sa.Text, nullable=False),  # JSON object
    sa.Column("report", sa.Text, nullable=False),  # the report's text
)


def _row_columns_v1() -> list[sa.Column]:
    """The columns of ireebench_rows that version 1 created (new objects each call)."""
    return [
        sa.Column("run", sa.Integer, sa.ForeignKey("ireebench_runs.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("position", sa.Integer, primary_key=True),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("run_name", sa.Text, nullable=False),
        sa.Column("run_type", sa.String(16), nullable=False),
        sa.Column("aggregate_name", sa.String(64), nullable=False),
        sa.Column("repetition_index", sa.Integer),
        sa.Column("error_occurred", sa.Boolean, nullable=False),
        sa.Column("real_time", sa.Double),
        sa.Column("cpu_time", sa.Double),
        sa.Column("time_unit", sa.String(8), nullable=False),
        sa.Column("data", sa.Text, nullable=False),  # the row's JSON object
        sa.Column("samples", sa.Text, nullable=False),  # JSON list, seconds per iteration
        sa.Column("batch_samples", sa.Text, nullable=False),  # JSON list
    ]


rows = sa.Table(
    "ireebench_rows", metadata, *_row_columns_v1(),
    # Since version 2: the provenance of the row's point (see the module docstring).
    sa.Column("fingerprint", sa.String(32), nullable=False, server_default=""),
    sa.Column("machine", sa.Text, nullable=False, server_default=""),
    sa.Column("devices", sa.Text, nullable=False, server_default=""),  # JSON list
    sa.Column("module", sa.Text, nullable=False, server_default=""),
    sa.Column("module_sha256", sa.String(64), nullable=False, server_default=""),
    sa.Index("ireebench_rows_by_name", "run_name", "run"),
    sa.Index("ireebench_rows_by_fingerprint", "fingerprint", "run_name"),
)

# The columns version 2 added to ireebench_rows, and the runs column each is
# filled in from for the rows stored before.
ROW_PROVENANCE = {"fingerprint": "fingerprint", "machine": "machine", "devices": "devices",
                  "module": "module", "module_sha256": "module_sha256"}

tags = sa.Table(
    "ireebench_tags", metadata,
    sa.Column("run", sa.Integer, sa.ForeignKey("ireebench_runs.id", ondelete="CASCADE"),
              primary_key=True),
    sa.Column("key", sa.String(255), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
    sa.Index("ireebench_tags_by_key", "key", "run"),
)


def _version_1() -> list[sa.Table]:
    """The tables as version 1 created them (frozen: ireebench_rows has changed since)."""
    frozen = sa.MetaData()
    return [runs.to_metadata(frozen), sa.Table(
        "ireebench_rows", frozen,
        *_row_columns_v1(), sa.Index("ireebench_rows_by_name", "run_name", "run")), tags.to_metadata(frozen)]


def _create_runs_rows_tags(connection) -> None:
    tables = _version_1()
    tables[0].metadata.create_all(connection, tables=tables)


def _add_row_provenance(connection) -> None:
    """Each row's own provenance: the columns, then the rows stored before get their
    run's values (the context's, which described every row of such a run)."""
    preparer = connection.dialect.identifier_preparer
    for name in ROW_PROVENANCE:
        definition = sa.schema.CreateColumn(rows.c[name]).compile(dialect=connection.dialect)
        connection.execute(sa.text(f"ALTER TABLE {preparer.format_table(rows)} "
                                   f"ADD COLUMN {definition}"))
    connection.execute(rows.update().values({
        rows.c[name]: sa.select(runs.c[source]).where(runs.c.id == rows.c.run)
        .scalar_subquery() for name, source in ROW_PROVENANCE.items()}))
    next(index for index in rows.indexes
         if index.name == "ireebench_rows_by_fingerprint").create(connection)


# (version, what it does, step(connection)); applied in order to reach the last version.
MIGRATIONS = [
    (1, "runs, rows and tags", _create_runs_rows_tags),
    (2, "each row's fingerprint, machine, devices, module and module sha256",
     _add_row_provenance),
]
SCHEMA_VERSION = MIGRATIONS[-1][0]


def stored_version(connection) -> int:
    """The database's schema version (0: no store there yet)."""
    if not sa.inspect(connection).has_table(schema_version.name):
        return 0
    version = connection.execute(sa.select(sa.func.max(schema_version.c.version))).scalar()
    return int(version or 0)


def apply_migrations(connection, migrations=MIGRATIONS) -> int:
    """Brings the database to the last version of ``migrations``, in the caller's
    (locked) transaction; returns the version it found."""
    found = stored_version(connection)
    latest = migrations[-1][0]
    if found > latest:
        return found
    if found == 0:
        schema_version.create(connection, checkfirst=True)
    for version, _, step in migrations:
        if version > found:
            step(connection)
    if found == 0:
        connection.execute(schema_version.insert().values(version=latest))
    elif found < latest:
        connection.execute(schema_version.update().values(version=latest))
    return found
