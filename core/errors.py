"""The one exception type for user errors.

Anything the user can fix (a flag value, a missing file, a plugin that does
not import) raises :class:`UsageError` in the core. The CLI turns it into a
single ``ireebench: error: ...`` line on stderr and exit code 1, never a
traceback.
"""


class UsageError(Exception):
    """A user-fixable error. ``str(err)`` is the one line shown to the user."""

    def __init__(self, message: str, exit_code: int = 1):
        # A flag value may contain line breaks; escaped, the message stays one line.
        super().__init__(str(message).replace("\r", "\\r").replace("\n", "\\n"))
        self.exit_code = exit_code


def one_line(text) -> str:
    """Collapses whitespace runs (line breaks included) to single spaces.

    For text ireebench does not control (an exception's message) quoted in a
    :class:`UsageError`: reads better than the escaped ``\\n`` the
    constructor falls back to.
    """
    return " ".join(str(text).split())


def flag_error(flag: str, value, reason: str) -> UsageError:
    """Builds the canonical message that names the flag and its value."""
    return UsageError(f"--{flag}={value}: {reason}")


class Terminated(BaseException):
    """Raised in the main thread on SIGTERM, like KeyboardInterrupt on SIGINT."""


def exit_status(exc: BaseException) -> int:
    """The exit code a run ends with when ``exc`` escapes it."""
    if isinstance(exc, KeyboardInterrupt):
        return 130
    if isinstance(exc, Terminated):
        return 143
    if isinstance(exc, UsageError):
        return exc.exit_code
    return 1
