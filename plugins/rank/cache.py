"""The ranking's cache and stream: one JSON line per finished measurement.

Every measurement is appended to the cache file as it finishes (flushed
and synced: a ranking killed a moment later keeps it), keyed by what its
result depends on (:func:`key`): the module's sha256, the function, the
inputs (a file input by its content's sha256), the baseline's sha256
(ratios are to the baseline), the device's fingerprint
(:func:`.devices.fingerprint`) and every flag that can change a
measurement. A rerun of the same ranking therefore measures nothing it
measured before (``--remeasure`` measures again), and a ranking that was
interrupted, or ran out of its ``--rank_budget``, resumes where it
stopped. The re-rank is cached too, under the keys of its members.

The file is JSON lines, append-only, written under an exclusive
``flock`` (two rankings may share it); a line cut short by a kill is
skipped when read, and the last record of a key wins. The default file is
``$XDG_CACHE_HOME/ireebench/rank.jsonl`` (``~/.cache``), made 0600 in a
0700 folder.

``--rank_stream=FILE`` writes the lines of this run only (each candidate,
each baseline, the re-rank, then the ranking), for a tuner to follow.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import stat
import sys
import time
from pathlib import Path

from ireebench.backend import file_sha256
from ireebench.errors import UsageError, printable
from ireebench.lib.compile_cache import cache_location

from .results import Measurement

CACHE_VERSION = 1
DEFAULT_NAME = "rank.jsonl"
INPUT_FILE = re.compile(r"^(?:[^=@+*]*=)?[@+*](.+)$")
# Options that change what is reported or where, never a measurement: left
# out of the key (every other option, a plugin's too, is in it).
NOT_MEASURING = frozenset({
    "benchmark_out", "benchmark_out_format", "benchmark_format", "reporter",
    "benchmark_counters_tabular", "benchmark_context", "benchmark_color",
    "benchmark_time_unit", "benchmark_display_aggregates_only",
    "benchmark_report_aggregates_only", "benchmark_list_tests", "benchmark_filter", "v",
    "plugin", "block", "backend", "strict_flags", "point_index", "isolation",
    "process_index", "benchmark_processes",
    "benchmark_save", "benchmark_storage", "benchmark_report", "environment_warnings",
    "modality_warnings", "multimodal_warnings", "compile_flag", "module", "device",
    "baseline", "devices", "cpu_workers", "cpu_sets", "baseline_every", "rerank_top",
    "rerank_rounds", "rank_budget", "rank_out", "rank_stream", "rank_cache", "remeasure",
    "rank_seed",
})


def default_path() -> Path:
    return cache_location() / DEFAULT_NAME


def inputs_identity(specs: list[str]) -> list[str]:
    """The ``--input`` values, a file input followed by its content's sha256."""
    identity = []
    for spec in specs:
        match = INPUT_FILE.match(spec)
        if match and os.path.exists(match.group(1)) and not os.path.isfile(match.group(1)):
            raise UsageError(f"--input={spec}: {match.group(1)} is not a regular file "
                             "(a device, FIFO or socket)")
        identity.append(f"{spec}#{file_sha256(match.group(1))}" if match else spec)
    return identity


def measuring_flags(config) -> dict:
    """The options and runtime flags that can change a measurement."""
    options = {name: _plain(value) for name, value in sorted(config.options.items())
               if name not in NOT_MEASURING and name not in ("function", "input")}
    return {"options": options, "runtime_flags": list(config.runtime_flags)}


def _plain(value):
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def key(**fields) -> str:
    """The hex sha256 of ``fields`` (with the cache's version)."""
    text = json.dumps({"version": CACHE_VERSION, **fields}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _is_measurement(data) -> bool:
    try:
        Measurement.from_data(data)
    except (AttributeError, KeyError, TypeError, ValueError):
        return False
    return True


def _trusted(path: Path, info: os.stat_result) -> None:
    """Refuses a cache that is not a regular file, or is another user's: its records
    would be read as this ranking's results (git's safe.directory rule)."""
    if not stat.S_ISREG(info.st_mode):
        raise UsageError(f"--rank_cache={path}: is not a regular file (a device, FIFO or "
                         "socket); give a file, or off")
    if info.st_uid != os.geteuid():
        raise UsageError(f"--rank_cache={path}: is owned by uid {info.st_uid}, not by you: "
                         "its records are not read as results; give a cache of your own")


class RankCache:
    """The cache file: records by key; ``path`` None keeps nothing."""

    def __init__(self, path: str | None, remeasure: bool = False):
        self.path = Path(path) if path else None
        self.remeasure = remeasure
        self.records: dict[str, dict] = {}

    def open(self) -> RankCache:
        """Reads what is there (a missing file is an empty cache)."""
        if self.path is None:
            return self
        folder = self.path.parent
        try:
            if not folder.exists():
                folder.mkdir(mode=0o700, parents=True)
        except OSError as exc:
            raise UsageError(f"--rank_cache={self.path}: cannot make {folder}: "
                             f"{exc.strerror}") from None
        try:
            # Not through a link, not blocking on a FIFO: a shared folder's planted files.
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except FileNotFoundError:
            os.close(self._append())
            return self
        except OSError as exc:
            raise UsageError(f"--rank_cache={self.path}: " + (
                "is a symbolic link (a cache is read and appended to only as a file of your "
                "own)" if os.path.islink(self.path) else f"cannot read: {exc.strerror}")) \
                from None
        with open(fd, encoding="utf-8", errors="replace") as handle:
            _trusted(self.path, os.fstat(fd))
            lines = handle.readlines()
        for number, line in enumerate(lines, 1):
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a line cut short by a kill
            if not isinstance(record, dict) or not isinstance(record.get("key"), str):
                continue
            if "measurement" in record and not _is_measurement(record["measurement"]):
                # Quarantined: one bad line must not fail every later ranking.
                sys.stderr.write(f"ireebench: warning: --rank_cache={printable(self.path)}: line "
                                 f"{number}: not a measurement record; skipped\n")
                continue
            self.records[record["key"]] = record
        os.close(self._append())  # a cache that cannot take a record: said before measuring
        return self

    def _append(self) -> int:
        """The cache open to append (created 0600), checked as :meth:`open` reads it."""
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
                         | os.O_NOFOLLOW | os.O_NONBLOCK, 0o600)
        except OSError as exc:
            raise UsageError(f"--rank_cache={self.path}: cannot write: {exc.strerror}") from None
        try:
            _trusted(self.path, os.fstat(fd))
        except UsageError:
            os.close(fd)
            raise
        return fd

    def get(self, record_key: str) -> dict | None:
        if self.remeasure:
            return None
        return self.records.get(record_key)

    def put(self, record_key: str, record: dict) -> None:
        """Appends one record (flushed, synced) and keeps it."""
        record = {"key": record_key, "time": time.time(), **record}
        self.records[record_key] = record
        if self.path is None:
            return
        line = (json.dumps(record, separators=(",", ":"), default=str) + "\n").encode()
        fd = self._append()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view):]
            with contextlib.suppress(OSError):
                os.fsync(fd)
        except OSError as exc:
            raise UsageError(f"--rank_cache={self.path}: cannot write: {exc.strerror}") from None
        finally:
            os.close(fd)


class Stream:
    """``--rank_stream``: this run's events, one JSON line each, flushed."""

    def __init__(self, path: str | None):
        self._handle = None
        if path:
            try:
                self._handle = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed below
            except OSError as exc:
                raise UsageError(f"--rank_stream={path}: cannot write: {exc.strerror}") \
                    from None

    def write(self, event: str, data: dict) -> None:
        if self._handle is None:
            return
        with contextlib.suppress(OSError):
            self._handle.write(json.dumps({"event": event, **data}, default=str) + "\n")
            self._handle.flush()

    def close(self) -> None:
        if self._handle is not None:
            with contextlib.suppress(OSError):
                self._handle.close()
            self._handle = None
