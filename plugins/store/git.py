"""The git commit and branch of the working directory, read from ``.git`` (no git binary).

A saved run records the commit and branch it measured, read from the
repository's files so that a machine without git records them too: ``.git``
found upwards (a ``gitdir:`` file and a worktree's ``commondir`` followed),
``HEAD``, a loose ref or ``packed-refs``. What is read may have been planted
by someone else and ends up in a team's store, so the reader does what git
does since CVE-2022-24765, and a little more: a repository someone else owns
is not read (``safe.directory`` of the system or global configuration trusts
one anyway), refs are followed only to well-formed names inside the git
directory, every file is read bounded (:data:`MAX_FILE_BYTES`,
:data:`MAX_PACKED_REFS_BYTES`) and only if regular, a commit is 40 or 64
hexadecimal digits. Otherwise the run has no commit and :attr:`GitState.note`
says why. A detached ``HEAD`` takes its branch from :data:`BRANCH_VARIABLES`.
The rules in full: docs/store.md and docs/reliability.md.
"""

from __future__ import annotations

import os
import pwd
import re
import stat
from dataclasses import dataclass
from pathlib import Path

# CI systems' branch variables, for a detached HEAD (pull requests first).
BRANCH_VARIABLES = ("GITHUB_HEAD_REF", "GITHUB_REF_NAME", "CI_COMMIT_REF_NAME",
                    "BUILDKITE_BRANCH", "BRANCH_NAME")
# HEAD, a loose ref, commondir, a .git file hold one line: more is not git's.
MAX_FILE_BYTES = 4096
# packed-refs of a large repository holds megabytes; it is streamed, never held.
MAX_PACKED_REFS_BYTES = 64 << 20
# A git configuration file read for safe.directory.
MAX_CONFIG_BYTES = 1 << 20
# Symbolic refs followed from HEAD (git's SYMREF_MAXDEPTH).
SYMREF_DEPTH = 5
_HEADS = "refs/heads/"
_COMMIT = re.compile(r"(?:[0-9a-f]{40}|[0-9a-f]{64})\Z")
# git check-ref-format: no control character, space, ~ ^ : ? * [ \ or DEL.
_BAD_REF_CHARACTER = re.compile(r"[\x00-\x20~^:?*\[\\\x7f]")


@dataclass(frozen=True)
class GitState:
    """The commit and branch of a working directory; ``note``: why a repository
    there gives no commit (empty outside a repository and when all is well)."""

    commit: str = ""
    branch: str = ""
    note: str = ""


class _Refused(Exception):
    """The repository (or one of its files) is not read: the message says why."""


def _owner(uid: int) -> str:
    try:
        return f"uid {uid} ({pwd.getpwuid(uid).pw_name})"
    except KeyError:
        return f"uid {uid}"


def _owned_by_user(info: os.stat_result, environ) -> bool:
    """git's is_path_owned_by_current_uid: the user's, or root's for root (or,
    under sudo, the invoking user's: ``SUDO_UID``)."""
    uid = os.geteuid()
    if uid == 0:
        if info.st_uid == 0:
            return True
        sudo = str(environ.get("SUDO_UID", ""))
        uid = int(sudo) if sudo.isdigit() else uid
    return info.st_uid == uid


def _check_owner(path: Path, what: str, worktree: Path, environ) -> None:
    try:
        info = os.lstat(path)
    except OSError as exc:
        raise _Refused(f"{path}: cannot read {what or 'it'}: {exc.strerror}") from None
    if not _owned_by_user(info, environ):
        shown = f"{path} ({what})" if what else str(path)
        raise _Refused(f"{shown} is owned by {_owner(info.st_uid)}, not by you: "
                       "not read, as git refuses it since CVE-2022-24765 (`git config "
                       f"--global --add safe.directory {worktree}` trusts it)")


def _open_regular(path: Path):
    """A binary file object of ``path`` if it is a regular file; None if missing."""
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise _Refused(f"{path}: cannot read: {exc.strerror}") from None
    handle = os.fdopen(fd, "rb")
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        handle.close()
        raise _Refused(f"{path} is not a regular file")
    return handle


def _read(path: Path) -> str | None:
    """A small git file's text, stripped (None if missing), at most MAX_FILE_BYTES."""
    handle = _open_regular(path)
    if handle is None:
        return None
    with handle:
        try:
            data = handle.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            raise _Refused(f"{path}: cannot read: {exc.strerror}") from None
    if len(data) > MAX_FILE_BYTES:
        raise _Refused(f"{path} is larger than {MAX_FILE_BYTES} bytes (not a git file)")
    return data.decode("utf-8", errors="replace").strip()


def _lines(path: Path, limit: int):
    """The lines of a larger file (packed-refs, a git config), streamed up to ``limit``
    bytes; each line at most MAX_FILE_BYTES (a longer one is cut)."""
    handle = _open_regular(path)
    if handle is None:
        return
    read = 0
    with handle:
        while read < limit:
            try:
                line = handle.readline(MAX_FILE_BYTES)
            except OSError as exc:
                raise _Refused(f"{path}: cannot read: {exc.strerror}") from None
            if not line:
                return
            read += len(line)
            yield line.decode("utf-8", errors="replace").rstrip("\r\n")
    raise _Refused(f"{path} is larger than {limit} bytes")


# --- safe.directory --------------------------------------------------------


def _protected_config_files(environ) -> list[Path]:
    """The system and global git configuration (where git reads safe.directory)."""
    files = []
    if str(environ.get("GIT_CONFIG_NOSYSTEM", "")).lower() not in ("1", "true", "yes", "on"):
        files.append(Path(environ.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig"))
    if environ.get("GIT_CONFIG_GLOBAL"):
        files.append(Path(environ["GIT_CONFIG_GLOBAL"]))
    else:
        home = environ.get("HOME") or os.path.expanduser("~")
        xdg = environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
        files += [Path(xdg) / "git" / "config", Path(home) / ".gitconfig"]
    return files


def _config_value(text: str) -> str:
    value, quoted, out = text.strip(), False, []
    for character in value:
        if character == '"':
            quoted = not quoted
        elif character in "#;" and not quoted:
            break
        else:
            out.append(character)
    return "".join(out).strip()


def safe_directories(environ) -> list[str]:
    """The ``safe.directory`` values of the protected git configuration, in order
    (an empty value clears the list, as in git)."""
    values: list[str] = []
    for path in _protected_config_files(environ):
        section = ""
        try:
            for line in _lines(path, MAX_CONFIG_BYTES):
                text = line.strip()
                if text.startswith("["):
                    section = text[1:].split("]", 1)[0].strip().lower()
                    continue
                key, equals, value = text.partition("=")
                if section == "safe" and equals and key.strip().lower() == "directory":
                    value = _config_value(value)
                    if value:
                        values.append(value)
                    else:
                        values.clear()
        except _Refused:
            continue  # an unreadable configuration trusts nothing
    return values


def _is_safe(worktree: Path, environ) -> bool:
    real = os.path.realpath(worktree)
    for value in safe_directories(environ):
        if value == "*":
            return True
        value = os.path.expanduser(value)
        if value.endswith("/*"):
            prefix = os.path.realpath(value[:-2])
            if real == prefix or real.startswith(prefix.rstrip("/") + "/"):
                return True
        elif os.path.realpath(value) == real:
            return True
    return False


# --- the repository --------------------------------------------------------


@dataclass(frozen=True)
class Repository:
    """Where a repository's files are: its git directory (``HEAD``), and the common
    directory of its refs (a worktree's main repository; else the same)."""

    git_dir: Path
    common_dir: Path


def _relative_target(base: Path, text: str) -> Path:
    path = Path(text)
    return Path(os.path.realpath(path if path.is_absolute() else base / path))


def find_git_dir(start: Path, environ=None) -> Repository | None:
    """The repository holding ``start``, if any; :class:`_Refused` when one is there
    but must not be read (someone else's, a malformed ``.git`` file)."""
    environ = os.environ if environ is None else environ
    for directory in (start, *start.parents):
        dot_git = directory / ".git"
        try:
            mode = os.stat(dot_git).st_mode
        except OSError:
            continue
        if not stat.S_ISDIR(mode) and not stat.S_ISREG(mode):
            continue
        trusted = _is_safe(directory, environ)
        if not trusted:
            _check_owner(dot_git, "", directory, environ)
            _check_owner(directory, "the working tree", directory, environ)
        if stat.S_ISDIR(mode):
            git_dir = Path(os.path.realpath(dot_git))
        else:
            text = _read(dot_git) or ""
            if not text.startswith("gitdir:"):
                raise _Refused(f"{dot_git} is a file without a 'gitdir:' line")
            git_dir = _relative_target(directory, text.removeprefix("gitdir:").strip())
            if not git_dir.is_dir():
                raise _Refused(f"{dot_git}: its gitdir {git_dir} is not a directory")
        if not trusted:
            _check_owner(git_dir, "the git directory", directory, environ)
        common = _read(git_dir / "commondir")
        common_dir = _relative_target(git_dir, common) if common else git_dir
        if common_dir != git_dir:
            if not common_dir.is_dir():
                raise _Refused(f"{git_dir}/commondir names {common_dir}, not a directory")
            if not trusted:
                _check_owner(common_dir, "the common git directory", directory,
                             environ)
        return Repository(git_dir, common_dir)
    return None


def check_ref_name(ref: str) -> str:
    """``ref`` if it is a ref name git writes under ``refs/`` (git check-ref-format),
    else a :class:`_Refused` saying why."""
    if not ref.startswith("refs/"):
        raise _Refused(f"HEAD names {ref[:80]!r}, not a ref under refs/")
    parts = ref.split("/")
    bad = (len(ref) > 1024 or _BAD_REF_CHARACTER.search(ref) or "@{" in ref
           or ref.endswith((".", "/")) or
           any(not part or part.startswith(".") or part.endswith(".lock") for part in parts))
    if bad:
        raise _Refused(f"the ref {ref[:80]!r} is not a valid ref name")
    return ref


def _inside(base: Path, name: str) -> Path:
    """``base/name``, if that file (links resolved) stays inside ``base``."""
    path = base / name
    real = os.path.realpath(path)
    if not real.startswith(str(base).rstrip("/") + "/"):
        raise _Refused(f"{path} leads outside {base} (to {real})")
    return path


def _loose_ref(repository: Repository, ref: str) -> str | None:
    for base in dict.fromkeys((repository.git_dir, repository.common_dir)):
        text = _read(_inside(base, ref))
        if text:
            return text
    return None


def _packed_ref(repository: Repository, ref: str) -> str | None:
    for line in _lines(repository.common_dir / "packed-refs", MAX_PACKED_REFS_BYTES):
        if line.startswith(("#", "^")):
            continue
        sha, _, name = line.partition(" ")
        if name.strip() == ref:
            return sha.strip()
    return None


def _commit(text: str, what: str) -> str:
    if not _COMMIT.match(text):
        raise _Refused(f"{what} holds {text[:80]!r}, not a commit id (40 or 64 hex digits)")
    return text


def _resolve(repository: Repository, ref: str) -> str:
    """The commit ``ref`` names ("" for a branch without commits yet)."""
    for _ in range(SYMREF_DEPTH):
        check_ref_name(ref)
        text = _loose_ref(repository, ref)
        if text is None:
            sha = _packed_ref(repository, ref)
            return _commit(sha, f"packed-refs' {ref}") if sha is not None else ""
        if not text.startswith("ref:"):
            return _commit(text, ref)
        ref = text.removeprefix("ref:").strip()
    raise _Refused(f"HEAD's symbolic refs nest more than {SYMREF_DEPTH} deep")


def git_state(start: str | os.PathLike | None = None, environ=None) -> GitState:
    """The commit and branch of the repository holding ``start`` (the working
    directory by default); empty strings outside a repository, and a ``note``
    where a repository is there but gives no commit (see the module docstring)."""
    environ = os.environ if environ is None else environ
    try:
        repository = find_git_dir(Path(os.path.realpath(start or os.getcwd())), environ)
        if repository is None:
            return GitState()
        head = _read(repository.git_dir / "HEAD")
        if head is None:
            return GitState(note=f"{repository.git_dir} has no HEAD")
        if head.startswith("ref:"):
            ref = head.removeprefix("ref:").strip()
            check_ref_name(ref)
            branch = ref.removeprefix(_HEADS) if ref.startswith(_HEADS) else ref
            try:
                return GitState(_resolve(repository, ref), branch)
            except _Refused as exc:
                return GitState("", branch, str(exc))
        branch = next((environ[name] for name in BRANCH_VARIABLES if environ.get(name)), "")
        return GitState(_commit(head, f"{repository.git_dir}/HEAD"), branch)
    except _Refused as exc:
        return GitState(note=str(exc))
