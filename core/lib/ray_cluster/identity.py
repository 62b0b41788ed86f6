"""What a node must share with the driver: ireebench, the IREE runtime, the plugins, the variables.

A point measured on a node is the same measurement as here only if the
node runs the same ireebench, IREE runtime and plugins, loaded the same way,
and reads the same settings from its environment. The driver's side of
each is here; the node says its own (:func:`.node.identity`) and is refused
when it differs. Nothing here imports Ray.
"""

from __future__ import annotations

import os

from ireebench._pluginmanager import DISABLE_AUTOLOAD_ENV
from ireebench.commands import GroupedOption, build_command, prescan_plugins
from ireebench.version import version_lines

# The lines of `ireebench --version` that must be the same on the driver and every
# node: ireebench's, the IREE runtime's, the third-party plugins' (the compiler may
# be missing on a node: modules arrive compiled; Python is Ray's to match).
COMPARED = ("ireebench ", "iree-base-runtime ", "plugins:", "  ")
# ireebench's variables a point's process on a node sees as this run does (besides
# the options' own): the plugins it loads, a traceback for an internal error.
FORWARDED_VARIABLES = (DISABLE_AUTOLOAD_ENV, "IREEBENCH_DEBUG")


def compared_lines(lines) -> list[str]:
    """The lines of ``ireebench --version`` a node must share with the driver."""
    return [line for line in lines if line.startswith(COMPARED)]


def driver_identity(config) -> list[str]:
    """This driver's ``ireebench --version`` lines that every node must share."""
    return compared_lines(version_lines(config.pm))


def plugin_selection(config) -> list[str]:
    """The command line's plugin flags (``--plugin``, ``-p``, ``-p no:``): a node loads
    the same plugins."""
    selection = prescan_plugins(list(config.run.command_line))
    return [*(f"--plugin={spec}" for spec in selection.specs),
            *(f"-pno:{name}" for name in selection.blocked)]


def forwarded_environment(config) -> dict:
    """The variables this run's options were read from (``BENCHMARK_MIN_TIME``,
    ``GTEST_SHARD_INDEX``: a node must make the same points and measure them alike),
    but those of the run's outputs (``BENCHMARK_OUT``, ``IREEBENCH_STORAGE``, its
    executor's: ``RAY_ADDRESS``), and ireebench's own (:data:`FORWARDED_VARIABLES`)."""
    names = set(FORWARDED_VARIABLES)
    for param in build_command(config.pm).params:
        if not isinstance(param, GroupedOption) or param.spec().run_output:
            continue
        envvar = param.envvar
        names.update([envvar] if isinstance(envvar, str) else list(envvar or ()))
    return {name: os.environ[name] for name in sorted(names) if name in os.environ}
