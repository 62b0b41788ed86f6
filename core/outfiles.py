"""Files ireebench writes for the user: checked up front, complete or untouched.

Every output flag goes through this module: :func:`check_output_path` judges
the path when the flags are parsed (a run of hours must not fail at its end);
:class:`OutputFile` writes a regular file to a temporary file next to the
target and renames it into place when complete (a link resolved first;
special files and the process's own descriptors written through, never
replaced; an I/O error one line at :meth:`OutputFile.close`, the old file
left); :func:`written_by_tool` is the same promise for a native tool's file;
:func:`observe_temporaries` names each temporary file to a forked worker's
supervisor (:mod:`ireebench._worker`); :class:`RunFiles` knows every file a
run reads and writes, so that no output replaces an input, the store or
another output (same device and inode, or the same path). The promises in
full: docs/reliability.md.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from .errors import UsageError
from .stash import StashKey

# The longest file name most filesystems take (NAME_MAX).
_NAME_MAX = 255
_TEMP_SUFFIX = ".tmp"
# Linux's limit on the links followed while resolving one path (SYMLOOP_MAX).
_MAX_LINKS = 40
# The directories listing a process's descriptors, as realpath() spells them.
_DESCRIPTOR_DIR = re.compile(r"/proc/(\d+)(?:/task/\d+)?/fd")


@dataclass(frozen=True)
class Target:
    """Where an output path really leads.

    ``kind`` is ``"descriptor"`` (one of this process's descriptors: written
    through ``fd``), ``"special"`` (a device, FIFO or socket: written
    through ``path``) or ``"regular"`` (a regular file or a new path:
    ``path`` is the file itself, every symbolic link resolved, so the
    atomic rename replaces the file and never a link).
    """

    kind: str
    path: Path
    fd: int | None = None


def _own_descriptor(path: str) -> int | None:
    """The descriptor ``path`` names when it is one of this process's own:
    ``/dev/stdout``, ``/dev/fd/N``, ``/proc/self/fd/N``, or a link to one.

    Links are followed one at a time: the last step (``/proc/self/fd/1``)
    is a "magic" link whose target (``pipe:[123]``, or the file the shell
    opened) is not a path to rename onto.
    """
    current = os.path.abspath(path)
    for _ in range(_MAX_LINKS):
        parent, name = os.path.split(current)
        if name.isascii() and name.isdigit():
            match = _DESCRIPTOR_DIR.fullmatch(os.path.realpath(parent))
            if match and int(match.group(1)) == os.getpid():
                return int(name)
        try:
            link = os.readlink(current)
        except OSError:
            return None
        current = os.path.normpath(os.path.join(parent, link))
    return None


def resolve_output(path: str) -> Target:
    """Where ``path`` leads (see :class:`Target`); OSError for a link loop."""
    fd = _own_descriptor(path)
    if fd is not None:
        return Target("descriptor", Path(path), fd)
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        mode = None  # a new file, a link to one, or one under a file (judged by its parent)
    if mode is not None and not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        return Target("special", Path(path))
    return Target("regular", Path(os.path.realpath(path)))


def check_output_path(flag: str, path: str) -> None:
    """Raises a one-line :class:`UsageError` for a path that cannot be written.

    A special file that exists (``/dev/null``, a FIFO) is fine: it is
    written through; so is an open descriptor of the process
    (``/dev/stdout``). A link is judged by the file it leads to.
    """
    if not path:
        return
    if path.endswith(("/", os.sep)):
        raise UsageError(f"--{flag}={path}: not a file")
    try:
        target = resolve_output(path)
    except OSError as exc:  # a link loop
        raise UsageError(f"--{flag}={path}: cannot write: {exc.strerror or exc}") from None
    if target.kind == "descriptor":
        try:
            os.fstat(target.fd)
        except OSError as exc:
            raise UsageError(f"--{flag}={path}: cannot write: {exc.strerror}") from None
        return
    if target.kind == "special":
        if not os.access(path, os.W_OK):
            raise UsageError(f"--{flag}={path}: cannot write: Permission denied")
        return
    real = target.path
    if real.is_dir():
        raise UsageError(f"--{flag}={path}: is a directory")
    parent = real.parent
    if not parent.is_dir():
        reason = "is not a directory" if parent.exists() else "does not exist"
        raise UsageError(f"--{flag}={path}: directory {parent} {reason}")
    if not os.access(parent, os.W_OK):
        raise UsageError(f"--{flag}={path}: cannot write in {parent}: Permission denied")


def is_special_file(path) -> bool:
    """True for a path written through, never replaced: an existing path that
    is not a regular file (device, FIFO, socket), or a descriptor of the process."""
    try:
        return resolve_output(str(path)).kind != "regular"
    except OSError:
        return False


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
    import tempfile
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
        self._real_path: Path | None = None
        text = {} if binary else {"encoding": "utf-8", "errors": "surrogateescape",
                                  "newline": ""}
        mode = "wb" if binary else "w"
        try:
            target = resolve_output(path)
            if target.kind == "descriptor":
                # A copy of the descriptor: shares its offset with everything
                # else writing there (the console), truncates nothing.
                handle = os.fdopen(os.dup(target.fd), mode, **text)
            elif target.kind == "special":
                handle = open(self.path, mode, **text)  # noqa: SIM115 - closed by close()
            else:
                self._real_path = target.path
                fd, self._temporary = _temporary_next_to(target.path)
                with contextlib.suppress(OSError):
                    os.fchmod(fd, _mode_for(target.path))
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
                    os.replace(self._temporary, self._real_path)
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


def write_to(target, flag: str, data: str | bytes) -> None:
    """Writes ``data`` whole to ``target`` as :class:`OutputFile` does (atomically,
    or through a special file); nothing is left of a write that failed."""
    handle = OutputFile(str(target), flag, binary=isinstance(data, bytes))
    try:
        handle.stream.write(data)
    except BaseException:
        handle.discard()
        raise
    handle.close()


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
def written_by_tool(target, flag: str = "output"):
    """A path for a native tool to write ``target`` through.

    For a regular file (or a new path, or a link to one: the file it leads
    to): a temporary path next to it, renamed onto ``target`` when the block
    completes and removed when it raises (also on an interrupt), so
    ``target`` is either complete or untouched. A special file
    (``/dev/null``, a FIFO) is given as it is. One of this process's
    descriptors (``/dev/stdout``), which would be the tool's own, gets a
    private temporary file copied into the descriptor when the block
    completes.
    """
    resolved = resolve_output(str(target))
    if resolved.kind == "special":
        yield Path(target)
        return
    if resolved.kind == "descriptor":
        import tempfile
        fd, temporary = tempfile.mkstemp(suffix=_TEMP_SUFFIX)
        os.close(fd)
        try:
            yield Path(temporary)
            copy_to(temporary, target, flag)
        finally:
            if os.path.exists(temporary):
                os.unlink(temporary)
        return
    real = resolved.path
    fd, temporary = _temporary_next_to(real)
    os.close(fd)
    try:
        # The tool keeps the file's mode (mkstemp's 0600): give it the
        # permissions the target has, or a plain open() would give.
        os.chmod(temporary, _mode_for(real))
        yield Path(temporary)
        os.replace(temporary, real)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


# --- the files of a run: no output is an input, the store or another output --


def file_identity(path) -> tuple | None:
    """What makes two paths the same file: ``(device, inode)`` of what ``path``
    leads to (links resolved), or its resolved path when nothing is there yet;
    None for what is written through and never replaced (a device, a FIFO, one
    of the process's descriptors, a link loop: :func:`check_output_path` says)."""
    try:
        target = resolve_output(str(path))
    except OSError:
        return None
    if target.kind != "regular":
        return None
    try:
        info = os.stat(target.path)
    except OSError:
        return ("path", str(target.path))
    return ("inode", info.st_dev, info.st_ino)


@dataclass(frozen=True)
class _RunFile:
    name: str  # how messages name it: "--module=m.vmfb", "the results store (...)"
    output: bool
    identity: tuple


class RunFiles:
    """The files one run (or command) reads and writes, each registered once by
    whoever owns it; an output that is the same file as an input or as another
    output is one :class:`UsageError` line, when the second of the two is
    registered (before anything is measured or written)."""

    def __init__(self):
        self._files: list[_RunFile] = []
        self._destinations: list[str] = []  # outputs that are no file here (the store)

    def add_input(self, name: str, path) -> None:
        """``path`` is read (a module, an input file, the store): never written."""
        self._add(name, path, output=False)

    def add_output(self, name: str, path) -> None:
        """``path`` is written (``name``: ``--flag=path``)."""
        self._add(name, path, output=True)

    def add_destination(self, name: str) -> None:
        """An output that is no file of this run (``--benchmark_save``'s store): it
        counts among :meth:`outputs` and never collides."""
        self._destinations.append(name)

    def outputs(self) -> list[str]:
        """How each registered output is named (``--flag=path``), in order."""
        return [file.name for file in self._files if file.output] + self._destinations

    def _add(self, name: str, path, output: bool) -> None:
        if not path:
            return
        identity = file_identity(path)
        if identity is None:
            return
        for other in self._files:
            if other.identity != identity or not (output or other.output):
                continue
            if other.name == name and other.output == output:
                return  # the same registration again (each point of a sweep)
            if output and other.output:
                raise UsageError(f"{name}: is the same file as {other.name} (another output "
                                 "of this run); choose another path")
            written, read = (name, other.name) if output else (other.name, name)
            raise UsageError(f"{written}: is the same file as {read} (an input of this run): "
                             "refusing to overwrite it; choose another path")
        self._files.append(_RunFile(name, output, identity))


RUN_FILES = StashKey[RunFiles]()


def run_files(config) -> RunFiles:
    """The :class:`RunFiles` of a run (its points share it)."""
    return config.stash.setdefault(RUN_FILES, RunFiles())


def register_output(config, flag: str, path: str) -> None:
    """Checks an output flag's path (:func:`check_output_path`) and registers it as
    one of the run's outputs: the same file as one of its inputs or another of its
    outputs is refused in one line."""
    if not path:
        return
    check_output_path(flag, path)
    run_files(config).add_output(f"--{flag}={path}", path)


def refuse_unmeasured(config) -> None:
    """A run given an output (a report file, the store) that measured nothing fails
    in one line: a CI job must not pass on an empty report. The native tool exits 0
    there, as a plain console run still does."""
    outputs = run_files(config).outputs()
    if outputs:
        raise UsageError(f"{outputs[0]}: no benchmark was measured, so there is nothing to "
                         "write (check --benchmark_filter, --function and --input)")


def register_input(config, name: str, path) -> None:
    """Registers a file the run reads (``name`` says what it is in messages)."""
    run_files(config).add_input(name, path)


def register_inputs(config, references) -> None:
    """Registers the inputs of a command that reads reports (``compare``, ``report``,
    ``merge``): each reference that is a file there (a reference a plugin resolves,
    such as ``stored:...``, is registered by that plugin as it reads it)."""
    for reference in references:
        if os.path.exists(reference):
            register_input(config, reference, reference)


def value_file(text: str) -> str | None:
    """The file an ``--input`` or ``--expected_output`` value reads, in
    :mod:`ireebench.inputs`' grammar (``@f.npy``, ``+f.npy``, ``*f.npy``,
    ``4xf32=@f.bin``, ``4xf32=+f.bin``, ``&4xf32=@f.bin``); None for a value."""
    text = str(text)
    if text[:1] in ("@", "+", "*"):
        return text[1:] or None
    _, equals, contents = text.removeprefix("&").partition("=")
    contents = contents.strip()
    if equals and contents[:1] in ("@", "+"):
        return contents[1:] or None
    return None


__all__ = [
    "OutputFile", "RunFiles", "check_output_path", "file_identity", "is_special_file",
    "register_input", "register_inputs", "register_output", "run_files", "value_file",
    "write_to", "written_by_tool"
]
