"""One invocation of ``ireebench``: what every command, built-in or a plugin's, receives."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Invocation:
    """What a command's click context carries (``ctx.obj``; ``@click.pass_obj``).

    :ivar stdout: where the command writes its output (the Python API's
        stream, or the process's); write there, never to ``sys.stdout``.
    :ivar stderr: where its messages go.
    :ivar pm: the plugin manager, built from the whole command line
        (``--plugin``, ``-p`` anywhere in it, entry points, Python API objects).
    :ivar argv: the command line after flag files were expanded.
    :ivar selection: the :class:`ireebench._pluginmanager.PluginSelection`
        the command line and the Python API asked for.
    :ivar plugins: the plugin objects the Python API passed.
    :ivar commands: the :class:`ireebench.cli.commands.CommandGroup` of
        subcommands.
    """

    stdout: object
    stderr: object
    pm: object = None
    argv: list = field(default_factory=list)
    selection: object = None
    plugins: tuple = ()
    commands: object = None
