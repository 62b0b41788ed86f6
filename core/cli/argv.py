"""The argument list before click sees it: flag files and plugin selection.

* ``--flagfile=PATH`` is replaced by the flags in the file (one per line,
  ``#`` starts a comment), as IREE's tools read it. ireebench expands flag
  files itself, nested ones too, with cycle detection and a size limit, so
  no flag file ever reaches the runtime's own parser.
* ``--plugin``, ``-p NAME`` and ``-p no:NAME`` are read before the full
  parse, because plugins add options.
"""

from __future__ import annotations

import os

from ..errors import UsageError, one_line
from ..pluginmanager import PluginSelection

FLAGFILE = "--flagfile="
# Flag files are a few lines; anything larger is a mistake (a device, a binary).
MAX_FLAGFILE_BYTES = 1 << 20


def _read_flagfile(path: str) -> str:
    if os.path.exists(path) and not os.path.isfile(path):
        # A FIFO would block and /dev/zero never ends: refuse before opening.
        raise UsageError(f"--flagfile={path}: not a regular file")
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_FLAGFILE_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"--flagfile={path}: cannot read: {exc.strerror or one_line(exc)}") \
            from None
    if len(data) > MAX_FLAGFILE_BYTES:
        raise UsageError(f"--flagfile={path}: larger than {MAX_FLAGFILE_BYTES} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"--flagfile={path}: not valid UTF-8 (byte {exc.start})") from None


def expand_flagfiles(argv: list[str], _stack: tuple[str, ...] = ()) -> list[str]:
    """Expands ``--flagfile=PATH`` in place, recursively; a file including itself is an error."""
    expanded: list[str] = []
    for arg in argv:
        if not arg.startswith(FLAGFILE):
            expanded.append(arg)
            continue
        path = arg[len(FLAGFILE):]
        key = os.path.realpath(path)
        if key in _stack:
            raise UsageError(f"--flagfile={path}: includes itself (through "
                             f"{' -> '.join(_stack + (key,))})")
        lines = [line.strip() for line in _read_flagfile(path).splitlines()]
        flags = [line for line in lines if line and not line.startswith("#")]
        expanded.extend(expand_flagfiles(flags, _stack + (key,)))
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


def without_plugin_flags(argv: list[str]) -> list[str]:
    """``argv`` without --plugin / -p: for a plugin's subcommand, which never
    declares them (the plugins were loaded from the whole command line)."""
    dropped = set()
    for start, end, _, _ in _plugin_flags(argv):
        dropped.update(range(start, end))
    return [arg for index, arg in enumerate(argv) if index not in dropped]
