"""Calling plugin code, with failures attributed to the plugin that raised.

Every call ireebench makes into plugin code goes through one of these:

* :func:`call_hook`: a hook, through pluggy (wrappers included);
* :func:`collect_named`: the hooks that return named objects (backends,
  reporters, invocation kinds), called one plugin at a time so a name
  defined twice is an error naming both plugins;
  (:func:`named_objects` checks what one plugin returned);
* :func:`guarded`: plugin code outside the hook machinery (a reporter's
  method, a factory, a sink).

An exception from plugin code becomes a :class:`PluginError` naming the
plugin (found from the traceback: the innermost frame in a plugin's file)
and where it was called (any exception, a custom ``BaseException``
subclass too). :class:`UsageError` (a plugin's deliberate one-line
message), ``KeyboardInterrupt``, ``SystemExit`` and ireebench's
``Terminated`` pass through unchanged; so does a :class:`PluginError`
raised further in, so the innermost blame stands.
"""

from __future__ import annotations

import contextlib
import functools
import os

import pluggy

from ._pluginmanager import BUILTIN_PLUGINS, ESSENTIAL_PLUGINS, loaded_plugin_names, plugin_file
from .errors import OutputClosed, PluginError, Terminated, UsageError


def _plugin_paths(pm: pluggy.PluginManager) -> list[tuple[str, str]]:
    """``(path, plugin name)``: each plugin's file, and the directory of a plugin that
    is a package (its ``__init__.py``: every module of the package is its code)."""
    paths = []
    for name, plugin in pm.list_name_plugin():
        path = plugin_file(plugin)
        if not path:
            continue
        path = os.path.realpath(path)
        if os.path.basename(path) == "__init__.py":
            paths.append((os.path.dirname(path) + os.sep, name))
        else:
            paths.append((path, name))
    return paths


def plugin_of_files(pm: pluggy.PluginManager, filenames) -> str | None:
    """The plugin whose code the innermost of ``filenames`` (outermost first: a
    traceback's frames) that belongs to a plugin is, if any."""
    paths = _plugin_paths(pm)
    found = None
    for filename in filenames:
        real = os.path.realpath(filename)
        owner = next((name for path, name in paths
                      if real == path or (path.endswith(os.sep) and real.startswith(path))),
                     None)
        if owner is not None:
            found = owner
    return found


def plugin_of_exception(pm: pluggy.PluginManager, exc: BaseException) -> str | None:
    """Names the plugin whose code raised ``exc``: the innermost plugin frame."""
    files = []
    tb = exc.__traceback__
    while tb is not None:
        files.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    return plugin_of_files(pm, files)


def passes_through(exc: BaseException) -> bool:
    """A deliberate outcome, not a plugin's failure: a usage error, an error
    already attributed, an interrupt, SystemExit (``sys.exit()`` in a plugin
    ends the run with its status); any other BaseException is a failure,
    GeneratorExit too (it only escapes a call when plugin code raised it)."""
    return isinstance(exc, (UsageError, PluginError, KeyboardInterrupt, SystemExit,
                            Terminated, OutputClosed))


# --- where plugin code runs --------------------------------------------------

# Called with (where, plugin) when plugin code is entered, and with the enclosing
# call's (or (None, None)) when it returns: a forked worker tells its supervisor,
# so that a process that dies is blamed on the hook (and plugin) it was in.
_observer = None
_entered: list[tuple[str, str | None]] = []
_STANDARD_STREAMS = {1: "standard output", 2: "standard error"}


def observe_calls(callback) -> None:
    """Calls ``callback(where, plugin)`` as plugin code is entered and left
    (see above; None: nothing is called)."""
    global _observer
    _observer = callback
    _entered.clear()


class StandardStreamClosed(Exception):
    """Plugin code closed (or replaced) the process's standard output or error."""


def _stream_identities() -> dict[int, tuple | None]:
    found = {}
    for fd in _STANDARD_STREAMS:
        try:
            info = os.fstat(fd)
            found[fd] = (info.st_dev, info.st_ino)
        except OSError:
            found[fd] = None
    return found


def _reopen_closed(fd: int) -> None:
    """/dev/null on a closed standard descriptor, so that no file opened later takes
    it (the display would be written into it)."""
    try:
        os.fstat(fd)
        return
    except OSError:
        pass
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_RDWR)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)


def _suspect(pm: pluggy.PluginManager, where: str) -> str | None:
    """The one plugin other than the built-ins implementing the hook ``where``."""
    caller = getattr(pm.hook, where, None) if where.startswith("ireebench_") else None
    if caller is None:
        return None
    others = {impl.plugin_name for impl in caller.get_hookimpls()} - set(BUILTIN_PLUGINS)
    return others.pop() if len(others) == 1 else None


def _run_plugin_code(pm: pluggy.PluginManager, where: str, plugin: str | None, function, /,
                     *args, **kwargs):
    """Calls plugin code, telling the observer, and checks that it left the process's
    standard output and error where they were: a plugin that closes or replaces
    them is named (the reporters writing there next would be blamed instead)."""
    before = _stream_identities()
    observer = _observer
    if observer is not None:
        _entered.append((where, plugin))
        observer(where, plugin)
    returned = False
    try:
        result = function(*args, **kwargs)
        returned = True
        return result
    finally:
        if observer is not None and _entered:
            _entered.pop()
            observer(*(_entered[-1] if _entered else (None, None)))
        after = _stream_identities()
        changed = [fd for fd, identity in before.items()
                   if identity is not None and after[fd] != identity]
        for fd in changed:
            _reopen_closed(fd)
        if changed and returned:
            what = " and ".join(f"{_STANDARD_STREAMS[fd]} (fd {fd})" for fd in changed)
            raise PluginError(where, plugin or _suspect(pm, where), StandardStreamClosed(
                f"closed or replaced the process's {what}, where ireebench writes"))


def guarded(pm: pluggy.PluginManager, where: str, function, *args, **kwargs):
    """Calls plugin code outside the hook machinery (a reporter's method, a
    factory); an unexpected exception becomes a PluginError naming the plugin."""
    try:
        return _run_plugin_code(pm, where, None, function, *args, **kwargs)
    except BaseException as exc:
        if passes_through(exc):
            raise
        raise PluginError(where, plugin_of_exception(pm, exc), exc) from exc


def guarded_for(pm: pluggy.PluginManager, where: str, plugin_name: str | None, function,
                *args):
    """:func:`guarded` for code a known plugin provided (a factory it returned):
    blamed on the plugin of the innermost plugin frame, else on ``plugin_name``
    (a factory that is not callable has no frame of its own)."""
    try:
        return _run_plugin_code(pm, where, plugin_name, function, *args)
    except BaseException as exc:
        if passes_through(exc):
            raise
        raise PluginError(where, plugin_of_exception(pm, exc) or plugin_name, exc) from exc


def call_hook(pm: pluggy.PluginManager, hook_name: str, **kwargs):
    """Calls a hook; an unexpected exception becomes a PluginError naming the plugin."""
    try:
        return _run_plugin_code(pm, hook_name, None, getattr(pm.hook, hook_name), **kwargs)
    except BaseException as exc:
        if passes_through(exc):
            raise
        raise PluginError(hook_name, plugin_of_exception(pm, exc), exc) from exc


def implementations(pm: pluggy.PluginManager, hook_name: str, registration_order=False):
    """Yields ``(plugin_name, call)`` for each implementation of a hook, in pluggy's
    call order (last registered first), or in ``registration_order``.

    ``call(**kwargs)`` calls that one implementation; an exception becomes a
    PluginError naming its plugin. Used where ireebench must know which
    plugin did what (wrappers are refused on these hooks when a plugin is
    registered, see ``hookspecs.PER_PLUGIN_HOOKS``).
    """
    impls = getattr(pm.hook, hook_name).get_hookimpls()
    for impl in impls if registration_order else reversed(impls):
        yield impl.plugin_name, functools.partial(_call_one, hook_name, impl, pm)


def _call_one(hook_name: str, impl, plugin_manager, **kwargs):
    arguments = {name: kwargs[name] for name in impl.argnames}
    try:
        return _run_plugin_code(plugin_manager, hook_name, impl.plugin_name, impl.function,
                                **arguments)
    except BaseException as exc:
        if passes_through(exc):
            raise
        raise PluginError(hook_name, impl.plugin_name, exc) from exc


def collect_named(pm: pluggy.PluginManager, hook_name: str, what: str, owners=None,
                  **kwargs) -> dict:
    """Merges the named objects (a dict, or a list of objects with ``.name``) of a hook.

    A name provided by two plugins is an error naming both. ``owners``, a
    dict, receives name -> the plugin that provided it.
    """
    merged: dict = {}
    owners = {} if owners is None else owners
    for plugin_name, call in implementations(pm, hook_name):
        result = call(**kwargs)
        if result is None or (isinstance(result, (dict, list, tuple)) and not result):
            continue
        result = named_objects(hook_name, plugin_name, result)
        for key, value in result.items():
            if key in merged:
                raise UsageError(
                    f"{what} {key!r} is defined by two plugins: "
                    f"{owners[key]!r} and {plugin_name!r}"
                )
            merged[key] = value
            owners[key] = plugin_name
    return merged


def named_objects(hook_name: str, plugin_name: str, result) -> dict:
    """A named-object hook's result as a dict; anything else is the plugin's bug."""
    if isinstance(result, dict):
        bad = next((key for key in result if not isinstance(key, str)), None)
        if bad is None:
            return result
        problem = f"a dict whose key {described(bad)} is not a name"
    elif isinstance(result, (list, tuple)):
        bad = next((item for item in result if not isinstance(getattr(item, "name", None), str)),
                   None)
        if bad is None:
            return {item.name: item for item in result}
        problem = f"a list holding {described(bad)}, which has no .name"
    else:
        problem = described(result)
    raise PluginError(hook_name, plugin_name, TypeError(
        f"returned {problem}; expected a dict of name -> object, or a list of objects "
        "with a .name"))


def described(value) -> str:
    """``str 'console'``: a value's type and a short repr, for a line that blames."""
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


__all__ = [
    "ESSENTIAL_PLUGINS", "call_hook", "collect_named", "described", "guarded",
    "guarded_for", "implementations", "loaded_plugin_names", "named_objects",
    "passes_through"
]
