"""A library for ireebench's cache directory and its compile cache of ``.mlir`` modules:

A cached module is code ireebench runs, so the cache is trusted as OpenSSH
trusts ``~/.ssh`` and pip its cache: :func:`open_cache` checks that the cache
directory (``$XDG_CACHE_HOME/ireebench`` or ``~/.cache/ireebench``, made mode
0700) is the user's and writable by nobody else, and every directory above it
the user's or root's and not writable by others unless sticky, else
:class:`Untrusted` says why and the caller compiles for this run only. An
entry ``<stem>-<key>-<digest>.vmfb`` is written whole and renamed into place,
and used only when it is a regular file (``O_NOFOLLOW``), the user's and
matching its digest (:meth:`CompileCache.lookup`); its name fits NAME_MAX.
The rules: docs/reliability.md.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import stat
from pathlib import Path

CACHE_ENV = "XDG_CACHE_HOME"
SUFFIX = ".vmfb"
DIGEST_CHARS = 16
# An entry's name, at most: its temporary, "." + name + "." + 8 random
# characters + ".tmp", then still fits in NAME_MAX (255 bytes).
MAX_ENTRY_NAME = 200
_HEX = frozenset("0123456789abcdef")


class Untrusted(Exception):
    """The cache cannot be used; ``str()`` says which directory and why."""


def cache_location() -> Path:
    """``$XDG_CACHE_HOME/ireebench`` if that is absolute, else ``~/.cache/ireebench``."""
    base = os.environ.get(CACHE_ENV, "")
    if not os.path.isabs(base):  # the XDG spec: a relative path is invalid, ignored
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ireebench"


def _owner(uid: int) -> str:
    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def _writers(mode: int) -> str | None:
    if mode & stat.S_IWOTH:
        return "everyone"
    if mode & stat.S_IWGRP:
        return "its group"
    return None


def _directory_problem(path: Path, st: os.stat_result, cache: bool) -> str | None:
    """Why another user could change what ``path`` holds, or None."""
    uid = os.geteuid()
    if not stat.S_ISDIR(st.st_mode):
        return f"{path} is not a directory"
    if st.st_uid != uid and (cache or st.st_uid != 0):
        return f"{path} is owned by {_owner(st.st_uid)}"
    writers = _writers(st.st_mode)
    if writers is not None and (cache or not st.st_mode & stat.S_ISVTX):
        return f"{path} is writable by {writers}"
    return None


def _make_directories(path: Path) -> None:
    """``mkdir -p`` with mode 0700 for every directory it creates."""
    missing = []
    for directory in (path, *path.parents):
        if directory.exists():
            break
        missing.append(directory)
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):
            os.mkdir(directory, 0o700)


def open_cache(location: Path) -> CompileCache:
    """The cache at ``location``, created if missing; :class:`Untrusted` if
    another user could put a module there (see the module docstring)."""
    real = Path(os.path.realpath(location))
    try:
        _make_directories(real)
        for directory in (real, *real.parents):
            problem = _directory_problem(directory, os.stat(directory), directory == real)
            if problem is not None:
                raise Untrusted(problem)
    except OSError as exc:
        raise Untrusted(f"cannot create {location}: {exc.strerror or exc}") from None
    return CompileCache(real)


def _fitting(stem: str, room: int) -> str:
    """``stem`` shortened to ``room`` bytes (never inside a UTF-8 character)."""
    data = stem.encode(errors="surrogateescape")
    if len(data) <= room:
        return stem
    return data[:room].decode(errors="ignore")


class CompileCache:
    """The entries of one trusted cache directory."""

    def __init__(self, directory: Path):
        self.directory = directory

    def _prefix(self, stem: str, key: str) -> str:
        room = MAX_ENTRY_NAME - len(key) - DIGEST_CHARS - len("--") - len(SUFFIX)
        return f"{_fitting(stem, max(room, 1))}-{key}-"

    def lookup(self, stem: str, key: str, warn) -> Path | None:
        """The verified entry for ``key``, or None; a bad entry is removed and
        named through ``warn(line)``."""
        prefix = self._prefix(stem, key)
        try:
            names = sorted(name for name in os.listdir(self.directory)
                           if name.startswith(prefix) and name.endswith(SUFFIX))
        except OSError:
            return None
        for name in names:
            digest = name[len(prefix):-len(SUFFIX)]
            if len(digest) != DIGEST_CHARS or not set(digest) <= _HEX:
                continue  # another stem's entry that starts like this one
            path = self.directory / name
            problem = _entry_problem(path, digest)
            if problem is None:
                return path
            warn(f"cache entry {path} {problem}: removed, compiling again")
            with contextlib.suppress(OSError):
                os.unlink(path)
        return None

    def store(self, stem: str, key: str, binary: bytes) -> Path:
        """Writes an entry whole, then renames it into place; returns its path."""
        import hashlib
        import tempfile
        digest = hashlib.sha256(binary).hexdigest()[:DIGEST_CHARS]
        target = self.directory / f"{self._prefix(stem, key)}{digest}{SUFFIX}"
        fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                                         dir=self.directory)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(binary)
            os.replace(temporary, target)
        finally:
            if os.path.exists(temporary):
                os.unlink(temporary)
        return target


def _entry_problem(path: Path, digest: str) -> str | None:
    """Why the entry must not run, or None: a link, not a regular file,
    someone else's, writable by others, or its content changed."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        return "is a symbolic link" if os.path.islink(path) else \
            f"cannot be read ({exc.strerror or exc})"
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(handle.fileno())
        if not stat.S_ISREG(st.st_mode):
            return "is not a regular file"
        if st.st_uid != os.geteuid():
            return f"is owned by {_owner(st.st_uid)}"
        writers = _writers(st.st_mode)
        if writers is not None:
            return f"is writable by {writers}"
        import hashlib
        content = hashlib.sha256()
        while chunk := handle.read(1 << 20):
            content.update(chunk)
    if content.hexdigest()[:DIGEST_CHARS] != digest:
        return "is corrupt (its content does not match its checksum)"
    return None


__all__ = ["CompileCache", "Untrusted", "cache_location", "open_cache"]
