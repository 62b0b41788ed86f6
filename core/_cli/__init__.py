"""The command line: ``ireebench [flags]`` and the subcommands plugins register.

* :mod:`.options`: the core's option table and the parser plugins add to;
* :mod:`.argv`: flag files and the plugin selection, read before parsing;
* :mod:`.invocation`: what every command receives (streams, plugin manager);
* :mod:`.command`: the main command (the benchmark run), parsed into a :class:`Config`;
* :mod:`.commands`: the subcommands (``ireebench_register_commands``) and how one runs.

:func:`run_cli` is the edge where every error becomes one line on stderr
and an exit status (1 user error, 3 plugin or internal error, 130 SIGINT,
141 stdout closed by its reader, 143 SIGTERM; ``ireebench compare``: 1
regression, 2 user error);
:func:`execute` is the same run for the Python API, raising instead.
"""

from __future__ import annotations

import gc
import os
import sys

from ..errors import (
    DEBUG_ENV,
    EXIT_INTERRUPTED,
    EXIT_OUTPUT_CLOSED,
    EXIT_PLUGIN_ERROR,
    EXIT_TERMINATED,
    OutputClosed,
    PluginError,
    Terminated,
    UsageError,
    one_line,
)
from ..results import RunResult
from ..signals import sigterm_raises
from ..streams import CliStream, open_standard_streams, prints_to_stderr
from .argv import first_word
from .command import load_plugins, parse_args
from .commands import build_command_group, builtin_usage_exit_code, run_benchmark, run_subcommand

# The IREE runtime's native extension (nanobind), loaded by a run.
RUNTIME_EXTENSION = "iree._runtime_libs._runtime"


def _run(config) -> RunResult:
    """The run of a parsed command line (an empty result after --help)."""
    return RunResult(0, []) if config is None else run_benchmark(config)


def execute(argv: list[str], stdout=None, stderr=None, plugins=()) -> RunResult:
    """Parses ``argv`` and runs; returns a :class:`RunResult` (empty after --help).

    The plugins are loaded from the whole command line first (flag files
    expanded), then asked for their subcommands: ``ireebench NAME ...`` runs
    the subcommand ``NAME`` if one is registered (``--plugin``/``-p`` may
    come before it: ``ireebench --plugin X NAME``), anything else is the
    benchmark run.

    :param plugins: plugin objects or modules registered for this run only.
    """
    stdout = stdout if stdout is not None else sys.stdout
    stderr = stderr if stderr is not None else sys.stderr
    # The report owns the process's stdout: a plugin's print() goes to stderr
    # (a plain subcommand's click.echo goes back to stdout: its output).
    with prints_to_stderr(stdout, stderr):
        try:
            invocation = load_plugins(list(argv), stdout, stderr, plugins)
            invocation.commands = build_command_group(invocation.pm)
        except UsageError as exc:
            words = [str(arg) for arg in argv]
            position = first_word(words)
            name = words[position] if position < len(words) else ""
            if name and not name.startswith("-"):  # a subcommand's own usage status
                exc.exit_code = builtin_usage_exit_code(name)
            raise
        argv = invocation.argv
        position = first_word(argv)
        if position < len(argv) and argv[position] in invocation.commands.commands:
            return run_subcommand(invocation, argv[position],
                                  argv[:position] + argv[position + 1:])
        return _run(parse_args(argv, invocation))


def error_outcome(exc: BaseException) -> tuple[str, int] | None:
    """The one line on stderr and the exit status a run that raised ``exc`` ends
    with on the command line; None for an internal error (a bug)."""
    if isinstance(exc, UsageError):
        return f"ireebench: error: {exc.line}", exc.exit_code
    if isinstance(exc, PluginError):
        return f"ireebench: plugin error: {exc}", exc.exit_code
    if isinstance(exc, KeyboardInterrupt):
        return "ireebench: interrupted", EXIT_INTERRUPTED
    if isinstance(exc, Terminated):
        return "ireebench: terminated", EXIT_TERMINATED
    return None


def run_cli(argv: list[str]) -> int:
    """Runs the CLI and returns the exit code; never raises for user or plugin errors."""
    open_standard_streams()  # ">&-": /dev/null, before any file takes the descriptor
    stdout, stderr = CliStream(sys.stdout), CliStream(sys.stderr)
    with sigterm_raises():
        try:
            return execute(argv, stdout, stderr).exit_code
        except OutputClosed:
            stdout.silence()
            return EXIT_OUTPUT_CLOSED
        except SystemExit:
            raise  # sys.exit() in a plugin: its status, as Python gives it
        except BaseException as exc:  # one line, never a traceback
            outcome = error_outcome(exc)
            debug = os.environ.get(DEBUG_ENV)
            if debug and isinstance(exc, PluginError) and exc.original is not None:
                import traceback
                traceback.print_exception(exc.original)  # the plugin's, where it raised
            if outcome is None:
                if debug:
                    raise
                outcome = ((f"ireebench: internal error: {type(exc).__name__}: "
                           f"{one_line(exc)} (set {DEBUG_ENV}=1 for the traceback)"),
                           EXIT_PLUGIN_ERROR)
            print(outcome[0], file=sys.stderr)
            return outcome[1]


def main(argv: list[str] | None = None) -> None:
    """The ``ireebench`` command: runs the CLI, then exits with its status."""
    status = run_cli(list(sys.argv[1:] if argv is None else argv))
    # The process ends now: its objects need not be traversed by the garbage
    # collector again. Without this, the interpreter's shutdown collects the
    # whole heap of a few hundred modules, about 20 ms of CPU time of `--help`
    # (docs/performance.md, "Startup"). Not once the IREE runtime is loaded:
    # its nanobind objects must be collected, or nanobind reports them as
    # leaked on stderr at exit.
    if RUNTIME_EXTENSION not in sys.modules:
        gc.freeze()
    sys.exit(status)
