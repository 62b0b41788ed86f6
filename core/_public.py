"""What ireebench promises to keep, and how a public name changes (docs/plugins.md, "Stability").

The public API is:

* the names in the ``__all__`` of the modules of :data:`PUBLIC_MODULES`;
* the hooks (:mod:`ireebench.hookspecs`, and those the built-in plugins
  declare): their names, arguments and what they return;
* the documented fields and methods of the objects those names and hooks
  hand out (``Run``, ``Counter``, ``Config``, a workload, a point, a
  repetition, the report context), wherever their class is defined;
* the command line (flags, subcommands, exit statuses) and the file
  formats.

Every other module is internal, even when a page of docs/ names it to say
how something works: it may change in any release. Built-in plugins
(``ireebench.plugins.*``) are internal code too; what they add to the
public surface is their flags, subcommands and declared hooks (and the
``rank`` plugin's Python API, listed below: a tuner imports it).

A public name does not change or go away in a minor version without a
deprecation first: for at least one minor version the old name keeps
working and warns with :class:`IreebenchDeprecationWarning`
(:func:`deprecated_names` for a module's names; a hook's spec gets
``warn_on_impl``; an old flag a warning line), as pytest does with its
``PytestDeprecationWarning``.

A public module may also give some of its names on first use only
(:func:`lazy_names`, PEP 562): ``ireebench``'s input helpers (their modules
import the IREE runtime and numpy only when they make values), and the comparison engine behind
``ireebench.comparison``, so that ``import ireebench`` and commands that
compare nothing load neither. Such a name is public like any other.
"""

from __future__ import annotations

import importlib
import sys
import warnings

# The public modules: `tests/plugin_api/test_public_api.py` checks that the
# examples and the docs' code import nothing else, and that every name in
# these modules' __all__ exists.
PUBLIC_MODULES = (
    "ireebench",  # the Python API, and the types and markers plugins use
    "ireebench.backend",  # backends: Backend, the capabilities, the helpers
    "ireebench.executor",  # executors: where a run's points are measured
    "ireebench.testing",  # the pytest plugin that tests a plugin
    "ireebench.hookspecs",  # the core's hooks and the hookimpl/hookspec markers
    "ireebench.comparison",  # the comparison engine: reports read, verdicts, reporters
    "ireebench.profiling",  # profiling sinks and the rows of a profiling pass
    "ireebench.reporting",  # the Reporter base class and the run's reported rows
    "ireebench.protocol",  # the run's protocol: the phases a backend calls, with their hooks
    "ireebench.lib.channel",  # the channel between a process and its forked worker
    # Libraries the built-in plugins share (core/lib/), one module a concern.
    "ireebench.lib.allocator", "ireebench.lib.comparison_format",
    "ireebench.lib.compile_cache", "ireebench.lib.early_stopping", "ireebench.lib.gbench_json", "ireebench.lib.outputs",
    "ireebench.lib.profiling_pass", "ireebench.lib.ray_cluster", "ireebench.lib.slo",
    "ireebench.lib.statistics",
    "ireebench.commands",  # the kit for subcommands: the built-ins' commands are built with it
    # The plugin API the built-in plugins stand on, one module a concern: every
    # other core module's name starts with "_" (pytest's _pytest, pyperf's _x.py).
    "ireebench.config", "ireebench.devices", "ireebench.dtypes", "ireebench.errors",
    "ireebench.hookcall", "ireebench.inputs", "ireebench.kinds", "ireebench.names",
    "ireebench.native", "ireebench.outfiles", "ireebench.points", "ireebench.results",
    "ireebench.signals", "ireebench.signature", "ireebench.stash", "ireebench.stats",
    "ireebench.streams", "ireebench.version", "ireebench.workload",
    # A built-in plugin's Python API: the ranking's typed results and the
    # drop-in for iree.runtime.benchmark_module that tuners import.
    "ireebench.plugins.rank",
)


class IreebenchDeprecationWarning(DeprecationWarning):
    """A public name, hook or flag that changes in a coming minor version.

    Shown by default in tests (pytest shows ``DeprecationWarning``); turn it
    into an error with ``-W error::ireebench.IreebenchDeprecationWarning``
    to find every use before upgrading.
    """


def deprecated_names(module: str, renamed: dict[str, tuple[str, str]]):
    """A module ``__getattr__`` that keeps renamed public names working, with a warning.

    ``renamed``: old name -> (the new name's full dotted path, the version
    that removes the old one). In the public module::

        __getattr__ = deprecated_names(__name__, {"old_helper": ("ireebench.new_helper",
                                                                 "0.3")})
    """

    def __getattr__(name: str):
        if name not in renamed:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        new, removed_in = renamed[name]
        warnings.warn(f"{module}.{name} is deprecated and will be removed in ireebench "
                      f"{removed_in}: use {new}", IreebenchDeprecationWarning, stacklevel=2)
        owner, _, attribute = new.rpartition(".")
        return getattr(importlib.import_module(owner), attribute)

    return __getattr__


def lazy_names(module: str, names: dict[str, str]):
    """``(__getattr__, __dir__)`` for a public module whose ``names`` are imported on
    first use (PEP 562), each from the module that defines it.

    ``names``: public name -> ``".module"`` (the name is that module's
    attribute of the same name) or ``".module:attribute"``, the module
    relative to ``module``'s package as in a relative import. In the public
    module::

        __getattr__, __dir__ = lazy_names(__name__, {"compare": ".judgement"})

    A name read once is kept in the module (found directly from then on).
    """
    package = sys.modules[module].__spec__.parent

    def __getattr__(name: str):
        if name not in names:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        owner, _, attribute = names[name].partition(":")
        value = getattr(importlib.import_module(owner, package), attribute or name)
        setattr(sys.modules[module], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[module]), *names})

    return __getattr__, __dir__
