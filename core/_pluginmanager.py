"""The plugin manager: built-ins, entry points and ``--plugin`` modules, with guard rails.

Plugins are registered in this order, each under a name: the built-ins
(:data:`BUILTIN_PLUGINS`, by the path a third party's takes, so ``-p no:NAME``
blocks one, but :data:`ESSENTIAL_PLUGINS`), entry points of group
``ireebench`` (unless ``IREEBENCH_DISABLE_PLUGIN_AUTOLOAD``), ``--plugin`` and
``-p`` modules, and the Python API's objects. The guard rails (an unknown or
misspelled hook, as pytest's ``check_pending``; a wrapper on a per-plugin
hook; an essential plugin blocked; a name taken) are one line naming the
plugins involved, a warning where nothing breaks: docs/plugins.md. The core's
hooks are added first; a plugin declares its own in ``ireebench_addhooks``
(historic), and :attr:`PluginManager.hook_owners` records who declared each.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import importlib.util
import inspect
import os
import sys
import time
import types
from dataclasses import dataclass, field
from pathlib import Path

import pluggy

from . import _installed as installed
from . import hookspecs
from .errors import PluginError, Terminated, UsageError, one_line

ENTRY_POINT_GROUP = "ireebench"
DISABLE_AUTOLOAD_ENV = "IREEBENCH_DISABLE_PLUGIN_AUTOLOAD"
HOOK_PREFIX = "ireebench_"

# Registration name -> importable module. Order matters only for display.
BUILTIN_PLUGINS = {
    "kinds": "ireebench.plugins.kinds",
    "runtime_backend": "ireebench.plugins.runtime_backend",
    "local_executor": "ireebench.plugins.local_executor",
    "native_backend": "ireebench.plugins.native_backend",
    "replay_backend": "ireebench.plugins.replay_backend",
    "compare": "ireebench.plugins.compare",
    "introspection": "ireebench.plugins.introspection",
    "console": "ireebench.plugins.console",
    "csv": "ireebench.plugins.csv_reporter",
    "json": "ireebench.plugins.json_reporter",
    "output_processing": "ireebench.plugins.output_processing",
    "provenance": "ireebench.plugins.provenance",
    "profiling_pass": "ireebench.plugins.profiling_pass",
    "dispatch_statistics": "ireebench.plugins.dispatch_statistics",
    "device_time": "ireebench.plugins.device_time",
    "device_profiling": "ireebench.plugins.device_profiling",
    "replay_capture": "ireebench.plugins.replay_capture",
    "mlir_modules": "ireebench.plugins.mlir_modules",
    "statistics": "ireebench.plugins.statistics",
    "cold_start": "ireebench.plugins.cold_start",
    "environment": "ireebench.plugins.environment",
    "allocator": "ireebench.plugins.allocator",
    "modality": "ireebench.plugins.modality",
    "allocator_statistics": "ireebench.plugins.allocator_statistics",
    "user_counters": "ireebench.plugins.user_counters",
    "sweeps": "ireebench.plugins.sweeps",
    "scenarios": "ireebench.plugins.scenarios",
    "llm": "ireebench.plugins.llm",
    "goodput": "ireebench.plugins.goodput",
    "ray_executor": "ireebench.plugins.ray_executor",
    "store": "ireebench.plugins.store",
    "report": "ireebench.plugins.report",
    "frontier": "ireebench.plugins.frontier",
    "rank": "ireebench.plugins.rank",
}

# Built-ins a run cannot do without: `-p no:` on them is refused, like
# pytest's essential plugins.
ESSENTIAL_PLUGINS = frozenset({"kinds", "runtime_backend", "local_executor"})
# Built-ins merged into another, by their old name: `-p no:OLD` means `-p no:NEW`.
MERGED_PLUGINS = {"discovery": "kinds", "memory_statistics": "allocator_statistics"}

# The owner of the hooks in ireebench.hookspecs.
CORE_OWNER = "ireebench"


@dataclass
class PluginInfo:
    """Where a registered plugin came from (for ``ireebench plugins`` and reports)."""

    name: str
    origin: str  # "builtin", "entry point", "--plugin", "python api"
    plugin: object
    distribution: str = ""  # entry points: the installed distribution
    version: str = ""  # entry points: its version
    path: str = ""  # the file the plugin's code lives in
    # Seconds the manager spent importing the plugin's module (what its top level
    # imports that nothing imported before it included: ``python -X importtime``'s
    # cumulative time); None for an object given through the Python API.
    import_seconds: float | None = None

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
    ignored (:meth:`check_pending` rejects it).
    """

    def __init__(self) -> None:
        super().__init__("ireebench")
        self.infos: dict[str, PluginInfo] = {}
        self.warnings: list[str] = []
        # Hook name -> the plugin that declared it (CORE_OWNER for the core's).
        self.hook_owners: dict[str, str] = {}
        self._registering = CORE_OWNER
        self.add_hookspecs(hookspecs)
        # Historic: every plugin registered from now on is asked for its hooks.
        self.hook.ireebench_addhooks.call_historic(kwargs={"pluginmanager": self})

    def parse_hookimpl_opts(self, plugin, name: str):
        # Only a routine can be a hook implementation, and most of a module's
        # names are its imports and constants: those are passed over here, where
        # pluggy would look each up with inspect.getattr_static (with 31 built-in
        # modules, a sizeable part of every command's start).
        if isinstance(plugin, types.ModuleType):
            method = vars(plugin).get(name)
            if not inspect.isroutine(method):
                return None
            # pluggy's own reading (the marker's dict), without its getattr_static:
            # a module's attribute is its __dict__'s.
            opts = getattr(getattr(method, "__func__", method), "ireebench_impl", None)
            opts = opts if isinstance(opts, dict) else None
        else:
            opts = super().parse_hookimpl_opts(plugin, name)
        if opts is None and name.startswith(HOOK_PREFIX):
            method = getattr(plugin, name, None)
            if inspect.isroutine(method):
                opts = {}
        return opts

    def add_hookspecs(self, module_or_class) -> None:
        """Adds hook specifications, recording the plugin that declares them
        (during its ``ireebench_addhooks``); a name already declared is an
        error naming both declarers."""
        for name in _spec_names(module_or_class):
            if name in self.hook_owners:
                raise UsageError(f"hook {name} is declared twice: by {_owner(self.hook_owners[name])} "
                                 f"and by {_owner(self._registering)}")
        try:
            super().add_hookspecs(module_or_class)
        except pluggy.PluginValidationError as exc:
            raise UsageError(f"plugin {self.get_name(exc.plugin)!r}: {one_line(exc)} (the "
                             f"hook is declared by {_owner(self._registering)})") from None
        for name in _spec_names(module_or_class):
            self.hook_owners[name] = self._registering

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
        self._registering = name
        try:
            self.register(plugin, name=name)
        except pluggy.PluginValidationError as exc:
            raise UsageError(f"plugin {name!r} is invalid: {one_line(exc)}") from None
        except (UsageError, PluginError):
            raise
        except BaseException as exc:
            raise PluginError("ireebench_addhooks", name, exc) from exc
        finally:
            self._registering = CORE_OWNER
        details.setdefault("path", plugin_file(plugin))
        self.infos[name] = PluginInfo(name, origin, plugin, **details)

    def declared_hooks(self, plugin_name: str) -> list[str]:
        """The hooks ``plugin_name`` declared with ``ireebench_addhooks``."""
        return sorted(hook for hook, owner in self.hook_owners.items() if owner == plugin_name)

    def check_pending(self, blocked=()) -> None:
        """Every hook implementation must match a declared hook (pytest's check_pending),
        and no per-plugin hook may be a wrapper.

        Checked once every plugin is registered, against every declared hook
        (the core's and the plugins'). An implementation of a hook nobody
        declares is refused, naming the declared hook it misspells; marked
        ``optionalhook=True`` (a hook of a plugin that may be absent) it is
        refused only when it misspells one, left alone when a blocked
        built-in declares it, and otherwise a warning that no loaded plugin
        declares it (it is never called).
        """
        known = sorted(self.hook_owners)
        for hook_name, caller in vars(self.hook).items():
            if hook_name.startswith("_"):
                continue
            if caller.has_spec():
                _refuse_wrappers(caller)
                continue
            for impl in caller.get_hookimpls():
                self._check_undeclared(impl, hook_name, known, blocked)

    def _check_undeclared(self, impl, hook_name: str, known: list[str], blocked) -> None:
        """One implementation of ``hook_name``, which no loaded plugin declares."""
        where = f"plugin {impl.plugin_name!r}: {hook_name}"
        declarer = blocked_declarer(hook_name, blocked)
        if declarer is not None:
            if impl.optionalhook:
                return
            raise UsageError(
                f"{where} is a hook of the plugin {declarer!r}, blocked with "
                f"-p no:{declarer} (mark the implementation @hookimpl(optionalhook=True) "
                "to allow that)")
        close = misspelled_hook(hook_name, known)
        if close is not None:
            raise UsageError(f"{where} is not an ireebench hook (did you mean {close}?)")
        if impl.optionalhook:
            self.warnings.append(
                f"{where} is declared by no loaded plugin, so it is never called (is the "
                "plugin that declares it installed?)")
            return
        raise UsageError(
            f"{where} is not an ireebench hook, and no loaded plugin declares it (for a hook "
            "of a plugin that may be absent, mark the implementation "
            "@hookimpl(optionalhook=True))")


# How alike (difflib's ratio, after the ireebench_ prefix) a name must be to a
# declared hook to be taken for its misspelling: 0.8 finds a letter dropped,
# doubled or swapped (benchmark_results, sesionfinish: 0.96), not a different
# word (report_section against report_context: 0.71, compare_addoption against
# addoption: 0.69), so a hook of an absent plugin is not called a typo.
MISSPELLING_CUTOFF = 0.8


def misspelled_hook(hook_name: str, declared) -> str | None:
    """The declared hook ``hook_name`` is most likely a misspelling of, if any."""
    by_suffix = {name.removeprefix(HOOK_PREFIX): name for name in declared}
    close = difflib.get_close_matches(hook_name.removeprefix(HOOK_PREFIX), sorted(by_suffix), n=1,
                                      cutoff=MISSPELLING_CUTOFF)
    return by_suffix[close[0]] if close else None


def _owner(name: str) -> str:
    return "ireebench's core" if name == CORE_OWNER else f"the plugin {name!r}"


def _spec_names(module_or_class) -> list[str]:
    """The hook names a spec holder declares (functions marked with ``hookspec``)."""
    return [name for name in dir(module_or_class)
            if getattr(getattr(module_or_class, name, None), "ireebench_spec", None) is not None]


class _SpecRecorder:
    """Stands in for the plugin manager to learn what a module's addhooks declares."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def add_hookspecs(self, module_or_class) -> None:
        self.names.extend(_spec_names(module_or_class))


def blocked_declarer(hook_name: str, blocked) -> str | None:
    """The blocked built-in plugin that declares ``hook_name``, if any.

    Only built-ins are asked (their code is ireebench's own); a blocked
    third-party plugin is never imported for this.
    """
    for name in blocked:
        module_name = BUILTIN_PLUGINS.get(name)
        if module_name is None:
            continue
        addhooks = getattr(importlib.import_module(module_name), "ireebench_addhooks", None)
        if addhooks is None:
            continue
        recorder = _SpecRecorder()
        addhooks(pluginmanager=recorder)
        if hook_name in recorder.names:
            return name
    return None


def _detail(details: dict) -> str:
    where = details.get("distribution") or details.get("path") or ""
    return f" from {where}" if where else ""


def _refuse_wrappers(caller) -> None:
    if not hookspecs.is_per_plugin(caller.spec.function):
        return
    for impl in caller.get_hookimpls():
        if impl.wrapper or impl.hookwrapper:
            raise UsageError(
                f"plugin {impl.plugin_name!r}: {caller.name} cannot be a wrapper (ireebench "
                "calls it one plugin at a time to name the plugin behind each object); "
                "drop wrapper=True"
            )


# --- --plugin specs ------------------------------------------------------------


def _is_file_spec(spec: str) -> bool:
    return spec.endswith(".py") or os.sep in spec or "/" in spec


def plugin_spec_name(spec: str) -> str:
    """The name a ``--plugin`` value is registered under: the module, or a file's stem."""
    return Path(spec).stem if _is_file_spec(spec) else spec


def _import_failure(spec: str, exc: BaseException) -> UsageError:
    return UsageError(f"--plugin={spec}: failed to import: {_exception_line(exc)}")


def _exception_line(exc: BaseException) -> str:
    detail = one_line(exc)
    return f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__


def _import_must_fail_quietly(exc: BaseException) -> bool:
    """Whatever a plugin's import raises is its failure (a BaseException of
    its own, GeneratorExit, SystemExit too), except Ctrl-C and SIGTERM."""
    return not isinstance(exc, (KeyboardInterrupt, Terminated))


def _timed_import(load):
    """``(module, seconds)``: ``load()`` and the wall time it took."""
    start = time.perf_counter()
    module = load()
    return module, time.perf_counter() - start


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
        except BaseException as exc:
            sys.modules.pop(module_name, None)
            if not _import_must_fail_quietly(exc):
                raise
            raise _import_failure(spec, exc) from exc
        return module
    try:
        return importlib.import_module(spec)
    except ModuleNotFoundError as exc:
        if not (exc.name and spec.startswith(exc.name)):
            raise _import_failure(spec, exc) from exc
        # The current folder is on the plugin path (as pytest's rootdir is for -p):
        # `--plugin mycorp_sink` run next to mycorp_sink.py loads it.
        local = Path(f"{spec}.py")
        if spec.isidentifier() and local.is_file():
            return import_plugin_spec(f"./{local}")
        raise UsageError(f"--plugin={spec}: no module named {spec!r} (a plugin is ./{spec}.py "
                         "in the current folder, a path to a .py file, or a module on "
                         "PYTHONPATH; an installed plugin's entry point loads without "
                         "--plugin)") from exc
    except BaseException as exc:
        if not _import_must_fail_quietly(exc):
            raise
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
    return installed.entry_points(ENTRY_POINT_GROUP)


def _entry_point_failure(entry_point, details: dict, exc: BaseException) -> UsageError:
    """The one line of an installed plugin that does not import: what it is,
    where it comes from, and how to run without it."""
    where = f"entry point {entry_point.name} = {entry_point.value}"
    if details.get("distribution"):
        version = f" {details['version']}" if details.get("version") else ""
        where += f", installed by {details['distribution']}{version}"
    return UsageError(
        f"installed plugin {entry_point.name!r} ({where}) failed to import: "
        f"{_exception_line(exc)}; skip it with -p no:{entry_point.name}, or every installed "
        f"plugin with {DISABLE_AUTOLOAD_ENV}=1")


def _check_blocked(selection: PluginSelection) -> None:
    for name in selection.blocked:
        if MERGED_PLUGINS.get(name, name) in ESSENTIAL_PLUGINS:
            raise UsageError(f"-p no:{name}: {name!r} is an essential plugin and cannot be "
                             "blocked")
    for spec in selection.specs:
        if plugin_spec_name(spec) in selection.blocked:
            raise UsageError(f"-p no:{plugin_spec_name(spec)} blocks the plugin that "
                             f"--plugin={spec} loads; drop one of them")


def _object_name(plugin) -> str:
    name = getattr(plugin, "__name__", None) or type(plugin).__name__
    return str(name)


def build_plugin_manager(selection: PluginSelection | None = None,
                         autoload: bool = True) -> PluginManager:
    """Builds the manager: built-ins, entry points (unless ``autoload=False``),
    ``--plugin`` modules, objects."""
    selection = selection or PluginSelection()
    _check_blocked(selection)
    blocked = {MERGED_PLUGINS.get(name, name) for name in selection.blocked}
    pm = PluginManager()
    for name in blocked:
        pm.set_blocked(name)
    for name, module_name in BUILTIN_PLUGINS.items():
        if name not in blocked:
            module, seconds = _timed_import(functools.partial(importlib.import_module,
                                                              module_name))
            pm.register_plugin(module, name, "builtin", import_seconds=seconds)
    entry_points = _entry_points() if autoload else []
    for entry_point in entry_points:
        if entry_point.name in blocked:
            continue
        distribution = getattr(entry_point, "dist", None)
        details = {"distribution": getattr(distribution, "name", "") or "",
                   "version": getattr(distribution, "version", "") or ""}
        try:
            module, details["import_seconds"] = _timed_import(entry_point.load)
        except BaseException as exc:
            if not _import_must_fail_quietly(exc):
                raise
            raise _entry_point_failure(entry_point, details, exc) from exc
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
        module, seconds = _timed_import(functools.partial(import_plugin_spec, spec))
        if pm.is_registered(module):
            continue  # already loaded as an entry point
        where = {"path": str(Path(spec).resolve())} if _is_file_spec(spec) else {}
        pm.register_plugin(module, plugin_spec_name(spec), "--plugin", import_seconds=seconds,
                           **where)
    for plugin in selection.objects:
        if not pm.is_registered(plugin):
            name, number = _object_name(plugin), 1
            while name in pm.infos:  # two objects of one class
                number += 1
                name = f"{_object_name(plugin)}-{number}"
            pm.register_plugin(plugin, name, "python api")
    known = set(BUILTIN_PLUGINS) | set(MERGED_PLUGINS) | {ep.name for ep in entry_points} | {
        plugin_spec_name(spec) for spec in selection.specs}
    for name in selection.blocked:
        if name not in known:
            close = difflib.get_close_matches(name, sorted(known), n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            pm.warnings.append(f"-p no:{name}: no plugin named {name!r}{hint}")
    pm.check_pending(blocked)
    return pm


def loaded_plugin_names(pm) -> list[str]:
    """The names of the registered plugins, in registration order."""
    infos = getattr(pm, "infos", None)
    if infos is not None:
        return list(infos)
    return [name for name, plugin in pm.list_name_plugin() if name and plugin is not None]
