"""The argument list before click sees it: flag files and plugin selection.

* ``--flagfile=PATH`` is replaced by the flags in the file (one per line,
  ``#`` starts a comment), as IREE's tools read it. ireebench expands flag
  files itself, nested ones too, with cycle detection and a size limit, so
  no flag file ever reaches the runtime's own parser. The expansion is
  bounded as a whole (how deep files nest, how many are read, how many
  flags they give), so a chain of a thousand files or a file including the
  next twice, 26 levels down, is one line naming the file, not a
  RecursionError or an expansion that never ends.
* ``--plugin``, ``-p NAME`` and ``-p no:NAME`` are read before the full
  parse, because plugins add options.
"""

from __future__ import annotations

import json
import os
import stat

from .._pluginmanager import PluginSelection
from ..errors import UsageError, one_line

FLAGFILE = "--flagfile="
# Flag files are a few lines; anything larger is a mistake (a device, a binary).
MAX_FLAGFILE_BYTES = 1 << 20
# Bounds of one command line's expansion (far beyond any real use).
MAX_FLAGFILE_DEPTH = 64  # files nested in files
MAX_FLAGFILE_READS = 1024  # flag files read, the same one counted each time
MAX_EXPANDED_ARGS = 1 << 18  # arguments after expansion


def read_small_file(path: str, what: str, limit: int) -> bytes:
    """The bytes of a small input file (a flag file, a suite), or one line saying why not.

    Only a regular file of at most ``limit`` bytes: a FIFO would block and
    ``/dev/zero`` never ends, so the file is opened without blocking and
    judged by what it is before a byte is read. ``what`` names it in the
    message (``--flagfile=f.txt``, ``run: suite.toml``).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise UsageError(f"{what}: cannot read: {exc.strerror or one_line(exc)}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UsageError(f"{what}: not a regular file")
    with open(fd, "rb") as handle:
        try:
            data = handle.read(limit + 1)
        except OSError as exc:
            raise UsageError(f"{what}: cannot read: {exc.strerror or one_line(exc)}") \
                from None
    if len(data) > limit:
        raise UsageError(f"{what}: larger than {limit} bytes")
    return data


def read_json_file(path: str, what: str, limit: int, kind: str = "JSON"):
    """The JSON document of a small input file (:func:`read_small_file`'s checks), or one
    line saying why not: ``{what}: not {kind} (...)``."""
    data = read_small_file(path, what, limit)
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError
        raise UsageError(f"{what}: not {kind} ({one_line(exc) or type(exc).__name__})") \
            from None


def _read_flagfile(path: str) -> str:
    data = read_small_file(path, f"--flagfile={path}", MAX_FLAGFILE_BYTES)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"--flagfile={path}: not valid UTF-8 (byte {exc.start})") from None


def expand_flagfiles(argv: list[str]) -> list[str]:
    """Expands ``--flagfile=PATH`` in place, nested files too (without recursion).

    A file including itself, nesting deeper than :data:`MAX_FLAGFILE_DEPTH`,
    more than :data:`MAX_FLAGFILE_READS` files read or more than
    :data:`MAX_EXPANDED_ARGS` arguments is one error naming the file.
    """
    expanded: list[str] = []
    reads = 0
    # Each frame: the arguments still to expand, and the file they came from.
    frames: list[tuple[iter, str]] = [(iter(argv), "")]
    while frames:
        arg = next(frames[-1][0], None)
        if arg is None:
            frames.pop()
            continue
        if not arg.startswith(FLAGFILE):
            expanded.append(arg)
            if len(expanded) > MAX_EXPANDED_ARGS:
                raise UsageError(f"--flagfile={frames[-1][1]}: the flag files expand to more "
                                 f"than {MAX_EXPANDED_ARGS} arguments")
            continue
        path = arg[len(FLAGFILE):]
        key = os.path.realpath(path)
        stack = [file for _, file in frames[1:]]
        if key in stack:
            raise UsageError(f"--flagfile={path}: includes itself (through "
                             f"{' -> '.join([*stack, key])})")
        if len(stack) >= MAX_FLAGFILE_DEPTH:
            raise UsageError(f"--flagfile={path}: flag files nested more than "
                             f"{MAX_FLAGFILE_DEPTH} deep")
        reads += 1
        if reads > MAX_FLAGFILE_READS:
            raise UsageError(f"--flagfile={path}: more than {MAX_FLAGFILE_READS} flag files "
                             "read for one command line (files including others many times?)")
        lines = [line.strip() for line in _read_flagfile(path).splitlines()]
        frames.append((iter([line for line in lines if line and not line.startswith("#")]),
                       key))
    return expanded


def _plugin_flags(argv: list[str]):
    """Yields ``(start, end, flag, value)`` for each --plugin / -p in ``argv``."""
    i = 0
    while i < len(argv):
        arg, start = argv[i], i
        value = None
        if arg in ("--plugin", "-p") and i + 1 < len(argv):
            value = argv[i + 1]
            i += 1
        elif arg.startswith("--plugin="):
            arg, value = "--plugin", arg.split("=", 1)[1]
        elif arg.startswith("-p") and len(arg) > 2:
            arg, value = "-p", arg[2:].lstrip("=")
        i += 1
        if value is not None:
            yield start, i, arg, value


def prescan_plugins(argv: list[str]) -> PluginSelection:
    """Finds --plugin, -p NAME and -p no:NAME before the full parse (plugins add options)."""
    selection = PluginSelection()
    for _, _, flag, value in _plugin_flags(argv):
        if flag == "-p" and value.startswith("no:"):
            selection.blocked.append(value[3:])
        else:
            selection.specs.append(value)
    return selection


def first_word(argv: list[str]) -> int:
    """The index of the first argument that is not ``--plugin``/``-p`` (or its value):
    where a subcommand's name is, since ``ireebench --plugin X NAME ...`` runs
    the subcommand ``NAME`` of the plugin ``X``; ``len(argv)`` when none."""
    position = 0
    for start, end, _, _ in _plugin_flags(argv):
        if start != position:
            break
        position = end
    return position


def without_plugin_flags(argv: list[str]) -> list[str]:
    """``argv`` without --plugin / -p: for a plugin's subcommand, which never
    declares them (the plugins were loaded from the whole command line)."""
    dropped = set()
    for start, end, _, _ in _plugin_flags(argv):
        dropped.update(range(start, end))
    return [arg for index, arg in enumerate(argv) if index not in dropped]

