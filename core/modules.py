"""The ``--module`` files: checked, then copied privately for the whole run.

The runtime maps a module file into memory; a file rewritten or truncated
while it is mapped kills the process with SIGBUS. So each module is copied
once into the run's private scratch directory before anything loads it, and
every consumer reads the copy: the in-process session, the native passes
(profiling, replay capture, ``--backend=native``), the module's sha256 in
the report. A ``--module=-`` is read from standard input into such a copy
too, and a value a plugin resolves (``ireebench_resolve_module``: the
``mlir_modules`` plugin compiles ``x.mlir``) is the copy of what it made. The copies are removed with the scratch directory when the run ends.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import sys
from pathlib import Path

from .errors import UsageError, one_line
from .hookcall import call_hook
from .stash import StashKey

# The private copies of the --module files, in --module order.
MODULE_FILES = StashKey[list]()

# Called with the copies once made: a forked worker tells its supervisor, so
# that a worker resumed after a crash uses them (ireebench.worker).
_observer = None


def observe_module_files(callback) -> None:
    """Calls ``callback(files)`` when the copies are made (None: nothing is called)."""
    global _observer
    _observer = callback

# A module read from standard input is bounded, so `--module=- </dev/zero`
# is one line rather than a full disk.
MAX_STDIN_MODULE_BYTES = 4 << 30
_CHUNK = 1 << 20


def check_module_specs(config) -> list[str]:
    """The --module values, each an existing non-empty regular file or ``-`` (stdin).

    Checked before devices are created, as the native tool loads its modules
    first; raises a one-line UsageError naming the flag and the value.
    """
    specs = list(config.getoption("module") or [])
    if not specs:
        raise UsageError("no user module specified; use --module=file.vmfb")
    for spec in specs:
        if spec == "-":
            continue
        try:
            mode = os.stat(spec).st_mode
        except OSError:
            raise UsageError(f"--module={spec}: file not found") from None
        if stat.S_ISDIR(mode):
            raise UsageError(f"--module={spec}: is a directory, not a .vmfb file")
        if not stat.S_ISREG(mode):
            raise UsageError(f"--module={spec}: not a regular file")
        if os.stat(spec).st_size == 0:
            raise UsageError(f"--module={spec}: file is empty")
    return specs


def looks_like_module(head: bytes) -> bool:
    """A .vmfb is a zip archive (``PK``) or a size-prefixed IREE flatbuffer."""
    return head.startswith(b"PK\x03\x04") or head[4:8] == b"IREE" or head[8:12] == b"IREE"


def _copy_stdin(destination: Path) -> None:
    stream = sys.stdin.buffer
    head = stream.read(16)
    if not head:
        raise UsageError("--module=-: standard input is empty")
    if not looks_like_module(head):
        raise UsageError("--module=-: standard input is not an IREE module (.vmfb)")
    size = len(head)
    with open(destination, "wb") as handle:
        handle.write(head)
        while chunk := stream.read(_CHUNK):
            size += len(chunk)
            if size > MAX_STDIN_MODULE_BYTES:
                raise UsageError(f"--module=-: standard input is larger than "
                                 f"{MAX_STDIN_MODULE_BYTES >> 30} GiB")
            handle.write(chunk)


def _copy_file(spec: str, destination: Path) -> None:
    try:
        shutil.copyfile(spec, destination)
    except OSError as exc:
        raise UsageError(f"--module={spec}: cannot read: {exc.strerror or one_line(exc)}") \
            from None
    if destination.stat().st_size == 0:
        raise UsageError(f"--module={spec}: file is empty")


def _copy_name(spec: str) -> str:
    """The copy's file name: the original's, unless the runtime could not take it
    (a name that is not valid UTF-8)."""
    name = os.path.basename(spec) or "module.vmfb"
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return "module.vmfb"
    return name


def module_files(config) -> list[str]:
    """The private copies of the --module files (made on first use, once per run)."""
    files = config.stash.get(MODULE_FILES, None)
    if files is not None:
        return files
    files = []
    for index, spec in enumerate(check_module_specs(config)):
        resolved = call_hook(config.pm, "ireebench_resolve_module", config=config, spec=spec)
        # One directory per module keeps the original file name, which the
        # native tools print in their messages.
        directory = config.scratch_dir() / "modules" / str(index)
        directory.mkdir(parents=True)
        if resolved is not None:  # a plugin made the .vmfb (compiled MLIR, say)
            destination = directory / (Path(_copy_name(spec)).stem + ".vmfb")
            _copy_file(str(resolved), destination)
        elif spec == "-":
            destination = directory / "stdin.vmfb"
            _copy_stdin(destination)
        else:
            destination = directory / _copy_name(spec)
            _copy_file(spec, destination)
        files.append(str(destination))
    config.stash[MODULE_FILES] = files
    if _observer is not None:
        _observer(files)
    return files


def file_sha256(path) -> str:
    """Hex sha256 of a file (a module, a replay capture), or "" when it cannot be read."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(_CHUNK), b""):
                digest.update(chunk)
    except OSError:
        return ""
    return digest.hexdigest()
