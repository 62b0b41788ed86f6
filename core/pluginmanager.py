"""The plugin manager: built-ins, entry points and ``--plugin`` modules, with guard rails.

Plugins are registered in this order, each under a name:

1. the built-in plugins (:data:`BUILTIN_PLUGINS`), through the same path a
   third-party plugin takes, so ``-p no:NAME`` blocks a built-in exactly
   like any other plugin, except the essential ones
   (:data:`ESSENTIAL_PLUGINS`), without which a run makes no sense;
2. installed plugins: entry points of group ``ireebench``, unless
   ``IREEBENCH_DISABLE_PLUGIN_AUTOLOAD`` is set;
3. ``--plugin MODULE|FILE.py`` and ``-p MODULE``, named by the module
   (a file by its stem);
4. plugin objects given to the Python API (``ireebench.run(argv,
   plugins=[...])``).

Guard rails, each a one-line error naming the plugins involved (a warning
where nothing breaks):

* a hook implementation of an unknown hook (a misspelled
  ``ireebench_benchmark_results``), marked or merely ``ireebench_``-named,
  as pytest's ``check_pending`` does;
* a wrapper on a hook that is called one plugin at a time
  (``hookspecs.PER_PLUGIN_HOOKS``), where it could not wrap anything;
* ``-p no:`` on an essential plugin; ``-p no:X`` together with
  ``--plugin X``; a plugin whose name is already taken (a ``--plugin``
  file called ``console.py``, an entry point named like a built-in);
* ``-p no:NAME`` that matches no plugin: a warning.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.metadata
import importlib.util
import inspect
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pluggy

from . import hookspecs
from .errors import UsageError, one_line

ENTRY_POINT_GROUP = "ireebench"
DISABLE_AUTOLOAD_ENV = "IREEBENCH_DISABLE_PLUGIN_AUTOLOAD"
HOOK_PREFIX = "ireebench_"

# Registration name -> importable module. Order matters only for display.
BUILTIN_PLUGINS = {
    "discovery": "ireebench.plugins.discovery",
    "kinds": "ireebench.plugins.kinds",
    "runtime_backend": "ireebench.plugins.runtime_backend",
    "native_backend": "ireebench.plugins.native_backend",
    "replay_backend": "ireebench.plugins.replay_backend",
    "console": "ireebench.plugins.console",
    "csv": "ireebench.plugins.csv_reporter",
    "json": "ireebench.plugins.json_reporter",
    "output_processing": "ireebench.plugins.output_processing",
    "provenance": "ireebench.plugins.provenance",
    "profiling_pass": "ireebench.plugins.profiling_pass",
    "dispatch_statistics": "ireebench.plugins.dispatch_statistics",
    "device_profiling": "ireebench.plugins.device_profiling",
    "replay_capture": "ireebench.plugins.replay_capture",
    "mlir_modules": "ireebench.plugins.mlir_modules",
    "compare_reporters": "ireebench.plugins.compare_reporters",
    "statistics": "ireebench.plugins.statistics",
    "cold_start": "ireebench.plugins.cold_start",
    "environment": "ireebench.plugins.environment",
}

# Built-ins a run cannot do without: `-p no:` on them is refused, like
# pytest's essential plugins.
ESSENTIAL_PLUGINS = frozenset({"discovery", "kinds", "runtime_backend"})


@dataclass
class PluginInfo:
    """Where a registered plugin came from (for ``ireebench plugins`` and reports)."""

    name: str
    origin: str  # "builtin", "entry point", "--plugin", "python api"
    plugin: object
    distribution: str = ""  # entry points: the installed distribution
    version: str = ""  # entry points: its version
    path: str = ""  # the file the plugin's code lives in

    @property
    def builtin(self) -> bool:
        return self.origin == "builtin"


def plugin_file(plugin) -> str:
    """The file a plugin's code lives in: a module's, or the module of an object's class."""
    path = getattr(plugin, "__file__", None)
    if path is None:
        path = getattr(sys.modules.get(type(plugin).__module__), "__file__", None)
    return str(path or "")


class PluginManager(pluggy.PluginManager):
    """pluggy's manager with ireebench's naming rules and registry of origins.

    Like pytest, a function named ``ireebench_*`` is a hook implementation
    even without ``@hookimpl``, so a misspelled hook cannot be silently
    ignored (:meth:`check_unknown_hooks` rejects it).
    """

    def __init__(self) -> None:
        super().__init__("ireebench")
        self.add_hookspecs(hookspecs)
        self.infos: dict[str, PluginInfo] = {}
        self.warnings: list[str] = []

    def parse_hookimpl_opts(self, plugin, name: str):
        opts = super().parse_hookimpl_opts(plugin, name)
        if opts is None and name.startswith(HOOK_PREFIX):
            method = getattr(plugin, name, None)
            if inspect.isroutine(method):
                opts = {}
        return opts

    def check_name_free(self, name: str, origin: str, **details) -> None:
        """A plugin name already taken is an error naming both plugins."""
        if name in self.infos:
            taken = self.infos[name]
            raise UsageError(
                f"plugin name {name!r} ({origin}{_detail(details)}) is already taken by the "
                f"{taken.origin} plugin {name!r}{_detail(vars(taken))}; rename one of them"
            )

    def register_plugin(self, plugin, name: str, origin: str, **details) -> None:
        """Registers ``plugin`` under ``name``; a name already taken is an error."""
        self.check_name_free(name, origin, **details)
        try:
            self.register(plugin, name=name)
        except pluggy.PluginValidationError as exc:
            raise UsageError(f"plugin {name!r} is invalid: {one_line(exc)}") from None
        _refuse_wrappers(self, plugin, name)
        details.setdefault("path", plugin_file(plugin))
        self.infos[name] = PluginInfo(name, origin, plugin, **details)

    def check_unknown_hooks(self) -> None:
        """Every hook implementation must match a hook specification (pytest's check_pending)."""
        known = [name for name in dir(hookspecs) if name.startswith(HOOK_PREFIX)]
        for hook_name, caller in vars(self.hook).items():
            if hook_name.startswith("_") or caller.has_spec():
                continue
            for impl in caller.get_hookimpls():
                if impl.optionalhook:
                    continue
                close = difflib.get_close_matches(hook_name, known, n=1)
                hint = f" (did you mean {close[0]}?)" if close else ""
                raise UsageError(f"plugin {impl.plugin_name!r}: {hook_name} is not an ireebench "
                                 f"hook{hint}")


def _detail(details: dict) -> str:
    where = details.get("distribution") or details.get("path") or ""
    return f" from {where}" if where else ""


def _refuse_wrappers(pm: PluginManager, plugin, name: str) -> None:
    for hook_name in hookspecs.PER_PLUGIN_HOOKS:
        for impl in getattr(pm.hook, hook_name).get_hookimpls():
            if impl.plugin is plugin and (impl.wrapper or impl.hookwrapper):
                pm.unregister(plugin)
                raise UsageError(
                    f"plugin {name!r}: {hook_name} cannot be a wrapper (ireebench calls it "
                    "one plugin at a time to name the plugin behind each object); "
                    "drop wrapper=True"
                )


# --- --plugin specs ------------------------------------------------------------


def _is_file_spec(spec: str) -> bool:
    return spec.endswith(".py") or os.sep in spec or "/" in spec


def plugin_spec_name(spec: str) -> str:
    """The name a ``--plugin`` value is registered under: the module, or a file's stem."""
    return Path(spec).stem if _is_file_spec(spec) else spec


def _import_failure(spec: str, exc: BaseException) -> UsageError:
    return UsageError(f"--plugin={spec}: failed to import: {type(exc).__name__}: {one_line(exc)}")


def import_plugin_spec(spec: str):
    """Imports a plugin given as a module name or a path to a .py file."""
    if _is_file_spec(spec):
        path = Path(spec)
        if not path.is_file():
            raise UsageError(f"--plugin={spec}: file not found")
        module_name = f"ireebench_plugin_{path.stem}"
        module_spec = importlib.util.spec_from_file_location(module_name, path)
        if module_spec is None or module_spec.loader is None:
            raise UsageError(f"--plugin={spec}: not a Python file")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[module_name] = module
        try:
            module_spec.loader.exec_module(module)
        except Exception as exc:
            sys.modules.pop(module_name, None)
            raise _import_failure(spec, exc) from exc
        return module
    try:
        return importlib.import_module(spec)
    except ModuleNotFoundError as exc:
        if exc.name and spec.startswith(exc.name):
            raise UsageError(f"--plugin={spec}: no module named {spec!r}") from exc
        raise _import_failure(spec, exc) from exc
    except Exception as exc:
        raise _import_failure(spec, exc) from exc


# --- building the manager ------------------------------------------------------


@dataclass
class PluginSelection:
    """What the command line and the Python API asked for."""

    specs: list[str] = field(default_factory=list)  # --plugin / -p NAME values
    blocked: list[str] = field(default_factory=list)  # -p no:NAME values
    objects: list = field(default_factory=list)  # plugin objects (Python API)


def _entry_points():
    if os.environ.get(DISABLE_AUTOLOAD_ENV):
        return []
    return list(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))


def _check_blocked(selection: PluginSelection) -> None:
    for name in selection.blocked:
        if name in ESSENTIAL_PLUGINS:
            raise UsageError(f"-p no:{name}: {name!r} is an essential plugin and cannot be "
                             "blocked")
    for spec in selection.specs:
        if plugin_spec_name(spec) in selection.blocked:
            raise UsageError(f"-p no:{plugin_spec_name(spec)} blocks the plugin that "
                             f"--plugin={spec} loads; drop one of them")


def _object_name(plugin) -> str:
    name = getattr(plugin, "__name__", None) or type(plugin).__name__
    return str(name)


def build_plugin_manager(selection: PluginSelection | None = None) -> PluginManager:
    """Builds the manager: built-ins, entry points, ``--plugin`` modules, objects."""
    selection = selection or PluginSelection()
    _check_blocked(selection)
    blocked = set(selection.blocked)
    pm = PluginManager()
    for name in blocked:
        pm.set_blocked(name)
    for name, module_name in BUILTIN_PLUGINS.items():
        if name not in blocked:
            pm.register_plugin(importlib.import_module(module_name), name, "builtin")
    entry_points = _entry_points()
    for entry_point in entry_points:
        if entry_point.name in blocked:
            continue
        distribution = getattr(entry_point, "dist", None)
        details = {"distribution": getattr(distribution, "name", "") or "",
                   "version": getattr(distribution, "version", "") or ""}
        try:
            module = entry_point.load()
        except Exception as exc:
            raise UsageError(
                f"plugin {entry_point.name!r} (entry point {entry_point.value}) "
                f"failed to import: {type(exc).__name__}: {one_line(exc)}"
            ) from exc
        if pm.is_registered(module):
            continue  # the same module under two entry point names
        pm.register_plugin(module, entry_point.name, "entry point", **details)
    seen_specs: set[str] = set()
    for spec in selection.specs:
        key = str(Path(spec).resolve()) if _is_file_spec(spec) else spec
        if key in seen_specs:
            continue  # the same plugin named twice
        seen_specs.add(key)
        if _is_file_spec(spec):  # refused before its code runs
            pm.check_name_free(plugin_spec_name(spec), "--plugin", path=spec)
        module = import_plugin_spec(spec)
        if pm.is_registered(module):
            continue  # already loaded as an entry point
        where = {"path": str(Path(spec).resolve())} if _is_file_spec(spec) else {}
        pm.register_plugin(module, plugin_spec_name(spec), "--plugin", **where)
    for plugin in selection.objects:
        if not pm.is_registered(plugin):
            name, number = _object_name(plugin), 1
            while name in pm.infos:  # two objects of one class
                number += 1
                name = f"{_object_name(plugin)}-{number}"
            pm.register_plugin(plugin, name, "python api")
    known = set(BUILTIN_PLUGINS) | {ep.name for ep in entry_points} | {
        plugin_spec_name(spec) for spec in selection.specs}
    for name in selection.blocked:
        if name not in known:
            close = difflib.get_close_matches(name, sorted(known), n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            pm.warnings.append(f"-p no:{name}: no plugin named {name!r}{hint}")
    pm.check_unknown_hooks()
    return pm


def loaded_plugin_names(pm) -> list[str]:
    """The names of the registered plugins, in registration order."""
    infos = getattr(pm, "infos", None)
    if infos is not None:
        return list(infos)
    return [name for name, plugin in pm.list_name_plugin() if name and plugin is not None]
