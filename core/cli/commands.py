"""Subcommands: the click group plugins add to (``ireebench_register_commands``).

``ireebench NAME ...`` runs the subcommand ``NAME`` when a plugin registered
one by that name; anything else is the benchmark run (``ireebench`` with the
native tool's flags). Every subcommand, the built-ins' too (``replay``,
``compare``, ``plugins``), is registered by the plugin that owns it, one
plugin at a time (as simonw/llm and datasette do), so :class:`CommandGroup`
knows each one's plugin: a name two plugins register is an error naming
both, and ``--help`` and ``ireebench plugins`` say whose each one is.

A plugin writes a subcommand with click as usual; its callback gets the
:class:`~ireebench.cli.invocation.Invocation` with ``@click.pass_obj``.
``--plugin`` and ``-p`` may appear anywhere on the command line (the plugins
are loaded from all of it) and are taken out of the subcommand's arguments. A
command that parses its own command line (as the built-ins do: their
options come from the loaded plugins) is an :class:`ArgvCommand`.
"""

from __future__ import annotations

import contextlib

import click

from ..errors import EXIT_FAILED, PluginError, UsageError, one_line
from ..hookcall import guarded, implementations
from ..pluginmanager import PluginSelection, build_plugin_manager
from ..results import RunResult
from .argv import without_plugin_flags
from .command import make_context
from .invocation import Invocation


class CommandGroup(click.Group):
    """The subcommands of ``ireebench``, each with the plugin that registered it."""

    def __init__(self) -> None:
        super().__init__("ireebench")
        self.owners: dict[str, str] = {}  # subcommand name -> plugin
        self.registering = "ireebench"

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        name = name or cmd.name
        if name in self.commands:
            raise UsageError(f"subcommand {name!r} is defined by two plugins: "
                             f"{self.owners[name]!r} and {self.registering!r}")
        super().add_command(cmd, name)
        self.owners[name] = self.registering

    def of_plugin(self, plugin_name: str) -> list[str]:
        """The subcommands ``plugin_name`` registered."""
        return sorted(name for name, owner in self.owners.items() if owner == plugin_name)


def build_command_group(pm) -> CommandGroup:
    """Asks every plugin, in registration order, for its subcommands."""
    group = CommandGroup()
    for plugin_name, call in implementations(pm, "ireebench_register_commands",
                                             registration_order=True):
        group.registering = plugin_name
        call(cli=group)
    group.registering = "ireebench"
    return group


class ArgvCommand(click.Command):
    """A subcommand that parses its own command line: ``main(argv, invocation)``.

    For commands whose options depend on the loaded plugins (``ireebench
    replay`` takes every plugin option of a run); ``main`` returns what a
    command callback may return (see :func:`run_subcommand`) and handles
    ``--help`` itself.
    """

    def __init__(self, name: str, main, help: str = "", short_help: str | None = None,
                 usage_exit_code: int = EXIT_FAILED):
        # The exit status of its usage errors, also of those found while the
        # plugins of its command line load (``ireebench compare``: 2).
        self.usage_exit_code = usage_exit_code
        super().__init__(name, help=help, short_help=short_help, add_help_option=False,
                         context_settings={"ignore_unknown_options": True,
                                           "allow_extra_args": True,
                                           "allow_interspersed_args": False})
        self.main_function = main

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.args = list(args)
        return []

    def invoke(self, ctx: click.Context):
        return self.main_function(list(ctx.args), ctx.obj)


def as_run_result(result) -> RunResult:
    """What a command returned, as a :class:`RunResult`: ``None`` (or anything
    else) exit 0, an int that exit code, a RunResult itself."""
    if isinstance(result, RunResult):
        return result
    if isinstance(result, int) and not isinstance(result, bool):
        return RunResult(result, [])
    return RunResult(0, [])


def _invoke(command: click.Command, name: str, args: list[str], invocation: Invocation):
    if not isinstance(command, ArgvCommand):  # it parses its own, --plugin included
        args = without_plugin_flags(args)
    ctx = make_context(command, f"ireebench {name}", args, invocation)
    if ctx is None:  # --help
        return None
    with ctx:
        try:
            return command.invoke(ctx)
        except click.exceptions.Exit as exc:  # ctx.exit(code)
            return exc.exit_code
        except click.exceptions.Abort:
            raise KeyboardInterrupt from None
        except click.ClickException as exc:  # ctx.fail(), click.BadParameter ...
            raise UsageError(one_line(exc.format_message())) from None


def run_subcommand(invocation: Invocation, name: str, args: list[str]) -> RunResult:
    """Runs the subcommand ``name``; a failure of its code names its plugin."""
    command = invocation.commands.commands[name]
    # What a plain command prints with click.echo or print() (its --help too)
    # is its output: to the invocation's streams, the Python API's if it gave
    # some. An ArgvCommand writes its report to invocation.stdout itself, and
    # print() in the plugins it runs stays off that report (execute).
    output = (contextlib.nullcontext() if isinstance(command, ArgvCommand)
              else contextlib.redirect_stdout(invocation.stdout))
    with output, contextlib.redirect_stderr(invocation.stderr):
        result = guarded(invocation.pm, f"subcommand {name!r}", _invoke, command, name, args,
                         invocation)
    return as_run_result(result)


def builtin_usage_exit_code(name: str) -> int:
    """The usage exit status of the built-in subcommand ``name`` (1 if none is).

    For an error found while the plugins load, before the subcommands are
    known: the built-ins are asked alone (they load without fail).
    """
    try:
        group = build_command_group(build_plugin_manager(PluginSelection(), autoload=False))
    except (UsageError, PluginError):
        return EXIT_FAILED
    command = group.commands.get(name)
    return getattr(command, "usage_exit_code", EXIT_FAILED)
