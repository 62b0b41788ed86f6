"""The store's parts on their own: git from .git (and what a planted .git cannot
make it read), references, the migrations (on SQLite and PostgreSQL), the URL of a
store and how it is shown."""

from __future__ import annotations

import os

import pytest
import sqlalchemy as sa
from conftest import ROOT
from ireebench.errors import UsageError
from ireebench.plugins.store import schema
from ireebench.plugins.store.database import Store
from ireebench.plugins.store.git import GitState, git_state
from ireebench.plugins.store.location import storage_url
from ireebench.plugins.store.records import record_of_report
from ireebench.plugins.store.references import HISTORY, LATEST, parse_filter, parse_reference

COMMIT = "a" * 40
OTHER = "b" * 40


def _worktree(repo, tmp_path):
    """A worktree of ``repo`` on main (as `git worktree add`): (its checkout, its git dir)."""
    worktree_git = repo / ".git" / "worktrees" / "wt"
    worktree_git.mkdir(parents=True)
    (worktree_git / "HEAD").write_text("ref: refs/heads/main\n")
    (worktree_git / "commondir").write_text("../..\n")
    checkout = tmp_path / "wt"
    checkout.mkdir()
    (checkout / ".git").write_text(f"gitdir: {worktree_git}\n")
    return checkout, worktree_git


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
    checkout, worktree_git = _worktree(repo, tmp_path)
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


def _repo(root, head="ref: refs/heads/main\n"):
    (root / ".git" / "refs" / "heads").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text(head)
    (root / ".git" / "refs" / "heads" / "main").write_text(COMMIT + "\n")
    return root


@pytest.mark.parametrize("case, note", [
    # HEAD's ref must name refs/... inside the git directory.
    ("absolute", "HEAD names '{secret}', not a ref under refs/"),
    ("dotdot", "the ref 'refs/../../secret' is not a valid ref name"),
    ("link_out", "leads outside"),
    # Every file bounded and regular; a commit is hex.
    ("dev_zero", "leads outside"),
    ("fifo_head", "HEAD is not a regular file"),
    ("huge_head", "HEAD is larger than 4096 bytes (not a git file)"),
    ("not_hex", "refs/heads/main holds 'TOPSECRET', not a commit id (40 or 64 hex digits)"),
    ("detached_text", "HEAD holds 'TOPSECRET', not a commit id"),
    ("symref_loop", "HEAD's symbolic refs nest more than 5 deep"),
])
def test_git_reads_only_refs_inside_the_repository(tmp_path, case, note):
    """What a .git planted with bad intent (or broken) gives: no commit, and a note
    saying why; never the content of a file outside, never a read without end."""
    secret = tmp_path / "secret"
    secret.write_text("TOPSECRET\n")
    repo = _repo(tmp_path / "repo")
    git = repo / ".git"
    main = git / "refs" / "heads" / "main"
    if case == "absolute":
        (git / "HEAD").write_text(f"ref: {secret}\n")
    elif case == "dotdot":
        (git / "HEAD").write_text("ref: refs/../../secret\n")
    elif case == "link_out":
        main.unlink()
        main.symlink_to(secret)
    elif case == "dev_zero":
        main.unlink()
        main.symlink_to("/dev/zero")
    elif case == "fifo_head":
        (git / "HEAD").unlink()
        os.mkfifo(git / "HEAD")
    elif case == "huge_head":
        (git / "HEAD").write_text("ref: refs/heads/main" + " " * 10_000 + "\n")
    elif case == "not_hex":
        main.write_text("TOPSECRET\n")
    elif case == "detached_text":
        (git / "HEAD").write_text("TOPSECRET\n")
    elif case == "symref_loop":
        main.write_text("ref: refs/heads/main\n")
    state = git_state(repo, environ={})
    assert state.commit == "" and "TOPSECRET" not in state.commit + state.branch
    assert note.format(secret=secret) in state.note, state.note


def test_git_accepts_sha256_and_the_repositorys_own_worktrees(tmp_path):
    repo = _repo(tmp_path / "repo")
    (repo / ".git" / "refs" / "heads" / "main").write_text("c" * 64 + "\n")
    assert git_state(repo, environ={}) == GitState("c" * 64, "main")
    # A branch whose ref is a symbolic ref (refs/remotes/origin/HEAD style), followed.
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/alias\n")
    (repo / ".git" / "refs" / "heads" / "alias").write_text("ref: refs/heads/main\n")
    assert git_state(repo, environ={}).commit == "c" * 64
    # This checkout (a worktree of the project's repository, or a clone) reads as git does.
    if (ROOT / ".git").exists():
        state = git_state(ROOT)
        assert len(state.commit) in (40, 64) and state.note == "", state


@pytest.mark.skipif(os.geteuid() != 0, reason="changes a file's owner: needs root")
def test_git_ignores_a_repository_someone_else_owns_unless_it_is_a_safe_directory(tmp_path):
    """CVE-2022-24765: a .git another user planted in a parent folder is not read (a
    note says so and how git would trust it); safe.directory in the global git
    configuration trusts it, as in git."""
    repo = _repo(tmp_path / "shared")
    (repo / "work").mkdir()
    os.chown(repo / ".git", 65534, 65534)
    state = git_state(repo / "work", environ={"HOME": str(tmp_path)})
    assert state.commit == ""
    assert f"{repo}/.git is owned by uid 65534" in state.note
    assert f"safe.directory {repo}` trusts it" in state.note
    (tmp_path / ".gitconfig").write_text(f'[safe]\n\tdirectory = "{repo}"\n')
    assert git_state(repo / "work", environ={"HOME": str(tmp_path)}).commit == COMMIT
    (tmp_path / ".gitconfig").write_text("[safe]\n\tdirectory = *\n\tdirectory =\n")
    assert git_state(repo / "work", environ={"HOME": str(tmp_path)}).commit == ""  # reset
    # A worktree whose gitdir (or common directory) someone else owns: the same.
    os.chown(repo / ".git", 0, 0)
    checkout, worktree_git = _worktree(repo, tmp_path)
    assert git_state(checkout, environ={}).commit == COMMIT
    os.chown(worktree_git, 65534, 65534)
    assert "(the git directory) is owned by uid 65534" in git_state(checkout, environ={}).note


def test_store_urls_are_shown_with_every_secret_masked():
    """SQLAlchemy's rendering (hide_password), libpq's ?password= too, a raw '/' in
    the password; a URL SQLAlchemy cannot parse is masked by hand."""
    from ireebench.plugins.store.database import display_url, engine_url

    cases = {
        "postgresql://u:pa/ss@h/db": "postgresql://u:***@h/db",
        "postgresql://u:s3cret@h:5432/db?host=/run/pg": "postgresql://u:***@h:5432/db?host=/run/pg",
        "postgresql://u@/db?host=/run/pg&password=s3cret": "postgresql://u@/db?host=/run/pg&password=***",
        "postgresql://u@/db?sslpassword=s3cret": "postgresql://u@/db?sslpassword=***",
        "postgresql://u:s3cret@h:abc/db": "postgresql://u:***@h:abc/db",
        "postgresql://u:p@ss@h/db": "postgresql://u:***@h/db",
        "sqlite:////tmp/r.sqlite": "sqlite:////tmp/r.sqlite",
    }
    for url, shown in cases.items():
        assert display_url(url) == shown, url
    for url, message in [("postgresql://u:s3cret@h:abc/db", "the port is not a number"),
                         ("postgresql://u:p@ss@h/db", "must be written %40"),
                         ("postgresql://u:s3cret@h:99999/db", "is not between 1 and 65535")]:
        with pytest.raises(UsageError, match=message) as caught:
            engine_url(url)
        assert "s3cret" not in str(caught.value) and "ss@" not in str(caught.value)


def test_latest_n_back_is_bounded():
    with pytest.raises(UsageError, match=r"is more runs back than a store holds"):
        parse_reference("stored:latest~99999999999999999999")
    assert parse_reference("stored:latest~1000000000").offset == 10**9
