"""The process's stdout and stderr as the CLI writes them.

Bytes that were not UTF-8 go back out as they came (surrogate escapes, the
``ireebench.escape`` error handler for what the terminal cannot show); a
closed pipe ends the run quietly (:class:`~ireebench.errors.OutputClosed`,
the reports closed, exit 141); a closed stdin, stdout or stderr is
``/dev/null`` (:func:`open_standard_streams`, before anything else runs, so
the descriptor is never taken by the next file opened); and stdout carries
the report alone: plugin code's ``print()`` goes to stderr
(:func:`prints_to_stderr`), ``config.stdout`` is the one way to the report.
Why each: docs/reliability.md.
"""

from __future__ import annotations

import codecs
import contextlib
import io
import os
import sys

from .errors import OutputClosed

ERRORS = "ireebench.escape"


def _escape(error: UnicodeError):
    """Surrogate escapes back to their bytes; anything else unencodable as ``\\x..``."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    out = bytearray()
    for char in error.object[error.start:error.end]:
        if 0xDC80 <= ord(char) <= 0xDCFF:
            out.append(ord(char) - 0xDC00)
        else:
            out += char.encode("ascii", "backslashreplace")
    return bytes(out), error.end


codecs.register_error(ERRORS, _escape)


class CliStream(io.TextIOBase):
    """Writes to a process stream (``sys.stdout``); a broken pipe raises OutputClosed."""

    def __init__(self, stream):
        super().__init__()
        self._stream = stream
        with contextlib.suppress(AttributeError, ValueError, io.UnsupportedOperation):
            stream.reconfigure(errors=ERRORS)

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise OutputClosed() from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise OutputClosed() from None

    def fileno(self) -> int:
        return self._stream.fileno()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def silence(self) -> None:
        """Points the closed stream at /dev/null, so nothing complains at exit."""
        with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)


_STANDARD = (("stdin", 0, os.O_RDONLY, "r"), ("stdout", 1, os.O_WRONLY, "w"),
             ("stderr", 2, os.O_WRONLY, "w"))


def open_standard_streams() -> None:
    """Opens ``/dev/null`` on a closed stdin, stdout or stderr (see the module
    docstring), and gives Python a stream for it where it had none."""
    for name, fd, flags, mode in _STANDARD:
        try:
            os.fstat(fd)
        except OSError:
            try:
                null = os.open(os.devnull, flags)
            except OSError:
                continue
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
        if getattr(sys, name) is None:  # Python found it closed at startup
            setattr(sys, name, open(fd, mode, closefd=False, errors=ERRORS))  # noqa: SIM115


def _wraps(stream, target) -> bool:
    while stream is not None:
        if stream is target:
            return True
        stream = getattr(stream, "_stream", None)
    return False


@contextlib.contextmanager
def prints_to_stderr(stdout, stderr):
    """While the run reports to the process's stdout, ``print()`` and
    ``sys.stdout`` write to ``stderr``; a run reporting elsewhere (the Python
    API's stream) leaves them alone."""
    if sys.stdout is None or not _wraps(stdout, sys.stdout) or _wraps(stderr, sys.stdout):
        yield
        return
    with contextlib.redirect_stdout(stderr):
        yield


__all__ = [
    "CliStream"
]
