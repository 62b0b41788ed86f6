"""``ireebench plugins [--json]``: what is loaded, where it came from, what it adds.

Builds the plugin manager exactly as a run would (``--plugin``, ``-p``,
entry points, ``IREEBENCH_DISABLE_PLUGIN_AUTOLOAD``) and lists every plugin:
its name, its origin (built-in, entry point with distribution and version,
``--plugin`` path, Python API), whether it is essential, the hooks it
implements, and what it adds: options, reporters, backends, invocation
kinds. Nothing is measured.
"""

from __future__ import annotations

import json

import click

from ..errors import PluginError, UsageError, one_line
from ..hookcall import implementations
from ..pluginmanager import ESSENTIAL_PLUGINS
from ..results import RunResult
from .command import GroupedCommand, add_plugin_options, load_plugins, make_context
from .options import OptionParser, Streams

HELP = """List the loaded plugins: origin, version, hooks, and the options, reporters,
backends, invocation kinds, statistics, comparison reporters and profiling
sinks each one adds.

Takes --plugin, -p NAME and -p no:NAME like a run, so you see exactly what a
run with those flags would load.
"""

# Hook name -> the key under which a plugin's named objects are listed.
NAMED_OBJECTS = {
    "ireebench_reporters": "reporters",
    "ireebench_backends": "backends",
    "ireebench_invocation_kinds": "kinds",
    "ireebench_statistics": "statistics",
    "ireebench_compare_reporters": "compare_reporters",
}


def _names(result) -> list[str]:
    if not result:
        return []
    if isinstance(result, dict):
        return list(result)
    return [getattr(item, "name", type(item).__name__) for item in result]


def describe_plugins(pm) -> list[dict]:
    """One dict per registered plugin, in registration order."""
    parser = OptionParser()
    add_plugin_options(pm, parser)
    options: dict[str, list[str]] = {}
    for option in parser.options:
        options.setdefault(option.plugin, []).extend(option.opts)
    provided: dict[str, dict[str, list[str]]] = {}
    for hook_name, key in NAMED_OBJECTS.items():
        for plugin_name, call in implementations(pm, hook_name, registration_order=True):
            try:
                names = _names(call(config=None))
            except (UsageError, PluginError) as exc:  # needs a run: say so, do not fail
                names = [f"(unavailable outside a run: {one_line(exc)})"]
            provided.setdefault(plugin_name, {})[key] = names
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
            "hooks": hooks,
            "options": options.get(name, []),
        }
        for key in NAMED_OBJECTS.values():
            entry[key] = provided.get(name, {}).get(key, [])
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
        lines = [f"{entry['name']} ({origin})", f"  path: {entry['path']}",
                 f"  hooks: {', '.join(h.removeprefix('ireebench_') for h in entry['hooks'])}"]
        for key in ("options", *NAMED_OBJECTS.values()):
            if entry[key]:
                lines.append(f"  {key.replace('_', ' ')}: {', '.join(entry[key])}")
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


def plugins_command(argv: list[str], stdout, stderr, plugins=()) -> RunResult:
    """Runs ``ireebench plugins``; returns an empty :class:`RunResult`."""
    argv, _, pm = load_plugins(argv, stderr, plugins)
    ctx = make_context(_command(), "ireebench plugins", argv, Streams(stdout, stderr, pm))
    if ctx is None:
        return RunResult(0, [])
    if ctx.args:
        raise UsageError(f"plugins: unexpected argument {ctx.args[0]!r}")
    described = describe_plugins(pm)
    if ctx.params["as_json"]:
        stdout.write(json.dumps(described, indent=2) + "\n")
    else:
        stdout.write(format_plugins(described))
    stdout.flush()
    return RunResult(0, [])
