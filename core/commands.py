"""The kit for writing a subcommand as the built-in plugins write theirs (docs/plugins.md, "Adding a subcommand").

A simple subcommand needs none of it: ``@cli.command()`` in
``ireebench_register_commands`` and ``@click.pass_obj`` give it an
``ireebench.CommandConfig``. The rest is here: :class:`ArgvCommand` (a
command that parses its own command line and gets the :class:`Invocation`,
``--plugin``/``-p`` included: :func:`without_plugin_flags`),
:class:`DeferredCommand` (imported when it runs), :func:`mark_reads_reports`;
options owned by a plugin in ``--help`` (:class:`OptionParser`,
:class:`GroupedOption`, :func:`add_plugin_options`, :class:`GroupedCommand`,
:func:`make_context`); a run's configuration derived from a command line
as ``ireebench`` derives it (:func:`load_plugins`, :func:`parse_args`,
:func:`configure`, :func:`parse_points`, :func:`parse_runtime_flag`,
:func:`execute` runs one); and bounded readers of a command's files
(:func:`read_small_file`, :func:`read_json_file`); :func:`scan_options`, the
options of a command line found as click reads them, before it is parsed.
"""

from __future__ import annotations

from ._argscan import Occurrence, scan_options
from ._cli import execute
from ._cli.argv import prescan_plugins, read_json_file, read_small_file, without_plugin_flags
from ._cli.command import (
    GroupedCommand,
    add_plugin_options,
    build_command,
    configure,
    known_names,
    load_plugins,
    make_context,
    option_specs,
    parse_args,
    parse_points,
    parse_runtime_flag,
)
from ._cli.commands import (
    ArgvCommand,
    CommandConfig,
    DeferredCommand,
    build_command_group,
    mark_reads_reports,
)
from ._cli.invocation import Invocation
from ._cli.options import (
    CORE,
    CORE_GROUP,
    IREEBENCH_GROUP,
    GroupedOption,
    OptionParser,
    add_core_options,
    command_stdout,
)

__all__ = [
    "CORE",
    "CORE_GROUP",
    "IREEBENCH_GROUP",
    "ArgvCommand",
    "CommandConfig",
    "DeferredCommand",
    "GroupedCommand",
    "GroupedOption",
    "Invocation",
    "Occurrence",
    "OptionParser",
    "add_core_options",
    "add_plugin_options",
    "build_command",
    "build_command_group",
    "command_stdout",
    "configure",
    "execute",
    "known_names",
    "load_plugins",
    "make_context",
    "mark_reads_reports",
    "option_specs",
    "parse_args",
    "parse_points",
    "parse_runtime_flag",
    "prescan_plugins",
    "read_json_file",
    "read_small_file",
    "scan_options",
    "without_plugin_flags",
]
