"""A library for a process and its forked worker: the channel between them.

What ``--isolation=worker`` (:mod:`ireebench._worker`) and the ``rank``
plugin's warm workers share, as pyperf's ``_worker`` is to its ``_manager``:
length-prefixed JSON messages (never pickle), forwarded streams, errors as
data, parent death, process-group signals, how a process ended in words.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import io
import json
import os
import signal
import struct
import sys

from .._codec import decode, encode
from ..errors import (
    EXIT_FAILED,
    EXIT_PLUGIN_ERROR,
    OutputClosed,
    PluginError,
    Terminated,
    UsageError,
)

__all__ = ["Channel", "ForwardedStream", "Frames", "decode", "decode_error", "describe_death",
           "die_with", "encode", "encode_error", "encode_message", "flush", "fork_worker",
           "interrupt", "signal_group"]

USER_SIGNALS = (signal.SIGINT, signal.SIGTERM)
# Signals that end a process because its code went wrong (a "crash").
_CRASHES = {getattr(signal, name) for name in
            ("SIGSEGV", "SIGBUS", "SIGABRT", "SIGILL", "SIGFPE", "SIGSYS", "SIGTRAP")
            if hasattr(signal, name)}
_PR_SET_PDEATHSIG = 1


def encode_error(exc: BaseException | None):
    """How a worker's run ended, as data the supervisor re-raises (:func:`decode_error`)."""
    if exc is None:
        return None
    if isinstance(exc, KeyboardInterrupt):
        return {"kind": "interrupt"}
    if isinstance(exc, Terminated):
        return {"kind": "terminated"}
    if isinstance(exc, OutputClosed):
        return {"kind": "output_closed"}
    if isinstance(exc, UsageError):
        return {"kind": "usage", "message": str(exc), "exit_code": exc.exit_code,
                "status": exc.status}
    if isinstance(exc, PluginError):
        return {"kind": "plugin", "message": str(exc), "where": exc.where,
                "plugin": exc.plugin_name}
    if isinstance(exc, SystemExit):
        code = exc.code
        return {"kind": "exit", "code": code if code is None or isinstance(code, int)
                else str(code)}
    return {"kind": "internal", "type": type(exc).__name__, "message": str(exc)}


def decode_error(data) -> BaseException:
    """The exception a worker's run ended with, to raise in the supervisor."""
    kind = data["kind"]
    if kind == "interrupt":
        return KeyboardInterrupt()
    if kind == "terminated":
        return Terminated()
    if kind == "output_closed":
        return OutputClosed()
    if kind == "usage":
        return UsageError(data["message"], data["exit_code"], data.get("status"))
    if kind == "plugin":
        error = PluginError.__new__(PluginError)
        Exception.__init__(error, data["message"])
        error.where, error.plugin_name, error.original = data["where"], data["plugin"], None
        return error
    if kind == "exit":
        return SystemExit(data["code"])
    # An internal error keeps its type's name, which the CLI's line shows.
    return type(data["type"], (Exception,), {})(data["message"])


def interrupt(signum: int) -> BaseException:
    """The exception a run interrupted by ``signum`` ends with."""
    return Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


def encode_message(kind: str, *args) -> bytes:
    """One message as it goes down the pipe: its length, then ``[kind, *args]`` in JSON."""
    payload = json.dumps([kind, *map(encode, args)]).encode()
    return struct.pack(">I", len(payload)) + payload


class Channel:
    """The worker's end: messages to the supervisor, and acknowledgements."""

    def __init__(self, data_fd: int, ack_fd: int | None = None):
        self._data = data_fd
        self._ack = ack_fd  # None: a channel without acknowledgements
        if ack_fd is not None:
            os.set_blocking(ack_fd, False)

    def send(self, kind: str, *args) -> None:
        """One message (never interleaved with another, also when a signal
        handler sends one while it is written)."""
        frame = memoryview(encode_message(kind, *args))
        # Held back while the frame is written: a handler that raises
        # (Ctrl-C) must not cut it in half. Another thread (OpenBLAS's) may
        # still take the signal and the handler then run here: the frame is
        # finished first, and what the handler raised is raised after.
        held = signal.pthread_sigmask(signal.SIG_BLOCK, USER_SIGNALS)
        raised = None
        try:
            while frame:
                try:
                    frame = frame[os.write(self._data, frame):]
                except OSError:
                    break  # the supervisor is gone; the worker dies with it
                except BaseException as exc:  # noqa: BLE001 - raised once the frame is out
                    raised = raised or exc
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        if raised is not None:
            raise raised

    def acknowledge(self, signum: int | None = None) -> None:
        """"A signal arrived, and Python code handles it" (from a signal handler)."""
        if self._ack is None:
            return
        with contextlib.suppress(OSError):
            os.write(self._ack, b"!")


class ForwardedStream(io.TextIOBase):
    """A worker's stdout or stderr written by the supervisor (Python API streams
    that live in the caller's memory)."""

    def __init__(self, channel: Channel, name: str):
        super().__init__()
        self._channel = channel
        self._name = name

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self._channel.send("write", self._name, text)
        return len(text)


class Frames:
    """Reassembles the length-prefixed messages of the channel."""

    def __init__(self):
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list:
        self._buffer += data
        messages = []
        while len(self._buffer) >= 4:
            (length,) = struct.unpack(">I", self._buffer[:4])
            if len(self._buffer) < 4 + length:
                break
            message = json.loads(bytes(self._buffer[4:4 + length]))
            del self._buffer[:4 + length]
            messages.append((message[0], [decode(arg) for arg in message[1:]]))
        return messages

    def drain(self, fd: int, ended: bool) -> tuple[list, bool]:
        """The messages a non-blocking pipe holds now, and whether it is at its end
        (``ended``: it already was)."""
        messages = []
        while not ended:
            try:
                chunk = os.read(fd, 1 << 16)
            except BlockingIOError:
                break
            except OSError:
                chunk = b""
            ended = not chunk
            messages.extend(self.feed(chunk))
        return messages, ended


def flush(*streams) -> None:
    """``streams`` and this process's stdout and stderr flushed, whatever they are."""
    for stream in (*streams, sys.stdout, sys.stderr):
        with contextlib.suppress(Exception, OutputClosed):
            stream.flush()


def fork_worker(child, child_ends: tuple, parent_ends: tuple, streams=(),
                close_in_child: tuple = ()) -> int:
    """Forks a worker that runs ``child()`` and ends with ``os._exit`` (its status, or
    exit 3 when it raised), the pid of a process group of its own.

    The streams are flushed first (or the worker would write the buffered text again);
    the objects made so far move out of the collector's reach meanwhile (its
    collections would write to every page both processes share, copying it: a fork's
    main cost). The worker closes ``parent_ends`` and ``close_in_child``; the parent
    closes ``child_ends`` (both ends when the fork fails, which is raised)."""
    flush(*streams)
    gc.freeze()
    try:
        pid = os.fork()
    except OSError:
        gc.unfreeze()
        for fd in (*child_ends, *parent_ends):
            os.close(fd)
        raise
    if pid == 0:
        status = EXIT_PLUGIN_ERROR
        try:
            for fd in (*parent_ends, *close_in_child):
                with contextlib.suppress(OSError):
                    os.close(fd)
            status = child()
        finally:
            os._exit(status)
    gc.unfreeze()
    for fd in child_ends:
        os.close(fd)
    with contextlib.suppress(OSError):
        os.setpgid(pid, pid)  # also here: no signal may miss the group
    return pid


def describe_death(wait_status: int) -> str:
    """How a process ended, in words: ``crashed: SIGSEGV (Segmentation fault)``."""
    if os.WIFSIGNALED(wait_status):
        number = os.WTERMSIG(wait_status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        verb = "crashed" if number in _CRASHES else "was killed"
        return f"{verb}: {name} ({signal.strsignal(number) or name})"
    return f"exited with status {os.waitstatus_to_exitcode(wait_status)}"


def signal_group(pid: int, signum: int) -> None:
    """To the worker's process group (its native tools too, as a terminal's
    Ctrl-C would reach them), or the worker alone before it has one."""
    try:
        os.killpg(pid, signum)
    except OSError:
        with contextlib.suppress(OSError):
            os.kill(pid, signum)


def die_with(supervisor: int) -> None:
    """The worker, in a process group of its own, gets SIGKILL when the supervisor dies
    (Linux; best effort)."""
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, ctypes.c_ulong(signal.SIGKILL), ctypes.c_ulong(0),
                   ctypes.c_ulong(0), ctypes.c_ulong(0))
    except (OSError, AttributeError):
        return
    if os.getppid() != supervisor:  # it died before prctl
        os._exit(EXIT_FAILED)

