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

import functools
import os

import pluggy

from .errors import OutputClosed, PluginError, Terminated, UsageError
from .pluginmanager import plugin_file


def plugin_of_exception(pm: pluggy.PluginManager, exc: BaseException) -> str | None:
    """Names the plugin whose code raised ``exc``: the innermost plugin frame."""
    files = {}
    for name, plugin in pm.list_name_plugin():
        path = plugin_file(plugin)
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


def passes_through(exc: BaseException) -> bool:
    """A deliberate outcome, not a plugin's failure: a usage error, an error
    already attributed, an interrupt, SystemExit (``sys.exit()`` in a plugin
    ends the run with its status); any other BaseException is a failure,
    GeneratorExit too (it only escapes a call when plugin code raised it)."""
    return isinstance(exc, (UsageError, PluginError, KeyboardInterrupt, SystemExit,
                            Terminated, OutputClosed))


def guarded(pm: pluggy.PluginManager, where: str, function, *args, **kwargs):
    """Calls plugin code outside the hook machinery (a reporter's method, a
    factory); an unexpected exception becomes a PluginError naming the plugin."""
    try:
        return function(*args, **kwargs)
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
        return function(*args)
    except BaseException as exc:
        if passes_through(exc):
            raise
        raise PluginError(where, plugin_of_exception(pm, exc) or plugin_name, exc) from exc


def call_hook(pm: pluggy.PluginManager, hook_name: str, **kwargs):
    """Calls a hook; an unexpected exception becomes a PluginError naming the plugin."""
    try:
        return getattr(pm.hook, hook_name)(**kwargs)
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
        yield impl.plugin_name, functools.partial(_call_one, hook_name, impl)


def _call_one(hook_name: str, impl, **kwargs):
    arguments = {name: kwargs[name] for name in impl.argnames}
    try:
        return impl.function(**arguments)
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
