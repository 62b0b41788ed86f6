"""The process's stdout and stderr as the CLI writes them.

Two things Python's streams do not do as a command-line tool should:

* **Bytes that were not UTF-8 go back out as they came.** A flag value, a
  path or a function name that is not valid UTF-8 reaches ireebench as a
  string with surrogate escapes; written back, it is the original bytes
  again (like the native tool, which never decodes them), and a character
  the terminal's encoding cannot show is written as a ``\\x..`` escape, never
  an exception (the ``ireebench.escape`` error handler).
* **A closed pipe ends the run quietly.** ``ireebench ... | head`` closes
  stdout early; the next write raises :class:`~ireebench.errors.OutputClosed`
  (not a plugin's failure), the core closes the reports as on any exit (so
  ``--benchmark_out`` is complete with what finished) and the CLI exits
  with status 141 (128 + SIGPIPE) without a word, as Unix tools do.

And two things a benchmark run needs of them:

* **A closed stream is /dev/null** (``ireebench ... >&-``, ``2>&-``): the
  native tool, whose writes to a closed descriptor just fail, measures and
  exits 0; so does ireebench. :func:`open_standard_streams` opens
  ``/dev/null`` on a closed stdin, stdout or stderr before anything else
  runs, as glibc does for set-user-ID programs, so the descriptor is never
  taken by the next file opened (a module copy, a report) and a message
  meant for stderr never reaches another file or stdout.
* **stdout carries the report alone**: while a command reports to the
  process's stdout (every display format is read by programs: JSON, CSV,
  and the console table IREE's Python wrapper parses), ``print()`` and
  ``sys.stdout`` in plugin code write to the run's stderr
  (:func:`prints_to_stderr`); ``config.stdout`` is the one way to the
  report (and ``invocation.stdout`` a subcommand's; a plain click
  subcommand's ``click.echo`` is its output and still goes there).
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
