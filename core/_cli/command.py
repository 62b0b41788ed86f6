"""The main command: built from the plugins' options, parsed into a :class:`Config`.

Flags ireebench does not own (the runtime's ``--task_topology_*``, driver
flags, ``--device_profiling_*``...) are runtime flags: they are checked with
``iree.runtime.flags.parse_flags`` when the command line is parsed
(:func:`parse_runtime_flag`, which imports the runtime only then) and
handed to the native passes. A flag no one knows, and an argument that is
not a flag, are passed over with one warning line each (naming a close
flag or subcommand), as the native tool passes over both (its flag parser
leaves unknown flags alone); ``--strict_flags`` (``IREEBENCH_STRICT_FLAGS=1``)
refuses them instead.

Every user error is one ``UsageError``; click's own parse errors become one
too (:func:`make_context`).
"""

from __future__ import annotations

import contextlib
import difflib
import importlib

import click

from .. import native
from .._inifile import IniFile
from .._installed import entry_points
from .._pluginmanager import (
    BUILTIN_PLUGINS,
    ENTRY_POINT_GROUP,
    MERGED_PLUGINS,
    PluginSelection,
    build_plugin_manager,
)
from .._processes import check_process_outputs
from ..backend import check_capabilities, check_runtime_flags_honoured
from ..config import Config, OptionSpec
from ..errors import INVALID_ARGUMENT, PluginError, UsageError, one_line
from ..executor import select_executor
from ..hookcall import call_hook, collect_named, implementations
from ..native import BENCHMARK_TOOL
from ..outfiles import run_files
from ..points import (
    MAX_POINTS,
    POINTS,
    Point,
    PointSpec,
    check_points,
    point_process_options,
    runtime_flags_vary,
)
from .argv import expand_flagfiles, prescan_plugins
from .invocation import Invocation
from .options import (
    CORE,
    IREEBENCH_GROUP,
    GroupedOption,
    OptionParser,
    add_core_options,
    command_stdout,
    validate_core_options,
)

HELP = ("Benchmark the exported functions of an IREE module (.vmfb), flag-compatible "
        "with iree-benchmark-module.\n\n"
        "Plugins add subcommands (listed below); see ireebench SUBCOMMAND --help.")


class GroupedCommand(click.Command):
    """Help grouped by section; options of plugins say which plugin adds them.

    The reporters and backends of the loaded plugins are listed in the help
    of ``--reporter`` and ``--backend`` (asked for only when help is shown).
    """

    show_runtime_flags = True  # the "Runtime flags" section of the help

    def __init__(self, *args, pm=None, commands=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.pm = pm
        self.commands = commands  # the subcommands, listed in the help

    def get_help_option(self, ctx):
        option = super().get_help_option(ctx)
        if option is not None:
            def show_help(ctx, param, value):
                if value and not ctx.resilient_parsing:
                    command_stdout(ctx).write(ctx.get_help() + "\n")
                    ctx.exit()

            option.callback = show_help
        return option

    def _list_plugin_objects(self) -> None:
        if self.pm is None:
            return
        reporters = known_names(self.pm, "ireebench_reporters", "reporter")
        backends = known_names(self.pm, "ireebench_backends", "backend")
        executors = known_names(self.pm, "ireebench_executors", "executor")
        for option in self.params:
            if option.name in ("reporter", "benchmark_format", "benchmark_out_format") \
                    and reporters:
                option.metavar = reporters.replace(", ", "|")
            if option.name == "reporter" and reporters:
                option.help = (f"Display reporter, one of: {reporters}; overrides "
                               "--benchmark_format.")
            if option.name == "backend" and backends:
                option.help = f"Measurement backend, one of: {backends} (default runtime)."
            if option.name == "executor" and executors:
                option.help = (f"Where the points of the run are measured, one of: {executors} "
                               "(default local: this machine; ray: each point a task of a Ray "
                               "cluster on a node that holds its device, see docs/fleet.md).")

    def format_options(self, ctx, formatter):
        self._list_plugin_objects()
        sections: dict[str, list] = {}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            owner = getattr(param, "plugin", CORE)
            if owner != CORE:
                record = (record[0], f"{record[1]} [plugin: {owner}]".strip())
            sections.setdefault(getattr(param, "group", IREEBENCH_GROUP), []).append(record)
        for title, records in sections.items():
            with formatter.section(title):
                formatter.write_dl(records)
        if self.commands is not None and self.commands.commands:
            with formatter.section("Subcommands"):
                formatter.write_dl([
                    (name, (f"{command.get_short_help_str(60)} "
                            f"[plugin: {self.commands.owners[name]}]"))
                    for name, command in sorted(self.commands.commands.items())])
        if not self.show_runtime_flags:
            return
        with formatter.section("Runtime flags"):
            formatter.write_text(
                "Flags not listed here (--task_topology_*, driver flags such as "
                "--cuda_use_streams ...) are passed to the IREE runtime as the native tool "
                "would parse them, and to the native passes (--device_profiling_* and "
                "--print_device_statistics run one; see docs/profiling.md)."
            )


def add_plugin_options(pm, parser: OptionParser, hook_name: str = "ireebench_addoption") -> None:
    """Calls each plugin's ``ireebench_addoption`` (or the subcommand's hook
    ``hook_name``, e.g. ``ireebench_compare_addoption``) in registration order
    (built-ins first, so a later plugin is the one redefining), recording it
    as the owner."""
    for name, call in implementations(pm, hook_name, registration_order=True):
        parser.plugin = name
        try:
            call(parser=parser)
        finally:
            parser.plugin = CORE


def plugin_inifile(pm) -> IniFile:
    """The configuration file, with the settings the plugins declare (``parser.addini``)."""
    parser = OptionParser()
    add_plugin_options(pm, parser)
    return IniFile(parser.inis)


def known_names(pm, hook_name: str, what: str) -> str:
    """The sorted names a named-object hook provides, comma separated (for --help)."""
    try:
        names = sorted(collect_named(pm, hook_name, what, config=None))
    except (UsageError, PluginError):
        return ""  # a provider that needs a run: the help keeps its default text
    return ", ".join(names)


def build_command(pm, name: str = "ireebench", help: str = HELP,
                  commands=None) -> GroupedCommand:
    """The click command: the core's options, then each plugin's (``commands``: the
    subcommands its help lists)."""
    parser = OptionParser()
    add_core_options(parser)
    add_plugin_options(pm, parser)
    inifile = IniFile(parser.inis)
    specs = {option.name: option.spec() for option in parser.options}
    command = GroupedCommand(
        name,
        params=parser.options,
        help=help,
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True,
                          "help_option_names": ["--help", "-h"],
                          # the file's flag defaults: the command line wins (click's rule)
                          "default_map": inifile.flag_defaults(specs)},
        add_help_option=True,
        pm=pm,
        commands=commands,
    )
    command.inifile = inifile
    return command


def make_context(command: click.Command, prog: str, argv: list[str], invocation: Invocation):
    """Parses ``argv`` with click: the context, or None after --help; click's
    errors become one-line usage errors."""
    try:
        return command.make_context(prog, list(argv), obj=invocation)
    except click.exceptions.Exit:
        return None
    except click.ClickException as exc:
        # A value the native tool's own flag parser would refuse too carries its status.
        param = getattr(exc, "param", None)
        native = isinstance(param, GroupedOption) and param.spec().native
        if (param is not None and param.name in command.context_settings.get("default_map", {})
                and not any(arg.split("=")[0] in param.opts for arg in argv)):
            exc.message += f" (its default is set in {command.inifile.path})"
        raise UsageError(one_line(exc.format_message()),
                         status=INVALID_ARGUMENT if native else None) from None


def _options_of(module) -> list:
    addoption = getattr(module, "ireebench_addoption", None)
    if addoption is None:
        return []
    parser = OptionParser()
    addoption(parser)
    return parser.options


def blocked_plugin_of_flag(flag_name: str, blocked) -> str | None:
    """The plugin blocked with ``-p no:`` that owns ``--flag_name``, if any.

    So that using a blocked plugin's flag says why it is unknown. Asked only
    for a flag nobody knows: a blocked installed plugin is then imported to
    read its options (never registered; its import failing is ignored).
    """
    for name in blocked:
        module_name = BUILTIN_PLUGINS.get(MERGED_PLUGINS.get(name, name))
        try:
            if module_name is not None:
                module = importlib.import_module(module_name)
            else:
                entry_point = next((ep for ep in entry_points(ENTRY_POINT_GROUP)
                                    if ep.name == name), None)
                if entry_point is None:
                    continue
                module = entry_point.load()
            options = _options_of(module)
        except BaseException:  # noqa: BLE001, S112 - only a better message was at stake
            continue
        for option in options:
            if any(opt.lstrip("-") == flag_name for opt in option.opts):
                return name
    return None


# Flags of the native tools' own loaders, unknown to the Python bindings'
# flag registry: accepted, and handed to every native pass as they are. In
# process --module_mode and --parameter_mode are honoured (ireebench._modules,
# ireebench._session); the others change nothing: one device leads, the VM is
# not traced.
NATIVE_LOADER_FLAGS = frozenset({"module_mode", "parameter_mode", "device_lead_allocator",
                                 "trace_execution"})


# Flags with which the native tools print something about the machine and
# exit (through the runtime's parser in this process they can abort it):
# answered by the native tool itself, then ireebench exits like --help.
INFORMATION_FLAGS = frozenset({"list_drivers", "list_devices", "dump_devices",
                               "dump_task_topologies"})


def _flag_name(flag: str) -> str:
    return flag.lstrip("-").split("=", 1)[0]


def print_native_information(runtime_flags: list[str], stdout) -> bool:
    """Answers --list_drivers and its kin as iree-benchmark-module does; True if any."""
    asked = [flag for flag in runtime_flags if _flag_name(flag) in INFORMATION_FLAGS]
    if not asked:
        return False
    proc = native.run_tool(BENCHMARK_TOOL, asked)
    if proc.returncode != 0:
        raise UsageError(f"{' '.join(asked)}: "
                         f"{native.native_error_line(proc.stderr, proc.returncode)}")
    stdout.write(proc.stdout)
    stdout.flush()
    return True


STRICT_FLAGS_ENV = "IREEBENCH_STRICT_FLAGS"
_STRICT_HINT = "--strict_flags refuses it"


def _close_match(word: str, candidates) -> str | None:
    found = difflib.get_close_matches(word, sorted(candidates), n=1, cutoff=0.75)
    return found[0] if found else None


def known_flag_names(config) -> set[str]:
    """The flag names a suggestion may name: every option of the run, the loader flags."""
    names = {flag.lstrip("-") for spec in config.option_specs.values() for flag in spec.flags
             if flag.startswith("--")}
    return names | NATIVE_LOADER_FLAGS | INFORMATION_FLAGS


def parse_runtime_flag(flag: str) -> None:
    """Hands one ``--name=value`` to the IREE runtime's flag registry, as the native
    tool's flag parser does.

    The runtime is imported here, when a command line first has a flag
    ireebench does not own (:mod:`ireebench._session`): ``--help``, the
    subcommands and a run without such flags never load it for this.

    :raises ValueError: the runtime does not know the flag or refuses its value.
    """
    from .. import (
        _session as session,  # the runtime: see LAZY_IMPORTS in tests/core/test_imports.py
    )

    session.parse_runtime_flag(flag)


def check_runtime_flags(config, blocked=()) -> None:
    """Hands flags ireebench does not own to the IREE runtime.

    A flag the runtime does not know either is passed over with one warning
    line (the native tool ignores it), or refused with ``--strict_flags``;
    a flag of a plugin blocked with ``-p no:NAME`` is refused, naming it.
    A flag passed over is not handed to the native passes either: the native
    tools know no flag the bindings and ireebench do not (but the loader
    flags), and some of them (iree-benchmark-replay) take a flag left
    unparsed for a positional argument.
    """
    strict = bool(config.options.get("strict_flags"))
    kept = []
    for flag in config.runtime_flags:
        name = _flag_name(flag)
        if name in NATIVE_LOADER_FLAGS:
            kept.append(flag)
            continue
        owner = blocked_plugin_of_flag(name, blocked) if blocked else None
        if owner is not None:
            raise UsageError(f"{flag}: unknown flag (it belongs to the plugin {owner!r}, "
                             f"blocked with -p no:{owner})")
        try:
            parse_runtime_flag(flag)
            kept.append(flag)
        except ValueError as exc:
            close = _close_match(name, known_flag_names(config))
            hint = f"did you mean --{close}?" if close else ""
            if strict:
                detail = str(exc).rsplit(";", 1)[-1].strip()
                raise UsageError(f"{flag}: unknown flag ({hint + ' ' if hint else ''}"
                                 f"{detail})") from None
            config.stderr.write(f"ireebench: warning: {flag}: unknown flag, ignored as the "
                                f"native tool ignores it ({hint + '; ' if hint else ''}"
                                f"{_STRICT_HINT})\n")
    config.runtime_flags[:] = kept


def split_extra_args(args: list[str], invocation: Invocation, strict: bool,
                     first_word: str | None = None) -> list[str]:
    """The runtime flags among click's leftover arguments.

    An argument that is not a flag is passed over with one warning line (the
    native tool ignores positional arguments: sharktank appends one), or
    refused with ``--strict_flags``; one in front of the command line
    (``first_word``) close to a subcommand's name says so.
    """
    runtime_flags = []
    commands = getattr(invocation.commands, "commands", None) or {}
    for extra in args:
        if extra.startswith("-"):
            runtime_flags.append(extra)
            continue
        close = _close_match(extra, commands) if extra == first_word else None
        hint = f"did you mean the subcommand {close!r}?" if close else \
            "flags are spelled --name=value"
        if strict:
            raise UsageError(f"unexpected argument {extra!r} ({hint})")
        invocation.stderr.write(f"ireebench: warning: unexpected argument {extra!r} ignored, "
                                f"as the native tool ignores it ({hint}; {_STRICT_HINT})\n")
    return runtime_flags


def load_plugins(argv: list[str], stdout, stderr, plugins=()) -> Invocation:
    """Flag files expanded, then the plugin manager every command builds the same way.

    :return: the :class:`Invocation` (its ``commands`` not yet built); the
        manager's warnings (``-p no:`` naming nothing) are on ``stderr``.
    """
    argv = expand_flagfiles(list(argv))
    selection = prescan_plugins(argv)
    selection.objects = list(plugins)
    pm = build_plugin_manager(selection)
    for warning in pm.warnings:
        stderr.write(f"ireebench: warning: {warning}\n")
    return Invocation(stdout, stderr, pm, argv, selection, tuple(plugins))


def option_specs(command: click.Command) -> dict[str, OptionSpec]:
    """Option name -> :class:`OptionSpec`, for the run's :class:`Config`."""
    return {param.name: param.spec() for param in command.params
            if isinstance(param, GroupedOption)}


def parse_args(argv: list[str], invocation: Invocation) -> Config | None:
    """Returns the run's :class:`Config`, or None when --help (or similar) was printed.

    ``argv`` is the benchmark run's command line (flag files expanded). A
    plugin may turn it into the command lines of several points first
    (``ireebench_expand_command_line``: a sweep); see :func:`parse_points`.
    """
    pm = invocation.pm
    command = build_command(pm, commands=invocation.commands)
    points = call_hook(pm, "ireebench_expand_command_line", argv=list(argv),
                       option_specs=option_specs(command))
    if points:
        return parse_points(points, invocation, list(argv), command)
    ctx = make_context(command, "ireebench", argv, invocation)
    if ctx is None:
        return None
    runtime_flags = split_extra_args(ctx.args, invocation, bool(ctx.params.get("strict_flags")),
                                     first_word=argv[0] if argv else None)
    if print_native_information(runtime_flags, invocation.stdout):
        return None
    specs = option_specs(command)
    for warning in command.inifile.warnings(specs):
        invocation.stderr.write(f"ireebench: warning: {warning}\n")
    # A plain run's own process (--point_index=0, on an executor's node) measures
    # here and writes no run output, as a sweep's point process does.
    config = Config(pm, point_process_options(dict(ctx.params), specs), runtime_flags,
                    list(argv), invocation.stdout, invocation.stderr, specs)
    config.inifile = command.inifile
    return configure(config, invocation.selection)


def parse_points(points: list[PointSpec], invocation: Invocation, command_line: list[str],
                 command: click.Command | None = None, prog: str = "ireebench") -> Config | None:
    """The :class:`Config` of a run of several points, each parsed from its command line.

    The first point's options are the run's (each point must agree with them
    on every option of the whole run: :func:`ireebench.points.check_points`);
    ``command_line`` is the ireebench command line that makes this run,
    subcommand included (a point that needs a process of its own reruns it
    with ``--point_index``). None when --help was printed.
    """
    pm = invocation.pm
    if len(points) > MAX_POINTS:  # a plugin's expansion: each point is parsed below
        raise UsageError(f"{points[0].label} ...: {len(points)} points, more than the "
                         f"{MAX_POINTS} a run measures")
    command = command or build_command(pm, commands=invocation.commands)
    specs = option_specs(command)
    parsed = []
    for index, spec in enumerate(points):
        try:
            ctx = make_context(command, prog, spec.argv, invocation)
            if ctx is None:
                return None
            # Every point has the same stray arguments: warned about once.
            extra = ctx.args if index == 0 else [arg for arg in ctx.args if arg.startswith("-")]
            runtime_flags = split_extra_args(extra, invocation,
                                             bool(ctx.params.get("strict_flags")))
        except UsageError as exc:
            raise UsageError(f"{exc} (point {spec.label})" if spec.label else str(exc),
                             exc.exit_code, exc.status) from None
        parsed.append((spec, point_process_options(dict(ctx.params), specs), runtime_flags))
    _, options, runtime_flags = parsed[0]
    if print_native_information(runtime_flags, invocation.stdout):
        return None
    config = Config(pm, options, runtime_flags, list(points[0].argv), invocation.stdout,
                    invocation.stderr, specs)
    config.command_line = list(command_line)
    config.inifile = getattr(command, "inifile", None)
    point_list = [Point(config.for_point(options, runtime_flags, spec.params, spec.name_prefix,
                                         spec.label))
                  for spec, options, runtime_flags in parsed]
    return configure(config, invocation.selection, point_list)


def configure(config: Config, selection: PluginSelection, points: list | None = None) -> Config:
    """Checks the core options and runtime flags, chooses the backend and refuses
    what it cannot honour, then ``ireebench_configure`` and
    ``ireebench_generate_points`` (the points checked and kept in
    ``config.stash[POINTS]``).

    If any of it fails, what a plugin's configure already opened is released.
    """
    try:
        validate_core_options(config)
        check_runtime_flags(config, selection.blocked)
        config.backend  # noqa: B018 - chosen now: plugins check its capabilities in configure
        check_capabilities(config)
        select_executor(config)  # an unknown --executor is one line before plugins configure
        call_hook(config.pm, "ireebench_configure", config=config)
        check_runtime_flags_honoured(config)
        points = list(points) if points else [Point(config)]
        call_hook(config.pm, "ireebench_generate_points", config=config, points=points)
        _keep_points(config, points, selection)
    except BaseException:
        with contextlib.suppress(Exception):  # the first error is the one to report
            config.release()
        raise
    return config


def _keep_points(config: Config, points: list, selection: PluginSelection) -> None:
    """Checks the points and keeps them (a plain run, one point: its own config)."""
    check_points(config, points)
    check_process_outputs(config, run_files(config).outputs())
    for point in points:
        if point.config is not config:
            try:
                validate_core_options(point.config)
            except UsageError as exc:
                raise UsageError(f"{exc} (point {point.label})", exc.exit_code,
                                 exc.status) from None
    parsed = tuple(config.runtime_flags)  # what the runtime holds now
    for point in points:
        flags = tuple(point.config.runtime_flags)
        if flags != parsed:
            check_runtime_flags(point.config, selection.blocked)
            parsed = tuple(point.config.runtime_flags)
    index = config.getoption("point_index")
    if index is not None:  # this process measures one point of the run
        if not 0 <= index < len(points):
            raise UsageError(f"--point_index={index}: the run has {len(points)} points")
        points = [points[index]]
    if points and not runtime_flags_vary(points) and \
            tuple(points[0].config.runtime_flags) != parsed:
        # The process's flags (IREE's are process-global) are the points'.
        check_runtime_flags(points[0].config, selection.blocked)
    if len(points) == 1 and points[0].config is config:
        return
    config.stash[POINTS] = points
