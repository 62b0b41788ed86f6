"""Subcommands: the click group plugins add to (``ireebench_register_commands``).

``ireebench NAME ...`` runs the subcommand ``NAME`` when a plugin registered
one by that name; anything else is the benchmark run (``ireebench`` with the
native tool's flags). Every subcommand, the built-ins' too (``replay``,
``compare``, ``plugins``), is registered by the plugin that owns it, one
plugin at a time (as simonw/llm and datasette do), so :class:`CommandGroup`
knows each one's plugin: a name two plugins register is an error naming
both, and ``--help`` and ``ireebench plugins`` say whose each one is.

A plugin writes a subcommand with click as usual; its callback gets the
command's :class:`CommandConfig` with ``@click.pass_obj``: a
:class:`~ireebench.config.Config` of its own (``getoption`` reads the
subcommand's parsed options, ``stash``, cleanups, a scratch directory,
released when the command ends) that reads saved reports as every command
does (:meth:`CommandConfig.load_reports`: files, and a results store's
``stored:...`` references through ``ireebench_load_reports``). A command
registered with ``reads_reports=True`` also takes the options those
readers add (``ireebench_load_reports_addoption``: the store's
``--benchmark_storage``, ``--where``, ``--window``, ``--any_machine``).
``--plugin`` and ``-p`` may appear anywhere on the command line, before the
subcommand's name too (the plugins are loaded from all of it), and are
taken out of the subcommand's arguments. :class:`ArgvCommand` (a command
that parses its own command line, as the built-ins do) and
:class:`DeferredCommand` (imported only when it runs, so that ``--help``, a
benchmark run and the other subcommands never import a costly module) are
public through :mod:`ireebench.commands`.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import re

import click

from .. import comparison
from .._pluginmanager import PluginSelection, build_plugin_manager
from ..config import Config
from ..errors import EXIT_FAILED, PluginError, UsageError, one_line
from ..hookcall import guarded, guarded_for, implementations
from ..results import RunResult
from .argv import without_plugin_flags
from .command import make_context, plugin_inifile
from .invocation import Invocation
from .options import CORE, OptionParser

# What a subcommand's name may be (add_command).
PLAIN_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
# The attribute that marks a click command as a reader of saved reports.
READS_REPORTS = "reads_reports"
# Where the values of the readers' options are kept (ctx.meta, shared by the
# contexts of one command line): not the callback's arguments.
READING_VALUES = "ireebench.reading_options"


class CommandGroup(click.Group):
    """The subcommands of ``ireebench``, each with the plugin that registered it."""

    def __init__(self) -> None:
        super().__init__("ireebench")
        self.owners: dict[str, str] = {}  # subcommand name -> plugin
        self.registering = "ireebench"

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        name = name if name is not None else cmd.name
        # A name starting with '-' (or with a space, '=' ...) would take over
        # ``ireebench --help`` or the flags of an ordinary run.
        if not isinstance(name, str) or not PLAIN_WORD.fullmatch(name):
            raise ValueError(f"subcommand name {name!r} is not a plain word (letters, digits, "
                             "'-' and '_', starting with a letter or digit)")
        if name in self.commands:
            raise UsageError(f"subcommand {name!r} is defined by two plugins: "
                             f"{self.owners[name]!r} and {self.registering!r}")
        super().add_command(cmd, name)
        self.owners[name] = self.registering

    def of_plugin(self, plugin_name: str) -> list[str]:
        """The subcommands ``plugin_name`` registered."""
        return sorted(name for name, owner in self.owners.items() if owner == plugin_name)

    def command(self, *args, reads_reports: bool = False, **kwargs):
        """click's ``@cli.command()``; ``reads_reports=True``: the command reads saved
        reports (:meth:`CommandConfig.load_reports`) and takes the options of
        their readers (``ireebench_load_reports_addoption``)."""
        decorator = super().command(*args, **kwargs)
        if not reads_reports:
            return decorator

        def mark(function):
            return mark_reads_reports(decorator(function))

        return mark


def mark_reads_reports(command: click.Command) -> click.Command:
    """Marks a click command as a reader of saved reports, as
    ``cli.command(reads_reports=True)`` does: for a command defined at a
    module's level and registered as a :class:`DeferredCommand` (each run gets
    its own copy with the readers' options)."""
    setattr(command, READS_REPORTS, True)
    return command


def build_command_group(pm) -> CommandGroup:
    """Asks every plugin, in registration order, for its subcommands; a command
    marked ``reads_reports`` then gets the options of the report readers."""
    group = CommandGroup()
    for plugin_name, call in implementations(pm, "ireebench_register_commands",
                                             registration_order=True):
        group.registering = plugin_name
        call(cli=group)
    group.registering = "ireebench"
    readers = [(name, command) for name, command in _all_commands(group)
               if getattr(command, READS_REPORTS, False)]
    if readers:
        options = reading_options(pm)
        for name, command in readers:
            _add_reading_options(name, command, options)
    return group


def _all_commands(group: click.Group, prefix: str = ""):
    """``(name, command)`` of every command under ``group``, nested groups' too."""
    for name, command in group.commands.items():
        yield prefix + name, command
        if isinstance(command, click.Group):
            yield from _all_commands(command, f"{prefix}{name} ")


def reading_options(pm) -> list:
    """The options plugins add for reading saved reports
    (``ireebench_load_reports_addoption``), each recording its plugin.

    Their values are kept for :meth:`CommandConfig.getoption` (the readers'
    ``config.getoption``), not passed to the command's callback, which did
    not declare them.
    """
    parser = OptionParser()
    for plugin_name, call in implementations(pm, "ireebench_load_reports_addoption",
                                             registration_order=True):
        parser.plugin = plugin_name
        try:
            call(parser=parser)
        finally:
            parser.plugin = CORE
    for option in parser.options:
        option.expose_value = False
        option.callback = _keep_reading_value
    return parser.options


def _keep_reading_value(ctx: click.Context, param: click.Parameter, value):
    ctx.meta.setdefault(READING_VALUES, {})[param.name] = value
    return value


def _add_reading_options(name: str, command: click.Command, options: list) -> None:
    taken = {flag: param for param in command.params for flag in (*param.opts, param.name)}
    for option in options:
        clash = next((flag for flag in (*option.opts, option.name) if flag in taken), None)
        if clash is not None:
            shown = clash if clash.startswith("-") else f"--{clash}"
            raise UsageError(f"option {shown} of plugin {option.plugin!r} (for reading "
                             f"reports) is already an option of the subcommand {name!r}")
        command.params.append(option)


class CommandConfig(Config):
    """What a plugin's subcommand receives (``@click.pass_obj``): its configuration.

    A :class:`~ireebench.config.Config` like a run's: ``getoption(name)``
    (the options of the subcommand being run, a nested one's first),
    ``stdout``/``stderr`` (write there: the Python API's streams are
    honoured), ``pm``, ``stash``, ``add_cleanup``, ``scratch_dir()``, all
    released when the command ends; plus what the command line loaded
    (``plugins``, ``selection``, ``commands``, as an
    :class:`~ireebench.cli.invocation.Invocation` has them) and the
    readers of saved reports (:meth:`load_reports`).
    """

    def __init__(self, invocation: Invocation, name: str, argv: list[str]):
        super().__init__(invocation.pm, {}, [], list(argv), invocation.stdout,
                         invocation.stderr)
        self.command_name = name
        self.command_line = [name, *argv]
        self.invocation = invocation
        self.plugins = invocation.plugins
        self.selection = invocation.selection
        self.commands = invocation.commands

    def getini(self, name: str):
        """A setting of the configuration file, as a run's (read when first asked)."""
        if self.inifile is None:
            self.inifile = plugin_inifile(self.pm)
        return super().getini(name)

    def getoption(self, name: str, default=None):
        """The parsed value of the subcommand's option ``name`` (a nested command's
        first, then its group's), else ``default``."""
        ctx = click.get_current_context(silent=True)
        found = ctx.meta.get(READING_VALUES, {}) if ctx is not None else {}
        while ctx is not None:
            if name in ctx.params:
                found = ctx.params
                break
            ctx = ctx.parent
        if name in found:
            return default if found[name] is None else found[name]
        return super().getoption(name, default)

    def load_reports(self, reference: str, like: dict | None = None) -> list[tuple[str, dict]]:
        """The ``(label, report)`` pairs ``reference`` names: a Google Benchmark JSON
        file (ireebench's or the native tool's), or what a plugin resolves
        through ``ireebench_load_reports`` (a results store's ``stored:latest``,
        ``stored:RUN_ID``, ``stored:history``; the store of
        ``--benchmark_storage`` with ``reads_reports=True``, else of
        ``IREEBENCH_STORAGE``). ``like``: a report the result will be compared
        with, so a store picks runs of the same machine. A bad reference is one
        :class:`~ireebench.UsageError` naming this command.
        """
        return comparison.load_reports(self, reference, like, command=self.command_name)


class ArgvCommand(click.Command):
    """A subcommand that parses its own command line: ``main(argv, invocation)``.

    For commands whose options depend on the loaded plugins (``ireebench
    replay`` takes every plugin option of a run); ``main`` returns what a
    command callback may return (see :func:`as_run_result`: a benchmark
    run's :class:`~ireebench.config.Config` is run by the core, as
    ``ireebench`` runs its own) and handles ``--help`` itself.
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


class DeferredCommand(click.Command):
    """A subcommand whose code is imported when it runs (its ``--help`` included).

    ``target`` names the click command (an :class:`ArgvCommand`, a group, a
    command with ``reads_reports``...) as entry points name objects:
    ``"package.module:attribute"``. Until it runs, ``ireebench --help`` lists
    it with ``short_help`` and ``ireebench plugins`` by its name; the other
    commands never import its module::

        @hookimpl
        def ireebench_register_commands(cli):
            cli.add_command(DeferredCommand("history", "mypkg.history:command",
                                            short_help="Past runs, per benchmark."))

    ``usage_exit_code``: as :class:`ArgvCommand`'s, for a usage error found
    while the plugins of its command line load.
    """

    def __init__(self, name: str, target: str, short_help: str,
                 usage_exit_code: int = EXIT_FAILED):
        super().__init__(name, short_help=short_help, add_help_option=False)
        module, _, attribute = target.partition(":")
        if not module or not attribute:
            raise ValueError(f"subcommand {name!r}: {target!r} is not 'module:attribute'")
        self.target = target
        self.usage_exit_code = usage_exit_code

    def load(self) -> click.Command:
        """The command itself (its module imported now)."""
        module, _, attribute = self.target.partition(":")
        command = getattr(importlib.import_module(module), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{self.target} is not a click command")
        return command


def _loaded(invocation: Invocation, name: str, command: click.Command) -> click.Command:
    """``command``, or the command a :class:`DeferredCommand` names, imported now
    (with the options of the report readers if it reads reports)."""
    if not isinstance(command, DeferredCommand):
        return command
    loaded = command.load()
    if getattr(loaded, READS_REPORTS, False):  # its own copy: the module's stays as it is
        loaded = copy.copy(loaded)
        loaded.params = list(loaded.params)
        _add_reading_options(name, loaded, reading_options(invocation.pm))
    return loaded


def run_benchmark(config: Config) -> RunResult:
    """Runs the parsed benchmark run ``config`` (:func:`ireebench._runner.run_config`):
    the one place where the CLI, and a subcommand that returns a run's
    configuration (``ireebench replay``, ``ireebench run SUITE``), start a run.

    The run's machinery (the worker, the report hub, the modules' copies:
    about 13 ms of imports, a sixth of ``--help``) is imported here, when a
    run starts: ``--help``, the subcommands that measure nothing and the
    loading of the plugins never import it.
    """
    from .. import _runner as runner  # the run: see LAZY_IMPORTS in tests/core/test_imports.py

    return runner.run_config(config)


def as_run_result(result) -> RunResult:
    """What a command returned, as a :class:`RunResult`: ``None`` (or anything
    else) exit 0, an int that exit code, a RunResult itself, a :class:`Config`
    of a benchmark run (``ireebench replay``, ``ireebench run SUITE``): that
    run, run now (:func:`run_benchmark`)."""
    if isinstance(result, RunResult):
        return result
    if isinstance(result, Config) and not isinstance(result, CommandConfig):
        return run_benchmark(result)
    if isinstance(result, int) and not isinstance(result, bool):
        return RunResult(result, [])
    return RunResult(0, [])


def _invoke(command: click.Command, name: str, args: list[str], invocation: Invocation):
    if isinstance(command, ArgvCommand):  # it parses its own, --plugin included
        return _invoke_in(command, name, args, invocation)
    config = CommandConfig(invocation, name, without_plugin_flags(args))
    try:
        return _invoke_in(command, name, config.argv, config)
    finally:
        config.release()


def _invoke_in(command: click.Command, name: str, args: list[str], obj):
    ctx = make_context(command, f"ireebench {name}", args, obj)
    if ctx is None:  # --help
        return None
    if isinstance(obj, CommandConfig):  # what getoption answers once the command is done
        obj.options = {**ctx.meta.get(READING_VALUES, {}), **ctx.params}
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
    # print() in the plugins it runs stays off that report (execute). A
    # deferred command is one of the two once loaded: it is loaded first,
    # as plugin code (a failure to import names its plugin).
    if isinstance(command, DeferredCommand):
        command = guarded_for(invocation.pm, f"subcommand {name!r}",
                              invocation.commands.owners.get(name), _loaded, invocation, name,
                              command)
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
