"""The command line: ``ireebench [flags]`` and its subcommands.

* :mod:`.options`: the core's option table and the parser plugins add to;
* :mod:`.argv`: flag files and the plugin selection, read before parsing;
* :mod:`.command`: the main command, parsed into a :class:`Config`;
* :mod:`.replay`: ``ireebench replay FILE.ireereplay``;
* :mod:`.compare`: ``ireebench compare OLD.json NEW.json`` (a run of its own).

:func:`run_cli` is the edge where every error becomes one line on stderr
and an exit status (1 user error, 3 plugin or internal error, 130 SIGINT,
143 SIGTERM; ``ireebench compare``: 1 regression, 2 user error);
:func:`execute` is the same run for the Python API, raising instead.
"""

from __future__ import annotations

import functools
import os
import sys

from ..errors import (
    EXIT_INTERRUPTED,
    EXIT_PLUGIN_ERROR,
    EXIT_TERMINATED,
    PluginError,
    Terminated,
    UsageError,
    one_line,
)
from ..results import RunResult
from ..runner import run_config
from ..signals import sigterm_raises
from .command import parse_args
from .compare import compare_main
from .replay import parse_replay_args

# Set to see the traceback of an internal error instead of its one line.
DEBUG_ENV = "IREEBENCH_DEBUG"


def benchmark_run(parse, argv: list[str], stdout, stderr, plugins=()) -> RunResult:
    """A benchmark run: ``parse`` gives its Config (None after --help), the core runs it."""
    config = parse(argv, stdout, stderr, plugins)
    if config is None:
        return RunResult(0, [])
    return run_config(config)


# `ireebench NAME ...`: subcommand name -> main(argv, stdout, stderr, plugins) -> RunResult.
SUBCOMMANDS = {
    "replay": functools.partial(benchmark_run, parse_replay_args),
    "compare": compare_main,
}


def execute(argv: list[str], stdout=None, stderr=None, plugins=()) -> RunResult:
    """Parses ``argv`` and runs; returns a :class:`RunResult` (empty after --help).

    :param plugins: plugin objects or modules registered for this run only.
    """
    stdout = stdout if stdout is not None else sys.stdout
    stderr = stderr if stderr is not None else sys.stderr
    argv = list(argv)
    main = SUBCOMMANDS.get(argv[0]) if argv else None
    if main is not None:
        return main(argv[1:], stdout, stderr, plugins)
    return benchmark_run(parse_args, argv, stdout, stderr, plugins)


def run_cli(argv: list[str]) -> int:
    """Runs the CLI and returns the exit code; never raises for user or plugin errors."""
    with sigterm_raises():
        try:
            return execute(argv).exit_code
        except UsageError as exc:
            print(f"ireebench: error: {exc}", file=sys.stderr)
            return exc.exit_code
        except PluginError as exc:
            print(f"ireebench: plugin error: {exc}", file=sys.stderr)
            return exc.exit_code
        except KeyboardInterrupt:
            print("ireebench: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        except Terminated:
            print("ireebench: terminated", file=sys.stderr)
            return EXIT_TERMINATED
        except Exception as exc:
            if os.environ.get(DEBUG_ENV):
                raise
            print(f"ireebench: internal error: {type(exc).__name__}: {one_line(exc)} "
                  f"(set {DEBUG_ENV}=1 for the traceback)", file=sys.stderr)
            return EXIT_PLUGIN_ERROR


def main(argv: list[str] | None = None) -> None:
    sys.exit(run_cli(list(sys.argv[1:] if argv is None else argv)))
