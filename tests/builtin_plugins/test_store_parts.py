"""The store's parts on their own: git from .git, references, the migrations (on
SQLite and PostgreSQL), the URL of a store."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from ireebench.errors import UsageError
from ireebench.plugins.store import schema
from ireebench.plugins.store.database import Store
from ireebench.plugins.store.git import git_state
from ireebench.plugins.store.location import storage_url
from ireebench.plugins.store.records import record_of_report
from ireebench.plugins.store.references import HISTORY, LATEST, parse_filter, parse_reference

COMMIT = "a" * 40
OTHER = "b" * 40


def test_git_from_a_repository_a_packed_ref_and_a_worktree(tmp_path):
    repo = tmp_path / "repo"
    (repo / ".git" / "refs" / "heads").mkdir(parents=True)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (repo / ".git" / "refs" / "heads" / "main").write_text(COMMIT + "\n")
    (repo / "sub").mkdir()
    assert git_state(repo / "sub") == git_state(repo)
    assert (git_state(repo).commit, git_state(repo).branch) == (COMMIT, "main")
    # A branch only in packed-refs.
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/feature/x\n")
    (repo / ".git" / "packed-refs").write_text(
        f"# pack-refs with: peeled\n{OTHER} refs/heads/feature/x\n^{COMMIT}\n")
    assert (git_state(repo).commit, git_state(repo).branch) == (OTHER, "feature/x")
    # A worktree: a .git file, its own HEAD, the refs in the common directory.
    worktree_git = repo / ".git" / "worktrees" / "wt"
    worktree_git.mkdir(parents=True)
    (worktree_git / "HEAD").write_text("ref: refs/heads/main\n")
    (worktree_git / "commondir").write_text("../..\n")
    checkout = tmp_path / "wt"
    checkout.mkdir()
    (checkout / ".git").write_text(f"gitdir: {worktree_git}\n")
    assert (git_state(checkout).commit, git_state(checkout).branch) == (COMMIT, "main")
    # Detached (a CI checkout): the branch from the CI's variables.
    (worktree_git / "HEAD").write_text(OTHER + "\n")
    state = git_state(checkout, environ={"GITHUB_REF_NAME": "main"})
    assert (state.commit, state.branch) == (OTHER, "main")
    assert git_state(tmp_path / "wt", environ={}).branch == ""
    assert git_state(tmp_path, environ={}).commit == ""  # not a repository


def test_references_and_filters():
    assert parse_reference("stored:latest").offset == parse_reference("stored:latest~0").offset == 0
    assert parse_reference("stored:latest~2").offset == 2
    latest = parse_reference("stored:latest?branch=main&suite=a%3Db")
    assert latest.selector == LATEST and latest.filters == (("branch", "main"), ("suite", "a=b"))
    assert parse_reference("stored:history").selector == HISTORY
    assert parse_reference("stored:3F2A9c").selector == "3f2a9c"
    for bad in ("stored:", "stored:abc", "stored:latest~x", "stored:latest?nokey"):
        with pytest.raises(UsageError):
            parse_reference(bad)
    assert parse_filter("commit=3f2a") == ("commit", "3f2a")
    with pytest.raises(UsageError, match="expected KEY=VALUE"):
        parse_filter("main")


def test_storage_urls(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    monkeypatch.delenv("IREEBENCH_STORAGE", raising=False)
    assert storage_url("") == f"sqlite:///{tmp_path}/ireebench/results.sqlite"
    monkeypatch.setenv("IREEBENCH_STORAGE", str(tmp_path / "env.sqlite"))
    assert storage_url(None) == f"sqlite:///{tmp_path}/env.sqlite"
    assert storage_url(f"sqlite:///{tmp_path}/x.db") == f"sqlite:///{tmp_path}/x.db"
    url = "postgresql://bench@/results?host=/run/postgresql"
    assert storage_url(url) == url
    with pytest.raises(UsageError, match="unknown kind of store 'mysql'"):
        storage_url("mysql://x/y")


def test_the_schema_migrates_forward_and_keeps_the_runs(store_url):
    """A store at the current version gains a later step (a column added) when it is
    opened again: once, its runs kept, the version recorded."""
    store = Store(store_url)
    report = {"context": {"host_name": "h", "date": "2026-01-01T00:00:00+00:00"},
              "benchmarks": [{"name": "BM_x", "run_name": "BM_x", "real_time": 1.0}]}
    store.save(record_of_report("{}", report, tags={"suite": "a"}))
    calls = []

    def add_column(connection):
        calls.append(1)
        connection.execute(sa.text("ALTER TABLE ireebench_runs ADD COLUMN note TEXT"))

    migrations = [*schema.MIGRATIONS, (schema.SCHEMA_VERSION + 1, "a note", add_column)]
    with store._transaction(write=True) as connection:
        assert schema.apply_migrations(connection, migrations) == schema.SCHEMA_VERSION
    with store._transaction(write=True) as connection:
        assert schema.apply_migrations(connection, migrations) == schema.SCHEMA_VERSION + 1
        assert schema.stored_version(connection) == schema.SCHEMA_VERSION + 1
        found = connection.execute(sa.text("SELECT host_name, note FROM ireebench_runs")).all()
    assert calls == [1] and [tuple(row) for row in found] == [("h", None)]
    store.close()
    with pytest.raises(UsageError, match="newer than this ireebench knows"):
        Store(store_url)
