"""Files ireebench writes for the user: checked up front, complete or untouched.

Every output flag (``--benchmark_out``, ``--output``, ``--profile_output``,
``--device_replay_output``, ``--device_profiling_output``) goes through this
module:

* :func:`check_output_path` judges the path when the flags are parsed (a
  run of hours must not fail at its end): a directory, a path ending in
  ``/``, a missing or non-directory parent are one line naming the flag.
* :class:`OutputFile` is a text stream for a report. A regular file (or a
  new path) is written to a temporary file next to the target and renamed
  into place only when complete, keeping an existing file's mode; anything
  else (``/dev/null``, ``/dev/stdout``, a FIFO, a terminal) is written
  through, as the native tool writes it, never replaced. An I/O error
  while writing (a full disk) never reaches the reporter writing: the
  stream remembers it and :meth:`OutputFile.close` reports one line and
  leaves the old file as it was.
* :func:`written_by_tool` is the same promise for a file a native tool
  writes itself (a replay capture, a profiling bundle).
* :func:`observe_temporaries` names every temporary file created next to a
  target to a forked worker's supervisor, which removes those a killed or
  crashed worker left (:mod:`ireebench.worker`).
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from .errors import UsageError

# The longest file name most filesystems take (NAME_MAX).
_NAME_MAX = 255
_TEMP_SUFFIX = ".tmp"


def check_output_path(flag: str, path: str) -> None:
    """Raises a one-line :class:`UsageError` for a path that cannot be written.

    A special file that exists (``/dev/null``, a FIFO) is fine: it is
    written through.
    """
    if not path:
        return
    if path.endswith(("/", os.sep)):
        raise UsageError(f"--{flag}={path}: not a file")
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"--{flag}={path}: is a directory")
    parent = target.parent
    if not parent.is_dir():
        reason = "is not a directory" if parent.exists() else "does not exist"
        raise UsageError(f"--{flag}={path}: directory {parent} {reason}")
    if target.exists() and not target.is_file():
        if not os.access(target, os.W_OK):
            raise UsageError(f"--{flag}={path}: cannot write: Permission denied")
        return
    if not os.access(parent, os.W_OK):
        raise UsageError(f"--{flag}={path}: cannot write in {parent}: Permission denied")


def is_special_file(path) -> bool:
    """True for an existing path that is not a regular file (device, FIFO, socket)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _mode_for(target: Path) -> int:
    """An existing file's permissions, else what a plain ``open()`` would give."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        return 0o666 & ~umask()


# Called with the path of each temporary file created next to a target.
_temporary_observer = None


def observe_temporaries(callback) -> None:
    """Calls ``callback(path)`` for each temporary file made next to a target
    (None: nothing is called); a forked worker tells its supervisor, which
    removes what a worker that dies cannot."""
    global _temporary_observer
    _temporary_observer = callback


def _temporary_next_to(target: Path) -> tuple[int, str]:
    """``mkstemp`` in the target's directory, with a name that still fits NAME_MAX."""
    directory = target.parent if str(target.parent) else Path(".")
    # ".<name>." + 8 random characters + ".tmp": shorten <name> near NAME_MAX.
    room = _NAME_MAX - len(".") - len(".") - 8 - len(_TEMP_SUFFIX)
    name = target.name.encode(errors="surrogateescape")[: max(room, 1)]
    prefix = "." + name.decode(errors="ignore") + "."
    fd, path = tempfile.mkstemp(prefix=prefix, suffix=_TEMP_SUFFIX, dir=directory)
    if _temporary_observer is not None:
        _temporary_observer(os.path.abspath(path))
    return fd, path


class _RecordingStream:
    """Writes to ``raw``; the first OSError is kept, later writes are dropped.

    Reporters write through it, so a full disk is one error at close rather
    than an exception inside a reporter (which would blame its plugin).
    """

    def __init__(self, raw):
        self._raw = raw
        self.error: OSError | None = None

    def writable(self) -> bool:
        return True

    def write(self, data):
        if self.error is None:
            try:
                self._raw.write(data)
            except OSError as exc:
                self.error = exc
        return len(data)

    def flush(self) -> None:
        if self.error is None:
            try:
                self._raw.flush()
            except OSError as exc:
                self.error = exc

    def fileno(self) -> int:
        return self._raw.fileno()


class OutputFile:
    """A file ireebench writes: atomic for regular files, written through otherwise.

    ``stream`` is the stream to write (text, or bytes with ``binary=True``).
    :meth:`close` commits (renames the temporary file into place, or just
    closes a special file); :meth:`discard` drops what was written and
    leaves the target as it was. Strings that are not valid UTF-8 (surrogate
    escapes from the command line) are written back as the bytes they came
    from.
    """

    def __init__(self, path: str, flag: str = "benchmark_out", binary: bool = False):
        check_output_path(flag, path)
        self.path = Path(path)
        self.flag = flag
        self._temporary: str | None = None
        text = {} if binary else {"encoding": "utf-8", "errors": "surrogateescape",
                                  "newline": ""}
        mode = "wb" if binary else "w"
        try:
            if is_special_file(self.path):
                handle = open(self.path, mode, **text)  # noqa: SIM115 - closed by close()
            else:
                fd, self._temporary = _temporary_next_to(self.path)
                with contextlib.suppress(OSError):
                    os.fchmod(fd, _mode_for(self.path))
                handle = os.fdopen(fd, mode, **text)
        except OSError as exc:
            raise self._error(exc) from None
        self._handle = handle
        self.stream = _RecordingStream(handle)

    @property
    def atomic(self) -> bool:
        """Written to a temporary file and renamed into place (not a special file)."""
        return self._temporary is not None

    def _error(self, exc: OSError) -> UsageError:
        return UsageError(f"--{self.flag}={self.path}: cannot write: {exc.strerror or exc}")

    def close(self) -> None:
        """Commits the file; a write error discards it and is one UsageError."""
        if self._handle.closed:
            return
        self.stream.flush()
        error = self.stream.error
        if error is None:
            try:
                if self._temporary is not None:
                    os.fsync(self._handle.fileno())
                self._handle.close()
                if self._temporary is not None:
                    os.replace(self._temporary, self.path)
                    self._temporary = None
            except OSError as exc:
                error = exc
        if error is not None:
            self.discard()
            raise self._error(error)

    def discard(self) -> None:
        """Drops the temporary file (never flushed again); the target is left as it was."""
        with contextlib.suppress(OSError):
            self._handle.close()
        if self._temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._temporary)
            self._temporary = None


def copy_to(source, target, flag: str) -> None:
    """Copies a file to ``target`` (atomically, or through a special file)."""
    handle = OutputFile(str(target), flag, binary=True)
    try:
        with open(source, "rb") as data:
            while chunk := data.read(1 << 20):
                handle.stream.write(chunk)
    except BaseException:
        handle.discard()
        raise
    handle.close()


@contextlib.contextmanager
def written_by_tool(target):
    """A path for a native tool to write ``target`` through.

    For a regular file (or a new path): a temporary path next to it,
    renamed onto ``target`` when the block completes and removed when it
    raises (also on an interrupt), so ``target`` is either complete or
    untouched. A special file (``/dev/null``, a FIFO) is given as it is.
    """
    target = Path(target)
    if is_special_file(target):
        yield target
        return
    fd, temporary = _temporary_next_to(target)
    os.close(fd)
    try:
        # The tool keeps the file's mode (mkstemp's 0600): give it the
        # permissions the target has, or a plain open() would give.
        os.chmod(temporary, _mode_for(target))
        yield Path(temporary)
        os.replace(temporary, target)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
