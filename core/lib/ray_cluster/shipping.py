"""The files a point needs, shipped to the node that measures it, and found there.

The driver ships, through Ray's object store, what a point reads:

* its modules' bytes, as the driver took them (:mod:`ireebench._modules`:
  a ``.vmfb``, an ``x.mlir`` compiled here, ``--module=-`` read from
  stdin), so the node measures the very bytes whose sha256 this run
  reports, and compiles nothing;
* the files its ``--input`` values read (``@x.npy``, ``2x2xf32=@x.bin``,
  ``&...=+x.bin``) and its ``--parameters`` archives;
* the files its command line names as a subcommand's arguments (the suite
  of ``ireebench run SUITE.toml``), so that the node reads the same suite.

On the node the task checks each file's sha256, writes it into a private
directory, and runs the point's ireebench with ``--ray_node_files=FILE``
(:class:`NodeFiles`): there the point's ``--module``, ``--input`` and
``--parameters`` values name the shipped files (``ireebench_generate_points``). A value the
driver did not ship (a file it could not read) is left as it is, so the
node refuses it in the same words a local run would. A suite's relative
paths resolve next to the shipped suite, under :attr:`NodeFiles.root`,
which is taken off again to find them.

Nothing here imports Ray: the driver's half runs before the cluster is
asked anything, the node's half in the point's own ireebench.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from ireebench._argscan import scan_options
from ireebench._modules import last_images
from ireebench.errors import UsageError

MODULE, FILE, ARGUMENT = "module", "file", "argument"


@dataclass
class Shipped:
    """One file a point needs on its node.

    :ivar kind: ``module`` (a ``--module`` value), ``file`` (read by an
        input or a parameter archive) or ``argument`` (a subcommand's file).
    :ivar key: how the point names it (the ``--module`` value, the path in an
        ``--input`` or ``--parameters`` value, the argument's absolute path).
    :ivar name: its file name on the node.
    :ivar sha256: hex digest of ``data``.
    :ivar data: the bytes.
    :ivar position: for an argument, its index in the command line.
    """

    kind: str
    key: str
    name: str
    sha256: str
    data: bytes = field(repr=False, default=b"")
    position: int | None = None


def input_file(value: str) -> tuple[str, str] | None:
    """``(what comes before the path, the path)`` of an ``--input`` value that reads a
    file (``@x.npy``, ``2x2xf32=@x.bin``, ``&4xf32=+x.bin``), as :mod:`ireebench.inputs`
    reads it; None for a value without one."""
    text = str(value)
    if text[:1] in ("@", "+", "*"):
        return text[:1], text[1:]
    storage = "&" if text.startswith("&") else ""
    metadata, sep, contents = text[len(storage):].partition("=")
    contents = contents.strip()  # as the parser reads it
    if sep and contents[:1] in ("@", "+"):
        return f"{storage}{metadata}={contents[0]}", contents[1:]
    return None


def parameter_file(value: str) -> tuple[str, str]:
    """``(scope=, path)`` of a ``--parameters`` value, as the session reads it."""
    scope, sep, path = str(value).rpartition("=")
    return scope + sep, path


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None  # the node says why, as a local run would


def _file(kind: str, key: str, path: str) -> Shipped | None:
    if not os.path.isfile(path):
        return None
    data = _read(path)
    if data is None:
        return None
    import hashlib
    return Shipped(kind, key, os.path.basename(path) or "file",
                   hashlib.sha256(data).hexdigest(), data)


def point_files(config) -> list[Shipped]:
    """What the point of ``config`` reads: its modules (the bytes this run took),
    its inputs' and parameter archives' files."""
    shipped = []
    specs = list(config.getoption("module") or [])
    for spec, image in zip(specs, last_images(config)):
        if image is None:
            continue  # not taken here: the node takes it (and says why it cannot)
        data = bytes(image.data) if image.data is not None else _read(image.path)
        if data is not None:
            shipped.append(Shipped(MODULE, spec, image.name, image.sha256, data))
    return shipped + input_files(config)


def input_files(config) -> list[Shipped]:
    """The files its ``--input`` values and ``--parameters`` archives read."""
    shipped = []
    for value in config.getoption("input") or []:
        found = input_file(value)
        if found is not None:
            item = _file(FILE, found[1], found[1])
            if item is not None:
                shipped.append(item)
    for value in config.getoption("parameters") or []:
        _, path = parameter_file(value)
        item = _file(FILE, path, path)
        if item is not None:
            shipped.append(item)
    return shipped


def argument_files(config) -> list[Shipped]:
    """The files a subcommand's command line names as arguments (``run SUITE.toml``).

    The arguments that are neither options nor their values, but the first
    (a subcommand's name; a plain run's stray argument is ignored anyway),
    each that is a regular file here.
    """
    argv = list(config.run.command_line)
    taken: set[int] = set()
    for found in scan_options(argv, dict(config.option_specs)):
        taken |= found.indices
    shipped = []
    for index, arg in enumerate(argv):
        if index == 0 or index in taken or arg.startswith("-"):
            continue
        item = _file(ARGUMENT, os.path.abspath(arg), arg)
        if item is not None:
            item.position = index
            shipped.append(item)
    return shipped


# --- on the node ------------------------------------------------------------------


@dataclass
class NodeFiles:
    """The files the task wrote on the node (``--ray_node_files=FILE``).

    :ivar root: where the subcommand's file arguments were written, under
        their absolute path on the driver: a suite's relative paths resolve
        under it, and are found again with it taken off.
    :ivar modules: ``--module`` value -> the shipped module.
    :ivar files: a path an ``--input`` or ``--parameters`` value names -> the
        shipped file.
    """

    root: str = ""
    modules: dict = field(default_factory=dict)
    files: dict = field(default_factory=dict)

    @classmethod
    def load(cls, path: str) -> NodeFiles:
        try:
            data = json.loads(Path(path).read_text())
            return cls(str(data["root"]), dict(data["modules"]), dict(data["files"]))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise UsageError(f"--ray_node_files={path}: not the files of a Ray task: "
                             f"{exc}") from None

    def dump(self, path: str) -> None:
        Path(path).write_text(json.dumps({"root": self.root, "modules": self.modules,
                                          "files": self.files}))

    def _driver_name(self, path: str) -> str:
        """The name the driver gave a path (a suite's path, with the root taken off)."""
        if self.root and path.startswith(self.root + os.sep):
            return path[len(self.root):]
        return path

    def module(self, spec: str) -> str | None:
        return self.modules.get(self._driver_name(spec))

    def file(self, path: str) -> str | None:
        return self.files.get(self._driver_name(path))

    def rewrite(self, options: dict) -> None:
        """A point's ``--module``, ``--input`` and ``--parameters`` values, on the shipped
        files (in place). A module is its shipped ``.vmfb`` (a compiled ``x.mlir``
        too, a ``-`` read on the driver), so nothing is compiled or read from stdin
        on the node."""
        modules = [self.module(spec) or spec for spec in options.get("module") or ()]
        if modules:
            options["module"] = type(options["module"])(modules)
        inputs = []
        for value in options.get("input") or ():
            found = input_file(value)
            shipped = self.file(found[1]) if found is not None else None
            inputs.append(value if shipped is None else found[0] + shipped)
        if inputs:
            options["input"] = type(options["input"])(inputs)
        parameters = []
        for value in options.get("parameters") or ():
            scope, path = parameter_file(value)
            shipped = self.file(path)
            parameters.append(value if shipped is None else scope + shipped)
        if parameters:
            options["parameters"] = type(options["parameters"])(parameters)
