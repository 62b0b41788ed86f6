"""The kit for writing a subcommand as the built-in plugins write theirs (docs/plugins.md, "Adding a subcommand").

A simple subcommand needs nothing from here: ``@cli.command()`` in
``ireebench_register_commands`` and ``@click.pass_obj`` give it an
``ireebench.CommandConfig``. This module is for the rest, which the
built-ins use too:

* registering: :class:`ArgvCommand` (a command that parses its own command
  line, built from the loaded plugins' options; it gets the
  :class:`Invocation`), :class:`DeferredCommand` (a command imported only
  when it runs), :func:`mark_reads_reports` (takes the report readers'
  options, as ``@cli.command(reads_reports=True)``);
* a command line of the plugins' options: :class:`OptionParser` and
  :class:`GroupedOption` (options grouped and owned by a plugin in
  ``--help``), :func:`add_plugin_options` (every plugin's options of an
  ``addoption``-like hook), :func:`add_core_options` and the group names
  :data:`CORE`, :data:`CORE_GROUP`, :data:`IREEBENCH_GROUP`,
  :class:`GroupedCommand` (a command with grouped ``--help``),
  :func:`make_context` (parse it, errors naming the command),
  :func:`option_specs`, :func:`known_names` (a "known: ..." hint),
  :func:`command_stdout` (a command's standard output);
* deriving a run's configuration from a command line, as ``ireebench``
  does: :func:`load_plugins` (the plugin manager of an argv),
  :func:`parse_args` (argv to a ``Config``), :func:`build_command` (the
  benchmark run's click command), :func:`parse_points` and
  :func:`configure` (the points of a configuration),
  :func:`parse_runtime_flag` (check one ``--flag=value`` of the runtime),
  :func:`prescan_plugins` (the ``--plugin``/``-p`` of an argv; an
  ``ArgvCommand`` gets them: :func:`without_plugin_flags` takes them out),
  :func:`build_command_group` (every subcommand of a plugin manager), and
  :func:`execute` (run a whole command line in this process);
* reading a command's input files: :func:`read_small_file` and
  :func:`read_json_file` (regular files only, bounded in size, one error
  line naming the file).
"""

from __future__ import annotations

from .cli import execute
from .cli.argv import prescan_plugins, read_json_file, read_small_file, without_plugin_flags
from .cli.command import (
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
from .cli.commands import (
    ArgvCommand,
    CommandConfig,
    DeferredCommand,
    build_command_group,
    mark_reads_reports,
)
from .cli.invocation import Invocation
from .cli.options import (
    CORE,
    CORE_GROUP,
    IREEBENCH_GROUP,
    GroupedOption,
    OptionParser,
    add_core_options,
    command_stdout,
)

__all__ = [
    "CORE", "CORE_GROUP", "IREEBENCH_GROUP", "ArgvCommand", "CommandConfig", "DeferredCommand",
    "GroupedCommand", "GroupedOption", "Invocation", "OptionParser", "add_core_options",
    "add_plugin_options", "build_command", "build_command_group", "command_stdout", "configure",
    "execute", "known_names", "load_plugins", "make_context", "mark_reads_reports", "option_specs",
    "parse_args", "parse_points", "parse_runtime_flag", "prescan_plugins", "read_json_file",
    "read_small_file", "without_plugin_flags",
]
