"""``ireebench plugins [--json]``: what is loaded, where it came from, what it adds.

A built-in plugin that owns the subcommand. The plugin manager is built
exactly as a run would build it (``--plugin``, ``-p``, entry points,
``IREEBENCH_DISABLE_PLUGIN_AUTOLOAD``), and every plugin is listed: its
name, its origin (built-in, entry point with distribution and version,
``--plugin`` path, Python API), whether it is essential, the hooks it
implements and the hooks it declares (``ireebench_addhooks``), and what it
adds: options, subcommands, and the named objects of every per-plugin hook
(reporters, backends with their capabilities, invocation kinds,
statistics, comparison reporters, and those of hooks third parties
declare). Nothing is measured.
"""

from __future__ import annotations

import json

import click
from ireebench import hookimpl
from ireebench.backend import as_backend
from ireebench.commands import (
    ArgvCommand,
    GroupedCommand,
    OptionParser,
    add_plugin_options,
    make_context,
)
from ireebench.errors import PluginError, UsageError, one_line
from ireebench.hookcall import ESSENTIAL_PLUGINS, implementations, named_objects
from ireebench.hookspecs import named_objects_of
from ireebench.results import RunResult

HELP = """List the loaded plugins: origin, version, hooks (implemented and declared),
and the options, subcommands, reporters, backends, invocation kinds,
statistics, comparison reporters and profiling sinks each one adds.

Takes --plugin, -p NAME and -p no:NAME like a run, so you see exactly what a
run with those flags would load.
"""

# The listing's key for a named-object hook whose name would read oddly.
KEY_OF_HOOK = {"ireebench_invocation_kinds": "kinds"}


def named_object_hooks(pm) -> dict[str, str]:
    """Hook name -> listing key, for every declared hook that returns named objects."""
    hooks = {}
    for name, caller in sorted(vars(pm.hook).items()):
        if not name.startswith("_") and caller.has_spec() and \
                named_objects_of(caller.spec.function) is not None:
            hooks[name] = KEY_OF_HOOK.get(name, name.removeprefix("ireebench_"))
    return hooks


def _items(hook_name: str, plugin_name: str, result) -> list[tuple[str, object]]:
    if result is None or (isinstance(result, (dict, list, tuple)) and not result):
        return []
    return list(named_objects(hook_name, plugin_name, result).items())


def _capabilities(name: str, provided) -> list[str]:
    try:
        return sorted(as_backend(name, provided).capabilities)
    except UsageError:
        return []


def describe_plugins(pm, commands=None) -> list[dict]:
    """One dict per registered plugin, in registration order."""
    parser = OptionParser()
    add_plugin_options(pm, parser)
    options: dict[str, list[str]] = {}
    for option in parser.options:
        options.setdefault(option.plugin, []).extend(option.opts)
    named = named_object_hooks(pm)
    provided: dict[str, dict] = {}
    for hook_name, key in named.items():
        for plugin_name, call in implementations(pm, hook_name, registration_order=True):
            mine = provided.setdefault(plugin_name, {})
            try:
                items = _items(hook_name, plugin_name, call(config=None))
            except (UsageError, PluginError) as exc:  # needs a run: say so, do not fail
                mine[key] = [f"(unavailable outside a run: {one_line(exc)})"]
                continue
            mine[key] = [name for name, _ in items]
            if hook_name == "ireebench_backends":  # a backend says what it can do
                mine["backend_capabilities"] = {name: _capabilities(name, item)
                                                for name, item in items}
    described = []
    for name, info in pm.infos.items():
        hooks = sorted(caller.name for caller in pm.get_hookcallers(info.plugin) or [])
        entry = {
            "name": name,
            "origin": info.origin,
            "essential": name in ESSENTIAL_PLUGINS,
            "distribution": info.distribution,
            "version": info.version,
            "path": info.path,
            "import_seconds": (None if info.import_seconds is None
                               else round(info.import_seconds, 6)),
            "hooks": hooks,
            "declares_hooks": pm.declared_hooks(name),
            "options": options.get(name, []),
            "commands": commands.of_plugin(name) if commands is not None else [],
        }
        for key in named.values():
            entry[key] = provided.get(name, {}).get(key, [])
        entry["backend_capabilities"] = provided.get(name, {}).get("backend_capabilities", {})
        # Sinks are made per run (they may need its options): said, not listed.
        entry["profiling_sinks"] = "ireebench_profiling_sinks" in hooks
        described.append(entry)
    return described


def format_plugins(described: list[dict]) -> str:
    """The console listing: one block per plugin."""
    blocks = []
    for entry in described:
        origin = entry["origin"] + (", essential" if entry["essential"] else "")
        if entry["distribution"]:
            origin += f", {entry['distribution']} {entry['version']}".rstrip()
        imported = entry["import_seconds"]
        path = entry["path"] + (f" (imported in {imported * 1000:.1f} ms)"
                                if imported is not None else "")
        lines = [f"{entry['name']} ({origin})", f"  path: {path}",
                 f"  hooks: {', '.join(h.removeprefix('ireebench_') for h in entry['hooks'])}"]
        if entry["declares_hooks"]:
            lines.append(f"  declares hooks: {', '.join(entry['declares_hooks'])}")
        listed = [key for key, value in entry.items() if isinstance(value, list)
                  and key not in ("hooks", "declares_hooks")]
        capabilities = entry["backend_capabilities"]
        for key in listed:
            if not entry[key]:
                continue
            shown = [f"{item} ({', '.join(capabilities[item]) or 'no capabilities'})"
                     if key == "backends" and item in capabilities else item
                     for item in entry[key]]
            lines.append(f"  {key.replace('_', ' ')}: {', '.join(shown)}")
        if entry["profiling_sinks"]:
            lines.append("  profiling sinks: made for each run (ireebench_profiling_sinks)")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def _command() -> click.Command:
    return GroupedCommand(
        "ireebench plugins",
        params=[
            click.Option(["--json", "as_json"], is_flag=True,
                         help="Print a JSON list, for machines."),
            click.Option(["--plugin"], multiple=True, metavar="MODULE|FILE.py",
                         help="Load a plugin module or file; repeatable."),
            click.Option(["-p", "block"], multiple=True, metavar="NAME|no:NAME",
                         help="Load (-p NAME) or block (-p no:NAME) a plugin; repeatable."),
        ],
        help=HELP,
        context_settings={"help_option_names": ["--help", "-h"]},
    )


def plugins_main(argv: list[str], invocation) -> RunResult:
    """Runs ``ireebench plugins``; returns an empty :class:`RunResult`."""
    ctx = make_context(_command(), "ireebench plugins", argv, invocation)
    if ctx is None:
        return RunResult(0, [])
    if ctx.args:
        raise UsageError(f"plugins: unexpected argument {ctx.args[0]!r}")
    described = describe_plugins(invocation.pm, invocation.commands)
    stdout = invocation.stdout
    if ctx.params["as_json"]:
        stdout.write(json.dumps(described, indent=2) + "\n")
    else:
        stdout.write(format_plugins(described))
    stdout.flush()
    return RunResult(0, [])


@hookimpl
def ireebench_register_commands(cli):
    """Registers ``ireebench plugins``."""
    cli.add_command(ArgvCommand("plugins", plugins_main, help=HELP,
                                short_help="List the loaded plugins and what each one adds."))
