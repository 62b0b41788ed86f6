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
"""

from __future__ import annotations

import codecs
import contextlib
import io
import os

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
