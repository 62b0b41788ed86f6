"""The configuration file: settings of plugins and defaults of flags (pytest's inifile).

Searched from the current folder upward, the first folder that has one
wins (as pytest's rootdir): its ``ireebench.toml`` (top-level keys), else
its ``pyproject.toml`` if that has a ``[tool.ireebench]`` table. A key is
either a setting a plugin declares in ``ireebench_addoption`` with
``parser.addini(name, help, type=..., default=...)`` and reads with
``config.getini(name)``, or the name of a flag (``benchmark_repetitions =
5``): then it is that flag's default, and the command line wins. Any other
key is a warning line naming the file and the key.
"""

from __future__ import annotations

import difflib
import importlib
from dataclasses import dataclass
from pathlib import Path

from .errors import UsageError

TYPES = ("string", "bool", "int", "float", "list", "paths")


@dataclass(frozen=True)
class IniSpec:
    name: str
    help: str
    type: str
    default: object
    owner: str


def _toml():
    """tomllib (Python >= 3.11), or tomli on Python 3.10 (a dependency there)."""
    try:
        return importlib.import_module("tomllib")
    except ImportError:
        return importlib.import_module("tomli")


def _read(path: Path) -> dict:
    try:
        with path.open("rb") as file:
            return _toml().load(file)
    except (OSError, ValueError) as exc:  # TOMLDecodeError is a ValueError
        raise UsageError(f"{path}: cannot read the configuration file: {exc}") from None


def find(start: Path | None = None) -> tuple[Path | None, dict]:
    """The configuration file (None if there is none) and its ireebench settings."""
    for folder in [start := (start or Path.cwd()).resolve(), *start.parents]:
        explicit = folder / "ireebench.toml"
        if explicit.is_file():
            return explicit, _read(explicit)
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            table = _read(pyproject).get("tool", {}).get("ireebench")
            if isinstance(table, dict):
                return pyproject, table
    return None, {}


def _where(path, name) -> str:
    section = "[tool.ireebench] " if path.name == "pyproject.toml" else ""
    return f"{path}: {section}{name}"


def _convert(value, spec: IniSpec, path: Path):
    kind = spec.type
    ok = {"string": str, "bool": bool, "float": (int, float), "list": list,
          "paths": list}.get(kind, int)
    if (not isinstance(value, ok) or (kind == "int" and isinstance(value, bool))
            or (kind in ("list", "paths") and not all(isinstance(v, str) for v in value))):
        what = {"list": "a list of strings", "paths": "a list of paths"}.get(kind, kind)
        raise UsageError(f"{_where(path, spec.name)} = {value!r}: expected {what}")
    if kind == "paths":  # relative to the file, as pytest's
        return [path.parent / item for item in value]
    return float(value) if kind == "float" else value


class IniFile:
    """The file found (``path``, None if none) and the settings declared with addini."""

    def __init__(self, specs: dict[str, IniSpec], start: Path | None = None):
        self.specs = specs
        self.path, self.values = find(start)
        # Checked now, so that a wrong value is refused before anything runs.
        self._converted = {name: _convert(self.values[name], spec, self.path)
                           for name, spec in specs.items() if name in self.values}

    def get(self, name: str):
        if name not in self.specs:
            close = difflib.get_close_matches(name, self.specs, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(f"no configuration setting named {name!r}{hint} (parser.addini)")
        spec = self.specs[name]
        if name in self._converted:
            return self._converted[name]
        empty = {"string": "", "bool": False, "list": [], "paths": []}.get(spec.type)
        return empty if spec.default is None else spec.default

    def flag_defaults(self, option_specs: dict) -> dict:
        """Click's ``default_map``: the file's keys that name a flag, as the flag's text."""
        defaults = {}
        for name, value in self.values.items():
            if name in option_specs and name not in self.specs:
                if isinstance(value, bool):
                    value = "true" if value else "false"
                defaults[name] = [str(v) for v in value] if isinstance(value, list) \
                    else str(value)
        return defaults

    def warnings(self, option_specs: dict) -> list[str]:
        known = [*self.specs, *option_specs]
        lines = []
        for name in self.values:
            if name not in known:
                close = difflib.get_close_matches(name, known, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                lines.append(f"{_where(self.path, name)}: unknown setting, ignored{hint}")
        return lines
