"""``ireebench run SUITE.toml [flags]``: the benchmarks of a suite file, as one run.

A suite is a TOML file (``tomllib``; ``tomli`` on Python 3.10) of
``[defaults]`` and ``[[benchmark]]`` entries whose keys are the command
line's flags without dashes: an entry's keys replace ``[defaults]``', the
command line's flags replace both. Each entry is one point, or the points of
its ``sweep``, all measured as one run; file paths are relative to the
suite's folder. A mistake is one line naming the file, the entry and the key
("did you mean" for a misspelled key). The format, with an example:
docs/usage.md, "Sweeps and suites".
"""

from __future__ import annotations

import difflib
import importlib
import os
import re
from pathlib import Path

from click.core import ParameterSource
from ireebench.commands import (
    ArgvCommand,
    GroupedOption,
    build_command,
    make_context,
    option_specs,
    parse_points,
    parse_runtime_flag,
    read_small_file,
)
from ireebench.config import Config
from ireebench.errors import UsageError, one_line
from ireebench.names import format_value
from ireebench.points import MAX_POINTS, PointSpec
from ireebench.results import RunResult

from . import SUITE_FILE
from .axes import SWEEP_FLAG, point_specs

HELP = """Measure the benchmarks of a suite file: [[benchmark]] tables whose keys are the
command line's flags without dashes (a repeatable flag takes a list; sweep = { bs = [1, 4] }
gives an entry its axes), an optional [defaults] table, and an optional name per entry that
prefixes its rows. Flags after the file apply to every entry (--benchmark_out,
--benchmark_repetitions ...). Relative --module, --parameters and --input paths are relative to
the suite's folder. See docs/usage.md (Sweeps and suites).

Usage: ireebench run SUITE.toml [flags]
"""

TOP_LEVEL_KEYS = ("benchmark", "defaults")
# A suite is a few kilobytes; anything much larger is a mistake (a device, a dump).
MAX_SUITE_BYTES = 4 << 20
# Keys that cannot be in a suite: they shape how ireebench itself starts.
COMMAND_LINE_ONLY = {"plugin", "p", "version", "V", "help", "h", "point_index",
                     "process_index"}
# Keys whose values are file paths: a number there is a mistake in the file.
PATH_KEYS = ("module", "parameters")
ENTRY_NAME = re.compile(r"[A-Za-z0-9_.:+-]+")
INPUT_FILE = re.compile(r"^((?:[^=@+*]*=)?)([@+*])(.+)$")


def _toml():
    """tomllib (Python >= 3.11), or tomli on Python 3.10 (a dependency there)."""
    try:
        return importlib.import_module("tomllib")
    except ImportError:
        return importlib.import_module("tomli")


class SuiteError(UsageError):
    """A mistake in the suite file: one line naming the file, the entry and the key."""


def load(path: str) -> dict:
    """The suite's TOML, or one line saying why it cannot be read (a FIFO, a
    device such as ``/dev/zero`` or a file over :data:`MAX_SUITE_BYTES` too)."""
    data = read_small_file(path, f"run: {path}", MAX_SUITE_BYTES)
    toml = _toml()
    try:
        return toml.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not UTF-8 text") from None
    except toml.TOMLDecodeError as exc:
        raise UsageError(f"{path}: invalid TOML: {one_line(exc)}") from None


class SuiteReader:
    """Checks a suite's tables and turns each entry into its command line."""

    def __init__(self, path: str, command, given: set[str] = frozenset()):
        self.path = path
        self.given = given  # the options the command line sets
        self.folder = Path(path).resolve().parent
        self.params = {}  # key (flag without dashes) -> the click option
        for param in command.params:
            if not isinstance(param, GroupedOption):
                continue
            for flag in (*param.opts, *param.secondary_opts):
                self.params[flag.lstrip("-")] = param

    def fail(self, where: str, message: str) -> SuiteError:
        return SuiteError(f"{self.path}: {where}: {message}" if where else
                          f"{self.path}: {message}")

    def entries(self, data: dict) -> list[tuple[str, str, dict]]:
        """``(where, name, keys)`` per ``[[benchmark]]``, defaults merged in."""
        for key in data:
            if key not in TOP_LEVEL_KEYS:
                raise self.fail("", f"unknown table {key!r}{_did_you_mean(key, TOP_LEVEL_KEYS)}"
                                " (a suite has [defaults] and [[benchmark]] tables)")
        defaults = data.get("defaults", {})
        if not isinstance(defaults, dict):
            raise self.fail("[defaults]", "must be a table")
        if "name" in defaults:
            raise self.fail("[defaults]", "key 'name': each entry names itself")
        self.check_keys("[defaults]", defaults)
        benchmarks = data.get("benchmark")
        if not isinstance(benchmarks, list) or not benchmarks:
            raise self.fail("", "no [[benchmark]] entries")
        found, names_seen = [], {}
        for number, entry in enumerate(benchmarks, 1):
            where = f"[[benchmark]] {number}"
            if not isinstance(entry, dict):
                raise self.fail(where, "must be a table")
            name = entry.get("name", "")
            if name != "":
                if not isinstance(name, str) or not ENTRY_NAME.fullmatch(name):
                    raise self.fail(where, f"key 'name': {name!r} is not a name (letters, "
                                           "digits and _ . : + -)")
                where = f"{where} ({name})"
                if name in names_seen:
                    raise self.fail(where, f"key 'name': {names_seen[name]} has the same name")
                names_seen[name] = where
            self.check_keys(where, entry)
            keys = {key: value for key, value in defaults.items()}
            keys.update({key: value for key, value in entry.items() if key != "name"})
            if isinstance(defaults.get("sweep"), dict) and isinstance(entry.get("sweep"), dict):
                keys["sweep"] = {**defaults["sweep"], **entry["sweep"]}
            if "module" not in keys and "module" not in keys.get("sweep", {}) \
                    and "module" not in self.given:
                raise self.fail(where, "no key 'module': every entry names the module it "
                                       "measures (or [defaults] does, or --module after the "
                                       "suite file)")
            found.append((where, name, keys))
        return found

    def check_keys(self, where: str, table: dict) -> None:
        for key, value in table.items():
            if key == "name":
                continue
            if key == "sweep":
                self.check_sweep(where, value)
                continue
            if key in COMMAND_LINE_ONLY:
                raise self.fail(where, f"key {key!r}: only on the command line (it shapes how "
                                       "ireebench starts, before the suite is read)")
            param = self.params.get(key)
            if param is None:
                if not self.is_runtime_flag(value if not isinstance(value, list) else
                                            (value or [""])[0], key):
                    raise self.fail(where, f"unknown key {key!r}"
                                           f"{_did_you_mean(key, list(self.params))}")
                if isinstance(value, (list, dict)):
                    raise self.fail(where, f"key {key!r}: a runtime flag takes one value")
                continue
            self.check_value(where, key, value, param.multiple)

    @staticmethod
    def is_runtime_flag(value, key: str) -> bool:
        if isinstance(value, (dict, list)):
            value = ""
        try:
            parse_runtime_flag(f"--{key}={_text(value)}")
        except ValueError:
            return False
        return True

    def check_value(self, where: str, key: str, value, multiple: bool) -> None:
        if isinstance(value, list):
            if not multiple:
                raise self.fail(where, f"key {key!r} takes one value, not a list")
            for item in value:
                self.check_value(where, key, item, False)
            return
        if isinstance(value, dict) or not isinstance(value, (str, int, float, bool)):
            raise self.fail(where, f"key {key!r}: expected a string, number or boolean"
                                   f"{' (or a list of them)' if multiple else ''}, got "
                                   f"{type(value).__name__}")
        if key in PATH_KEYS and not isinstance(value, str):
            raise self.fail(where, f"key {key!r}: expected a path (a string such as "
                                   f"\"model.vmfb\"), got {_text(value)} "
                                   f"({type(value).__name__})")

    def check_sweep(self, where: str, value) -> None:
        if not isinstance(value, dict) or not value:
            raise self.fail(where, "key 'sweep': expected a table of axes, "
                                   "sweep = { bs = [1, 4] }")
        for axis, values in value.items():
            if isinstance(values, str):
                continue  # a range or a list as --sweep spells it: checked with the others
            if not isinstance(values, list) or not values:
                raise self.fail(where, f"sweep axis {axis!r}: expected a list of values or a "
                                       "range such as \"1..64:*2\"")
            for item in values:
                if isinstance(item, (dict, list)) or not isinstance(item, (str, int, float,
                                                                           bool)):
                    raise self.fail(where, f"sweep axis {axis!r}: {item!r} is not a value")

    def argv(self, keys: dict, replaced: set[str]) -> list[str]:
        """An entry's flags; the keys in ``replaced`` (given on the command line) left out."""
        args = []
        for key, value in keys.items():
            if key == "sweep":
                for axis, values in value.items():
                    body = values if isinstance(values, str) else \
                        ",".join(_text(item).replace(",", "\\,") for item in values)
                    args.append(f"{SWEEP_FLAG}={axis}={body}")
                continue
            param = self.params.get(key)
            name = param.name if param is not None else key
            if name in replaced:
                continue
            for item in value if isinstance(value, list) else [value]:
                args.append(f"--{key}={self.resolve(name, _text(item))}")
        return args

    def resolve(self, name: str, value: str) -> str:
        """A file path relative to the suite's folder (modules, parameters, inputs)."""
        if name == "module" and value != "-":
            return self._relative(value)
        if name == "parameters":
            scope, sep, path = value.rpartition("=")
            return f"{scope}{sep}{self._relative(path)}"
        if name == "input":
            match = INPUT_FILE.match(value)
            if match:
                return f"{match.group(1)}{match.group(2)}{self._relative(match.group(3))}"
        return value

    def _relative(self, path: str) -> str:
        if not path or os.path.isabs(path):
            return path
        return os.path.normpath(self.folder / path)


def _text(value) -> str:
    return format_value(value)


def _did_you_mean(key: str, known) -> str:
    close = difflib.get_close_matches(key, list(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _given_on_command_line(command, ctx) -> set[str]:
    """Option names the command line sets (they replace the entries'), and its runtime
    flags' names."""
    given = {param.name for param in command.params
             if ctx.get_parameter_source(param.name) == ParameterSource.COMMANDLINE}
    given |= {arg.lstrip("-").split("=", 1)[0] for arg in ctx.args if arg.startswith("-")}
    return given


def run_main(argv: list[str], invocation) -> Config | RunResult:
    """``ireebench run SUITE.toml [flags]``: the suite's run, which the core runs."""
    if not argv or argv[0] in ("--help", "-h"):
        invocation.stdout.write(HELP)
        return RunResult(0, [])
    path, cmdline = argv[0], list(argv[1:])
    if path.startswith("-"):
        raise UsageError(f"run: expected a suite file first: ireebench run SUITE.toml [flags] "
                         f"(got {path})")
    command = build_command(invocation.pm, name="ireebench run", help=HELP)
    ctx = make_context(command, "ireebench run", cmdline, invocation)
    if ctx is None:  # --help after the file
        return RunResult(0, [])
    replaced = _given_on_command_line(command, ctx)
    reader = SuiteReader(path, command, replaced)
    specs = option_specs(command)
    points: list[PointSpec] = []
    for where, name, keys in reader.entries(load(path)):
        entry_argv = reader.argv(keys, replaced) + cmdline
        label = f"{where} of {path}"
        try:
            expanded = point_specs(entry_argv, specs, label_prefix=label, name_prefix=name)
        except SuiteError:
            raise
        except UsageError as exc:
            raise UsageError(f"{path}: {where}: {exc}") from None
        points.extend(expanded or [PointSpec({}, entry_argv, label, name)])
        if len(points) > MAX_POINTS:
            raise UsageError(f"{path}: {where}: the entries so far make {len(points)} points, "
                             f"more than the {MAX_POINTS} a run measures; split the suite")
    config = parse_points(points, invocation, ["run", path, *cmdline], command,
                          prog="ireebench run")
    if config is None:
        return RunResult(0, [])
    config.stash[SUITE_FILE] = str(Path(path).resolve())
    return config  # the core runs it, as a plain run


# What the plugin registers as ``ireebench run`` (a DeferredCommand names it).
COMMAND = ArgvCommand("run", run_main, help=HELP,
                      short_help="Measure the benchmarks of a suite file (TOML).")
