"""The plugin manager: built-ins, entry points and ``--plugin`` modules.

Built-in plugins are registered by name through :func:`load_plugin`, the
same path a third-party plugin takes, so a built-in can be blocked with
``-p no:NAME`` exactly like any other plugin.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import os
import sys
from pathlib import Path

import pluggy

from . import hookspecs
from .errors import UsageError, one_line

ENTRY_POINT_GROUP = "ireebench"
DISABLE_AUTOLOAD_ENV = "IREEBENCH_DISABLE_PLUGIN_AUTOLOAD"

# Registration name -> importable module. Order matters only for display.
BUILTIN_PLUGINS = {
    "discovery": "ireebench.plugins.discovery",
    "kinds": "ireebench.plugins.kinds",
    "runtime_backend": "ireebench.plugins.runtime_backend",
    "native_backend": "ireebench.plugins.native_backend",
    "console": "ireebench.plugins.console",
    "csv": "ireebench.plugins.csv_reporter",
    "json": "ireebench.plugins.json_reporter",
    "output_processing": "ireebench.plugins.output_processing",
    "provenance": "ireebench.plugins.provenance",
    "profiling_pass": "ireebench.plugins.profiling_pass",
    "dispatch_statistics": "ireebench.plugins.dispatch_statistics",
    "device_profiling": "ireebench.plugins.device_profiling",
    "replay": "ireebench.plugins.replay",
}


def create_plugin_manager() -> pluggy.PluginManager:
    pm = pluggy.PluginManager("ireebench")
    pm.add_hookspecs(hookspecs)
    return pm


def _import_plugin(spec: str):
    """Imports a plugin given as a module name or a path to a .py file."""
    if spec.endswith(".py") or os.sep in spec or "/" in spec:
        path = Path(spec)
        if not path.is_file():
            raise UsageError(f"--plugin={spec}: file not found")
        name = f"ireebench_plugin_{path.stem}"
        module_spec = importlib.util.spec_from_file_location(name, path)
        if module_spec is None or module_spec.loader is None:
            raise UsageError(f"--plugin={spec}: not a Python file")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[name] = module
        try:
            module_spec.loader.exec_module(module)
        except Exception as exc:
            sys.modules.pop(name, None)
            raise UsageError(
                f"--plugin={spec}: failed to import: {type(exc).__name__}: {exc}"
            ) from exc
        return path.stem, module
    try:
        return spec, importlib.import_module(spec)
    except ModuleNotFoundError as exc:
        if exc.name and spec.startswith(exc.name):
            raise UsageError(f"--plugin={spec}: no module named {spec!r}") from exc
        raise UsageError(
            f"--plugin={spec}: failed to import: {type(exc).__name__}: {exc}"
        ) from exc
    except Exception as exc:
        raise UsageError(
            f"--plugin={spec}: failed to import: {type(exc).__name__}: {exc}"
        ) from exc


def load_plugin(pm: pluggy.PluginManager, name: str, module, blocked: set[str]) -> None:
    """Registers ``module`` under ``name`` unless it is blocked or loaded."""
    if name in blocked or pm.is_blocked(name):
        return
    if pm.get_plugin(name) is not None or pm.is_registered(module):
        return
    try:
        pm.register(module, name=name)
    except pluggy.PluginValidationError as exc:
        raise UsageError(f"plugin {name!r} is invalid: {exc}") from exc


def build_plugin_manager(
    plugin_specs: list[str] | tuple[str, ...] = (),
    blocked: list[str] | tuple[str, ...] = (),
) -> pluggy.PluginManager:
    """Builds the manager: built-ins, then entry points, then ``--plugin``.

    :param plugin_specs: values of ``--plugin`` (module names or .py paths).
    :param blocked: names given with ``-p no:NAME``.
    """
    pm = create_plugin_manager()
    blocked_set = set(blocked)
    for name in blocked_set:
        pm.set_blocked(name)
    for name, module_name in BUILTIN_PLUGINS.items():
        if name in blocked_set:
            continue
        load_plugin(pm, name, importlib.import_module(module_name), blocked_set)
    if not os.environ.get(DISABLE_AUTOLOAD_ENV):
        for entry_point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            if entry_point.name in blocked_set:
                continue
            try:
                module = entry_point.load()
            except Exception as exc:
                raise UsageError(
                    f"plugin {entry_point.name!r} (entry point {entry_point.value}) "
                    f"failed to import: {type(exc).__name__}: {exc}"
                ) from exc
            load_plugin(pm, entry_point.name, module, blocked_set)
    for spec in plugin_specs:
        name, module = _import_plugin(spec)
        load_plugin(pm, name, module, blocked_set)
    return pm


def collect_named(pm: pluggy.PluginManager, hook_name: str, what: str) -> dict:
    """Merges the dicts returned by an all-results hook.

    A name provided by two plugins is an error naming both.
    """
    merged: dict = {}
    owners: dict[str, str] = {}
    hook = getattr(pm.hook, hook_name)
    for impl in reversed(hook.get_hookimpls()):
        if impl.wrapper or impl.hookwrapper:
            continue  # wrappers only observe; the providers are the plain impls
        try:
            result = impl.function()
        except UsageError:
            raise
        except Exception as exc:
            raise PluginError(hook_name, impl.plugin_name, exc) from exc
        if not result:
            continue
        if not isinstance(result, dict):
            result = {item.name: item for item in result}
        for key, value in result.items():
            if key in merged:
                raise UsageError(
                    f"{what} {key!r} is defined by two plugins: "
                    f"{owners[key]!r} and {impl.plugin_name!r}"
                )
            merged[key] = value
            owners[key] = impl.plugin_name
    return merged


def _plugin_of_exception(pm: pluggy.PluginManager, exc: BaseException) -> str | None:
    """Names the plugin whose code raised ``exc``: the innermost plugin frame."""
    files = {}
    for name, plugin in pm.list_name_plugin():
        path = getattr(plugin, "__file__", None)
        if path:
            files[os.path.realpath(path)] = name
    found = None
    tb = exc.__traceback__
    while tb is not None:
        owner = files.get(os.path.realpath(tb.tb_frame.f_code.co_filename))
        if owner is not None:
            found = owner
        tb = tb.tb_next
    return found


def guarded(pm: pluggy.PluginManager, where: str, function, *args, **kwargs):
    """Calls plugin code outside the hook machinery (a reporter's method, a
    factory); an unexpected exception becomes a PluginError naming the plugin."""
    try:
        return function(*args, **kwargs)
    except UsageError:
        raise
    except Exception as exc:
        raise PluginError(where, _plugin_of_exception(pm, exc), exc) from exc


def call_hook(pm: pluggy.PluginManager, hook_name: str, **kwargs):
    """Calls a hook; an unexpected exception becomes a UsageError naming the plugin.

    :class:`UsageError`, :class:`KeyboardInterrupt` and :class:`SystemExit`
    pass through unchanged.
    """
    try:
        return getattr(pm.hook, hook_name)(**kwargs)
    except UsageError:
        raise
    except Exception as exc:
        raise PluginError(hook_name, _plugin_of_exception(pm, exc), exc) from exc


class PluginError(UsageError):
    """A plugin raised in a hook. Reported with the plugin's name."""

    def __init__(self, hook_name: str, plugin_name: str | None, exc: BaseException):
        who = f"plugin {plugin_name!r}" if plugin_name else "a plugin"
        detail = one_line(exc)
        super().__init__(f"{who} failed in {hook_name}: {type(exc).__name__}: {detail}")
        self.plugin_name = plugin_name
        self.original = exc
