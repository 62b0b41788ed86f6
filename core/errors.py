"""The exceptions a run ends with, and the exit status each one gives.

* :class:`UsageError`: anything the user can fix (a flag value, a missing
  file, a plugin that does not import, two plugins that clash). The CLI
  prints one ``ireebench: error: ...`` line and exits 1 (2 in ``ireebench
  compare``, whose 1 means a regression, as diff's 1 means a difference).
* :class:`PluginError`: a plugin's code raised while ireebench called it.
  Not the user's mistake, so it reads differently (``ireebench: plugin
  error: plugin 'x' failed in ireebench_y: ...``) and exits 3, like pytest's
  internal errors; the results finished before it are still written.
* :class:`Terminated`: SIGTERM, raised in the main thread as
  KeyboardInterrupt is for SIGINT; :class:`OutputClosed`: the reader of
  stdout went away (``| head``), the run ends quietly with status 141.

Neither ever reaches the user as a traceback: :func:`exit_status` and the
CLI's edge (``ireebench._cli.run_cli``) turn them into one line.

A :class:`UsageError` for something iree-benchmark-module refuses too
carries the status code IREE's tools print for it (``status``, one of
:data:`STATUS_CODES`); the CLI writes it before the message, as
``iree_status_fprint`` does: ``ireebench: error: INVALID_ARGUMENT; --input=...``.
Clients of the native tool (IREE's 2024 Python wrapper, wave) tell a failed
run by that text on stderr, not by the exit code.
"""

from __future__ import annotations

import re

EXIT_OK = 0
EXIT_FAILED = 1  # a usage error, a failed benchmark, a mismatching output
EXIT_COMPARE_USAGE = 2  # `ireebench compare`: a usage error (1 is a regression there)
EXIT_PLUGIN_ERROR = 3  # a plugin raised (pytest's INTERNAL_ERROR)
EXIT_INTERRUPTED = 130  # SIGINT
EXIT_OUTPUT_CLOSED = 141  # stdout closed early (128 + SIGPIPE), as Unix tools end
EXIT_TERMINATED = 143  # SIGTERM
# What a plugin may end a run with (Config.fail_run): a failed run's 1, or a code
# of its own that means nothing above (126 and up are the shell's and signals').
RUN_FAILURE_CODES = (EXIT_FAILED, *range(4, 126))
# Set: the tracebacks of internal errors and of plugin code that failed a benchmark.
DEBUG_ENV = "IREEBENCH_DEBUG"


# iree_status_code_string's names (runtime/src/iree/base/status.c), in code order.
STATUS_CODES = (
    "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
    "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
    "UNAUTHENTICATED", "DEFERRED", "INCOMPATIBLE",
)
INVALID_ARGUMENT = "INVALID_ARGUMENT"
NOT_FOUND = "NOT_FOUND"
UNKNOWN = "UNKNOWN"
UNIMPLEMENTED = "UNIMPLEMENTED"
RESOURCE_EXHAUSTED = "RESOURCE_EXHAUSTED"
_STATUS_IN_TEXT = re.compile(r"\b(" + "|".join(STATUS_CODES[1:]) + r");")
# C0 and C1 controls, DEL, and the bidirectional embeddings, overrides and
# isolates (the "Trojan Source" characters).
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e"
                          "\u2066-\u2069]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match) -> str:
    char = match.group()
    return _NAMED.get(char) or (f"\\x{ord(char):02x}" if ord(char) < 0x100
                                else f"\\u{ord(char):04x}")


def printable(text) -> str:
    """``text`` with control and bidi characters escaped (``\\n``, ``\\x1b``,
    ``\\u202e``): one line that can neither colour, move the cursor, set a
    terminal's title (OSC) nor reorder itself, whatever a file or a flag held."""
    return _UNPRINTABLE.sub(_escape, str(text))


class UsageError(Exception):
    """A user-fixable error. ``str(err)`` is the message; :attr:`line` the line shown.

    :param status: the IREE status code name iree-benchmark-module prints for
        the same mistake (``INVALID_ARGUMENT``, ``NOT_FOUND`` ...), or None
        where the native tool has no such error (ireebench's own flags).
    """

    def __init__(self, message: str, exit_code: int = EXIT_FAILED, status: str | None = None):
        # A flag value may contain line breaks or terminal escapes (ESC, OSC):
        # escaped, the message stays one plain line.
        super().__init__(printable(message))
        self.exit_code = exit_code
        if status is not None and status not in STATUS_CODES:
            raise ValueError(f"not an IREE status code: {status!r}")
        self.status = status

    @property
    def line(self) -> str:
        """What follows ``ireebench: error: ``: the status code first, as IREE prints it."""
        return f"{self.status}; {self}" if self.status else str(self)


class PluginError(Exception):
    """A plugin raised in a hook, a reporter method or a sink: names the plugin.

    :param where: what was called (``ireebench_benchmark_result``,
        ``reporter JSONReporter.finalize`` ...).
    :param plugin_name: the plugin whose code raised, or None if unknown.
    :param exc: the original exception (also ``__cause__``).
    """

    exit_code = EXIT_PLUGIN_ERROR

    def __init__(self, where: str, plugin_name: str | None, exc: BaseException):
        who = f"plugin {plugin_name!r}" if plugin_name else "a plugin"
        detail = one_line(exc)
        super().__init__(f"{who} failed in {where}: {type(exc).__name__}"
                         + (f": {detail}" if detail else ""))
        self.where = where
        self.plugin_name = plugin_name
        self.original = exc


class Terminated(BaseException):
    """Raised in the main thread on SIGTERM, like KeyboardInterrupt on SIGINT."""


class OutputClosed(BaseException):
    """The CLI's stdout was closed by its reader (``| head``): the run ends quietly."""


def one_line(text) -> str:
    """Collapses whitespace runs (line breaks included) to single spaces.

    For text ireebench does not control (an exception's message) quoted in a
    :class:`UsageError`: reads better than the escaped ``\\n`` the
    constructor falls back to.
    """
    return " ".join(str(text).split())


def flag_error(flag: str, value, reason: str, status: str | None = None) -> UsageError:
    """Builds the canonical message that names the flag and its value."""
    return UsageError(f"--{flag}={value}: {reason}", status=status)


def runtime_status(exc_or_text, default: str | None = None) -> str | None:
    """The status code in an IREE runtime error's text (``...: NOT_FOUND; ...``).

    The Python bindings raise plain exceptions whose message is the
    runtime's formatted status; the first code in it is the one the native
    tool would print for the same failure.
    """
    match = _STATUS_IN_TEXT.search(str(exc_or_text))
    return match.group(1) if match else default


def exit_status(exc: BaseException) -> int:
    """The exit code a run ends with when ``exc`` escapes it."""
    if isinstance(exc, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    if isinstance(exc, Terminated):
        return EXIT_TERMINATED
    if isinstance(exc, OutputClosed):
        return EXIT_OUTPUT_CLOSED
    if isinstance(exc, (UsageError, PluginError)):
        return exc.exit_code
    if isinstance(exc, SystemExit):  # sys.exit() in a plugin: its status
        code = exc.code
        return code if isinstance(code, int) else (EXIT_OK if code is None else EXIT_FAILED)
    return EXIT_PLUGIN_ERROR  # an internal error: the CLI exits 3 for it too


def signal_name(exc: BaseException) -> str:
    """The signal an interrupt stands for: ``SIGINT`` (KeyboardInterrupt) or ``SIGTERM``."""
    return "SIGTERM" if isinstance(exc, Terminated) else "SIGINT"


__all__ = [
    "EXIT_COMPARE_USAGE", "EXIT_FAILED", "EXIT_OK", "EXIT_PLUGIN_ERROR", "INVALID_ARGUMENT",
    "PluginError", "Terminated", "UsageError", "flag_error", "one_line", "printable",
    "signal_name"
]
