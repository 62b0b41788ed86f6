"""The ``--module`` files: checked, then held so that nothing can change them during the run.

The runtime reads a module's constants and code from the memory it was loaded
from, and a mapped file rewritten or truncated during the run kills the
process with SIGBUS; so each module is taken once, before anything loads it,
as ``--module_mode`` says: ``preload`` (the default: read whole into private
memory) or ``mmap`` (the original mapped where it cannot change, on a
read-only mount or ``chattr +i``/``+a``, else a copy in the run's scratch
directory). A ``--module=-`` is read from stdin into memory; a value a plugin
resolves (``ireebench_resolve_module``) is taken like a file. Every consumer
sees the same bytes: the session (:func:`module_images`), the native passes
(:func:`module_files`) and the report's sha256. Each distinct module is taken
once per run, however many points use it, and modules of the same bytes share
one image. See docs/reliability.md.
"""

from __future__ import annotations

import dataclasses
import fcntl
import mmap
import os
import stat
import struct
import sys
import weakref
from dataclasses import dataclass
from pathlib import Path

from .errors import INVALID_ARGUMENT, NOT_FOUND, UsageError, one_line
from .hookcall import call_hook
from .stash import StashKey

# The modules taken in this run: (--module value, what a plugin resolved it
# to, or None) -> its image. Every point of a sweep finds its modules here.
MODULE_IMAGES = StashKey["dict[tuple[str, str | None], ModuleImage]"]()
# --module value -> the image last taken for it (what the report context names).
LAST_IMAGES = StashKey["dict[str, ModuleImage]"]()
# A configuration (the run's, a point's) -> the images it took last: a point of a
# sweep knows its own module even where another point took the same --module
# value for another device (an x.mlir compiled per device).
CONFIG_IMAGES = StashKey["weakref.WeakKeyDictionary"]()

# The native tools' loader flags (runtime/src/iree/tooling/context_util.c and
# parameter_util.c), with their choices; the first is the default.
MODULE_MODES = ("preload", "mmap")
PARAMETER_MODES = ("file", "preload")

# In a worker resumed after a crash (ireebench._worker): what its predecessors
# took, [spec, resolved or None] -> (a file with its bytes or None, sha256).
TAKEN_BEFORE = StashKey["dict[tuple, tuple[str | None, str]]"]()

# Called with each module as it is taken (``[spec, resolved]``, a file with its
# bytes or None, its sha256): a forked worker tells its supervisor, so that a
# worker resumed after a crash takes the same bytes (ireebench._worker).
_observer = None

# Standard input's module (its image and sha256), read by a worker's supervisor
# before its first fork (ireebench._worker): every worker, a resumed one too,
# inherits the same bytes in memory, as standard input cannot be read again.
STDIN_MODULE = StashKey["tuple[mmap.mmap, str]"]()


def read_stdin_module(config) -> None:
    """Reads the run's ``--module=-`` from standard input now, into memory.

    Only the command line's ``--module``: a ``-`` that only a sweep's or a
    suite's point names is read by the worker, which writes it to the run's
    scratch directory for a worker resumed after a crash.
    """
    if STDIN_MODULE not in config.stash and "-" in (config.getoption("module") or []):
        # The other values and the mode are checked first, as a run without
        # a worker checks them before it reads standard input.
        check_module_specs(config)
        loader_mode(config, "module_mode", MODULE_MODES)
        config.stash[STDIN_MODULE] = _preload_stdin()


def observe_module_images(callback) -> None:
    """Calls ``callback(key, path, sha256)`` for each module taken (None: nothing)."""
    global _observer
    _observer = callback


# A module read from standard input is bounded, so `--module=- </dev/zero`
# is one line rather than all memory.
MAX_STDIN_MODULE_BYTES = 4 << 30
_CHUNK = 1 << 20

# linux/fs.h: FS_IOC_GETFLAGS and the inode flags that forbid rewriting a file.
_FS_IOC_GETFLAGS = 0x80086601
_FS_IMMUTABLE_FL = 0x00000010
_FS_APPEND_FL = 0x00000020


def loader_mode(config, flag: str, modes: tuple[str, ...]) -> str:
    """The value of the native loader flag ``--flag`` (last one wins), or its default.

    An unknown value is refused with the native tool's status and words
    (``unrecognized --module_mode= value 'x'``).
    """
    value = modes[0]
    for arg in config.runtime_flags:
        key, sep, text = arg.lstrip("-").partition("=")
        if key == flag and sep:
            value = text.strip().strip('"')
    if value not in modes:
        raise UsageError(f"--{flag}={value}: unrecognized --{flag}= value {value!r} "
                         f"(one of: {', '.join(modes)})", status=INVALID_ARGUMENT)
    return value


def check_module_specs(config) -> list[str]:
    """The --module values, each an existing non-empty regular file or ``-`` (stdin).

    Checked before devices are created, as the native tool loads its modules
    first; raises a one-line UsageError naming the flag and the value.
    """
    specs = list(config.getoption("module") or [])
    if not specs:
        raise UsageError("no user module specified; use --module=file.vmfb",
                         status=INVALID_ARGUMENT)
    for spec in specs:
        if spec == "-":
            continue
        try:
            mode = os.stat(spec).st_mode
        except OSError:
            raise UsageError(f"--module={spec}: file not found", status=NOT_FOUND) from None
        if stat.S_ISDIR(mode):
            raise UsageError(f"--module={spec}: is a directory, not a .vmfb file",
                             status=INVALID_ARGUMENT)
        if not stat.S_ISREG(mode):
            raise UsageError(f"--module={spec}: not a regular file", status=INVALID_ARGUMENT)
        if os.stat(spec).st_size == 0:
            raise UsageError(f"--module={spec}: file is empty", status=INVALID_ARGUMENT)
    return specs


def looks_like_module(head: bytes) -> bool:
    """A .vmfb is a zip archive (``PK``) or a size-prefixed IREE flatbuffer."""
    return head.startswith(b"PK\x03\x04") or head[4:8] == b"IREE" or head[8:12] == b"IREE"


def cannot_change(path: str) -> bool:
    """True where no one can rewrite or truncate ``path`` while the run maps it.

    What can be told cheaply and safely: the file is on a read-only mount,
    or carries the immutable or append-only inode flag. Permissions say
    nothing (the owner, or root, can still write), so anything else is
    copied.
    """
    try:
        if os.statvfs(path).f_flag & os.ST_RDONLY:
            return True
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        flags = bytearray(8)
        fcntl.ioctl(fd, _FS_IOC_GETFLAGS, flags)
        return bool(struct.unpack_from("<I", flags)[0] & (_FS_IMMUTABLE_FL | _FS_APPEND_FL))
    except OSError:  # a file system without inode flags (tmpfs, overlay...)
        return False
    finally:
        os.close(fd)


@dataclass
class ModuleImage:
    """One ``--module`` as the run holds it.

    :ivar spec: the ``--module`` value.
    :ivar name: the file name the native tools are given (the original's).
    :ivar data: ``preload``: the bytes, in page-aligned anonymous memory;
        None when the module is mapped from :attr:`path`.
    :ivar path: a file with exactly these bytes that does not change during
        the run (``mmap``), or None until a native pass asks (:func:`module_files`).
    :ivar sha256: hex digest of the bytes.
    :ivar index: its place among the run's images (its scratch directory).
    """

    spec: str
    name: str
    data: mmap.mmap | None
    path: str | None
    sha256: str
    index: int = 0


def _scratch_error(spec: str, directory: Path, exc: OSError) -> UsageError:
    """A private copy that could not be written: names TMPDIR, not the module."""
    reason = exc.strerror or one_line(exc)
    return UsageError(
        f"--module={spec}: cannot write the run's private copy to {directory} (in TMPDIR): "
        f"{reason}; point TMPDIR at a file system with room, or use --module_mode=preload "
        "(in process, no copy)")


def _read_source(handle, spec: str) -> bytes:
    try:
        return handle.read(_CHUNK)
    except OSError as exc:
        raise UsageError(f"--module={spec}: cannot read: {exc.strerror or one_line(exc)}") \
            from None


def _open_source(spec: str):
    try:
        return open(spec, "rb")
    except OSError as exc:
        raise UsageError(f"--module={spec}: cannot read: {exc.strerror or one_line(exc)}",
                         status=NOT_FOUND if isinstance(exc, FileNotFoundError) else None) \
            from None


def _anonymous(size: int, spec: str) -> mmap.mmap:
    try:
        # Private: a forked worker's pages are its own (copy-on-write), so a
        # worker's stray write never reaches the supervisor or the next worker.
        return mmap.mmap(-1, max(size, 1), flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    except (OSError, ValueError, OverflowError) as exc:
        raise UsageError(f"--module={spec}: cannot hold {size} bytes in memory "
                         f"(--module_mode=preload): {one_line(exc)}") from None


def _preload(handle, spec: str, size: int) -> tuple[mmap.mmap, str]:
    """Reads ``handle`` whole into anonymous memory; ``size`` is what fstat said."""
    import hashlib
    digest = hashlib.sha256()
    memory = _anonymous(size, spec)
    filled = 0
    while chunk := _read_source(handle, spec):
        if filled + len(chunk) > len(memory):  # the file grew while read: keep all of it
            grown = _anonymous(max(2 * len(memory), filled + len(chunk)), spec)
            grown[:filled] = memory[:filled]
            memory.close()
            memory = grown
        memory[filled:filled + len(chunk)] = chunk
        digest.update(chunk)
        filled += len(chunk)
    if filled == 0:
        raise UsageError(f"--module={spec}: file is empty", status=INVALID_ARGUMENT)
    if filled != len(memory):  # shrunk (or grew) while read: exactly what was read
        exact = _anonymous(filled, spec)
        exact[:] = memory[:filled]
        memory.close()
        memory = exact
    return memory, digest.hexdigest()


def _preload_stdin() -> tuple[mmap.mmap, str]:
    stream = sys.stdin.buffer
    head = stream.read(16)
    if not head:
        raise UsageError("--module=-: standard input is empty", status=INVALID_ARGUMENT)
    if not looks_like_module(head):
        raise UsageError("--module=-: standard input is not an IREE module (.vmfb)",
                         status=INVALID_ARGUMENT)

    class _Stdin:
        pending = head
        size = len(head)

        def read(self, count):
            if self.pending:
                data, self.pending = self.pending, b""
                return data
            data = stream.read(count)
            self.size += len(data)
            if self.size > MAX_STDIN_MODULE_BYTES:
                raise UsageError(f"--module=-: standard input is larger than "
                                 f"{MAX_STDIN_MODULE_BYTES >> 30} GiB")
            return data

    return _preload(_Stdin(), "-", _CHUNK)


def _copy_privately(handle, spec: str, destination: Path) -> str:
    """Copies ``handle`` to ``destination`` in the scratch directory; the sha256."""
    import hashlib
    digest = hashlib.sha256()
    try:
        with open(destination, "wb") as out:
            while chunk := _read_source(handle, spec):
                out.write(chunk)
                digest.update(chunk)
            if out.tell() == 0:
                raise UsageError(f"--module={spec}: file is empty", status=INVALID_ARGUMENT)
    except OSError as exc:
        raise _scratch_error(spec, destination.parent, exc) from None
    return digest.hexdigest()


def _file_sha256(handle, spec: str) -> str:
    import hashlib
    digest = hashlib.sha256()
    while chunk := _read_source(handle, spec):
        digest.update(chunk)
    return digest.hexdigest()


def _copy_name(spec: str) -> str:
    """The copy's file name: the original's, unless the runtime could not take it
    (a name that is not valid UTF-8)."""
    name = os.path.basename(spec) or "module.vmfb"
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return "module.vmfb"
    return name


def _module_directory(config, index: int, spec: str) -> Path:
    """One directory per module keeps the original file name, which the native
    tools print in their messages."""
    try:
        directory = config.scratch_dir() / "modules" / str(index)
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        import tempfile
        raise _scratch_error(spec, Path(tempfile.gettempdir()), exc) from None
    return directory


def _take(config, index: int, spec: str, resolved, mode: str, before=None) -> ModuleImage:
    if resolved is not None:  # a plugin made the .vmfb (compiled MLIR, say)
        source, name = str(resolved), Path(_copy_name(spec)).stem + ".vmfb"
    elif spec == "-":
        held = config.stash.get(STDIN_MODULE, None)
        if held is None and before is None:
            held = _preload_stdin()
        if held is not None:
            return ModuleImage(spec, "stdin.vmfb", held[0], None, held[1], index)
        source, name = spec, "stdin.vmfb"  # a resumed worker: the copy below
    else:
        source, name = spec, _copy_name(spec)
    if before is not None:
        return _take_again(config, index, spec, source, name, mode, before)
    with _open_source(source) as handle:
        if mode == "preload":
            data, digest = _preload(handle, spec, os.fstat(handle.fileno()).st_size)
            return ModuleImage(spec, name, data, None, digest, index)
        if cannot_change(source):
            return ModuleImage(spec, name, None, source, _file_sha256(handle, spec), index)
        destination = _module_directory(config, index, spec) / name
        digest = _copy_privately(handle, spec, destination)
        return ModuleImage(spec, name, None, str(destination), digest, index)


def _take_again(config, index: int, spec: str, source: str, name: str, mode: str,
                before) -> ModuleImage:
    """In a worker resumed after a crash, the bytes its predecessor took: the file
    the run made of them (a private copy, a point's standard input), else the
    source read again, which must not have changed."""
    path, digest = before
    if path:
        if mode != "preload":
            return ModuleImage(spec, name, None, path, digest, index)
        with _open_source(path) as handle:
            data, _ = _preload(handle, spec, os.fstat(handle.fileno()).st_size)
        return ModuleImage(spec, name, data, path, digest, index)
    image = _take(config, index, spec, None if source == spec else source, mode)
    if image.sha256 != digest:
        raise UsageError(f"--module={spec}: changed since the run started (sha256 "
                         f"{image.sha256[:12]}, was {digest[:12]}): the benchmarks after the "
                         "crash cannot measure the same module; keep the file unchanged, or "
                         "use --module_mode=mmap (a private copy)")
    return image


def _write(config, image: ModuleImage) -> str:
    """Writes a preloaded image's bytes into the run's scratch directory, once."""
    if image.path is None:
        destination = _module_directory(config, image.index, image.spec) / image.name
        try:
            with open(destination, "wb") as out:
                out.write(image.data)
        except OSError as exc:
            raise _scratch_error(image.spec, destination.parent, exc) from None
        image.path = str(destination)
    return image.path


def module_images(config, as_files: bool = False) -> list[ModuleImage]:
    """The :class:`ModuleImage` of each of this configuration's --module values.

    Each module is taken once per run (on first use; a sweep's points share
    it), as ``--module_mode`` says. ``as_files``: taken for native passes
    only (a backend that runs the native tool), as files whatever
    ``--module_mode`` says, so that a large module is not also held in
    memory; the native tool is handed the mode.
    """
    images = config.stash.setdefault(MODULE_IMAGES, {})
    last = config.stash.setdefault(LAST_IMAGES, {})
    mode = "mmap" if as_files else loader_mode(config, "module_mode", MODULE_MODES)
    taken = []
    for spec in check_module_specs(config):
        # Standard input is always a .vmfb, read by ireebench (by a worker's
        # supervisor before the fork): no plugin is asked to resolve it.
        resolved = None if spec == "-" else call_hook(
            config.pm, "ireebench_resolve_module", config=config, spec=spec)
        key = (spec, None if resolved is None else str(resolved))
        if key not in images:
            before = config.stash.get(TAKEN_BEFORE, {}).get(key)
            image = _take(config, len(images), spec, resolved, mode, before)
            images[key] = _same_bytes(images, image)
            if _observer is not None:
                if spec == "-" and STDIN_MODULE not in config.stash:
                    _write(config, image)  # a point's stdin: a resumed worker reads this copy
                _observer(list(key), image.path, image.sha256)
        last[spec] = images[key]
        taken.append(images[key])
    config.stash.setdefault(CONFIG_IMAGES, weakref.WeakKeyDictionary())[config] = list(taken)
    return taken


def _same_bytes(images: dict, image: ModuleImage) -> ModuleImage:
    """``image``, sharing the memory (or file) of a module taken before with the
    same bytes (two paths, or two compile flags that made the same module): a
    suite naming one module many times holds it once."""
    if image.spec == "-":  # standard input's memory is the run's (STDIN_MODULE)
        return image
    for other in images.values():
        if other.sha256 == image.sha256 and (other.data is None) == (image.data is None):
            if image.data is not None:
                image.data.close()
            return dataclasses.replace(image, data=other.data, path=other.path or image.path)
    return image


def last_images(config) -> list[ModuleImage | None]:
    """The images already taken for this configuration's --module values (None
    for one not taken yet): those this configuration took (a sweep's point, its
    own), else the last taken for each value; nothing is resolved or read."""
    own = config.stash.get(CONFIG_IMAGES, {}).get(config)
    specs = list(config.getoption("module") or [])
    if own is not None and len(own) == len(specs):
        return list(own)
    last = config.stash.get(LAST_IMAGES, {})
    return [last.get(spec) for spec in specs]


def module_files(config) -> list[str]:
    """Files with the bytes of this configuration's modules, for the native passes.

    A preloaded module is written to the scratch directory the first time
    (only runs with a native pass need it), from the bytes the session
    loaded, so both run the same module.
    """
    return [_write(config, image) for image in module_images(config, as_files=True)]


def file_sha256(path) -> str:
    """Hex sha256 of a file (a replay capture), or "" when it cannot be read."""
    import hashlib
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(_CHUNK), b""):
                digest.update(chunk)
    except OSError:
        return ""
    return digest.hexdigest()
