"""The git commit and branch of the working directory, read from ``.git`` (no git binary).

A saved run records the commit and branch it measured, as asv and conbench
do, so that ``ireebench history`` shows which commit moved a benchmark and
``stored:latest?branch=main`` finds a baseline. Read from the repository's
files, so a machine without git (a container, a CI image) records them too:

* ``.git`` is found from the working directory upwards; a ``.git`` *file*
  (``gitdir: ...``: a worktree, a submodule) is followed, and a worktree's
  ``commondir`` names where its refs live;
* ``HEAD`` names the branch (``ref: refs/heads/NAME``) or, detached, the
  commit; a branch's commit is its loose ref or its line of ``packed-refs``.

A detached ``HEAD`` (CI checkouts) takes its branch from the CI's variables
(:data:`BRANCH_VARIABLES`, the first one set). Uncommitted changes are not
detected (that would need the index and every file's hash).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

# CI systems' branch variables, for a detached HEAD (pull requests first).
BRANCH_VARIABLES = ("GITHUB_HEAD_REF", "GITHUB_REF_NAME", "CI_COMMIT_REF_NAME",
                    "BUILDKITE_BRANCH", "BRANCH_NAME")
_HEADS = "refs/heads/"


@dataclass(frozen=True)
class GitState:
    commit: str = ""
    branch: str = ""


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace").strip()
    except OSError:
        return ""


def find_git_dir(start: Path) -> Path | None:
    """The git directory of the repository holding ``start``, if any."""
    for directory in (start, *start.parents):
        dot_git = directory / ".git"
        if dot_git.is_dir():
            return dot_git
        if dot_git.is_file():
            text = _read(dot_git)
            if text.startswith("gitdir:"):
                target = Path(text.removeprefix("gitdir:").strip())
                return target if target.is_absolute() else (directory / target).resolve()
    return None


def _common_dir(git_dir: Path) -> Path:
    common = _read(git_dir / "commondir")
    if not common:
        return git_dir
    path = Path(common)
    return path if path.is_absolute() else (git_dir / path).resolve()


def _resolve(git_dir: Path, ref: str) -> str:
    for base in (git_dir, _common_dir(git_dir)):
        loose = _read(base / ref)
        if loose:
            return loose
    for line in _read(_common_dir(git_dir) / "packed-refs").splitlines():
        sha, _, name = line.partition(" ")
        if name.strip() == ref and not line.startswith(("#", "^")):
            return sha
    return ""


def git_state(start: str | os.PathLike | None = None, environ=None) -> GitState:
    """The commit and branch of the repository holding ``start`` (the working
    directory by default); empty strings outside a repository."""
    environ = os.environ if environ is None else environ
    git_dir = find_git_dir(Path(start or os.getcwd()).resolve())
    if git_dir is None:
        return GitState()
    head = _read(git_dir / "HEAD")
    if head.startswith("ref:"):
        ref = head.removeprefix("ref:").strip()
        branch = ref.removeprefix(_HEADS) if ref.startswith(_HEADS) else ref
        return GitState(_resolve(git_dir, ref), branch)
    branch = next((environ[name] for name in BRANCH_VARIABLES if environ.get(name)), "")
    return GitState(head, branch)
