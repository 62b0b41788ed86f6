"""The candidates of a ranking: files, globs or manifests; ``.mlir`` compiled.

Each argument of ``ireebench rank`` is

* a module (``*.vmfb``) or MLIR (``*.mlir``) file, its id the file's stem;
* a glob (``cands/*.vmfb``, quoted so that ireebench expands it), in sorted
  order; one that matches nothing is an error;
* a manifest, any other file: JSON (a list of ``{"id": ..., "path": ...}``,
  or an object with such a ``"candidates"`` list) or text, one candidate a
  line (``ID PATH``, or ``PATH`` alone; ``#`` starts a comment), paths
  relative to the manifest's folder.

Ids name the candidates' rows (``BM_main/candidate:ID/...``): no ``/``, no
spaces, and each once. A candidate's file that cannot be read is its
``load_failed`` state, not the end of the ranking; ``.mlir`` is compiled
by ``ireebench_resolve_module`` (the ``mlir_modules`` plugin, for the first
device, with ``--compile_flag``), and a file the compiler refuses is its
``compile_failed`` state.
"""

from __future__ import annotations

import functools
import glob
import json
import os
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ireebench import UsageError, call_hook
from ireebench.backend import file_sha256
from ireebench.errors import one_line, printable

from .results import State

MODULE_SUFFIXES = (".vmfb", ".mlir")
# With --replay a candidate is an executable payload (.so, .hsaco, .bin ...): a
# manifest is then a file with one of these suffixes.
MANIFEST_SUFFIXES = (".json", ".txt")
GLOB_CHARACTERS = re.compile(r"[*?[]")
ID = re.compile(r"[^\s/]+")


@dataclass
class Candidate:
    id: str
    path: str  # as given (or found)
    module: str = ""  # the .vmfb measured (compiled from path for .mlir)
    sha256: str = ""
    state: State | None = None  # compile_failed or load_failed before any device
    message: str = ""


def collect(arguments: list[str], payloads: bool = False) -> list[Candidate]:
    """The candidates the arguments name, in order (see the module docstring);
    ``payloads``: executable payloads (``--replay``), any file but a ``.json`` or
    ``.txt`` manifest."""
    if not arguments:
        raise UsageError("rank: no candidates: ireebench rank CANDIDATES... --baseline=BASE "
                         "(files, globs or a manifest)")
    found: list[Candidate] = []
    for argument in arguments:
        if GLOB_CHARACTERS.search(argument) and not os.path.exists(argument):
            matches = sorted(glob.glob(argument))
            if not matches:
                raise UsageError(f"rank: {argument}: no file matches")
            found.extend(Candidate(_stem(path), path) for path in matches)
        elif argument.endswith(MODULE_SUFFIXES) or not os.path.isfile(argument) \
                or (payloads and not argument.endswith(MANIFEST_SUFFIXES)):
            found.append(Candidate(_stem(argument), argument))
        else:
            found.extend(read_manifest(argument))
    seen: dict[str, str] = {}
    for candidate in found:
        refuse_special(candidate.path, f"rank: {candidate.path}")
        # An id is shown on the terminal: ESC or BEL in a file name, escaped as compare does.
        candidate.id = printable(candidate.id)
        if not ID.fullmatch(candidate.id):
            raise UsageError(f"rank: candidate id {candidate.id!r} ({candidate.path}): an id "
                             "has no '/' and no spaces")
        if candidate.id in seen:
            raise UsageError(f"rank: {seen[candidate.id]} and {candidate.path} have the same "
                             f"id {candidate.id!r}; give them ids in a manifest (ID PATH)")
        seen[candidate.id] = candidate.path
    return found


def refuse_special(path: str, shown: str) -> None:
    """A device, a FIFO or a link to one, where a module is read, would be read forever
    (``/dev/zero``) or block (a FIFO no one writes): one line instead."""
    if os.path.exists(path) and not os.path.isfile(path):
        raise UsageError(f"{shown}: is not a regular file (a device, FIFO or socket); "
                         "give a module file")


def _stem(path: str) -> str:
    return Path(path).stem or path


def read_manifest(path: str) -> list[Candidate]:
    """A manifest's candidates (JSON or ``ID PATH`` lines)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or "not UTF-8 text"
        raise UsageError(f"rank: manifest {path}: cannot read: {reason}") from None
    folder = Path(path).parent
    stripped = text.lstrip()
    if stripped.startswith(("[", "{")):
        return _json_manifest(path, text, folder)
    candidates = []
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        if len(fields) > 2:
            raise UsageError(f"rank: manifest {path}: line {number}: expected ID PATH or PATH")
        where = _relative(folder, fields[-1])
        candidates.append(Candidate(fields[0] if len(fields) == 2 else _stem(where), where))
    if not candidates:
        raise UsageError(f"rank: manifest {path}: no candidates")
    return candidates


def _json_manifest(path: str, text: str, folder: Path) -> list[Candidate]:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"rank: manifest {path}: invalid JSON: {one_line(exc)}") from None
    entries = data.get("candidates") if isinstance(data, dict) else data
    if not isinstance(entries, list) or not entries:
        raise UsageError(f"rank: manifest {path}: expected a list of {{\"id\": ..., \"path\": "
                         "...}} (or an object with one as \"candidates\")")
    candidates = []
    for number, entry in enumerate(entries, 1):
        if isinstance(entry, str):
            entry = {"path": entry}
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
            raise UsageError(f"rank: manifest {path}: candidate {number}: expected "
                             "{\"id\": ..., \"path\": ...}")
        where = _relative(folder, entry["path"])
        candidate_id = entry.get("id", _stem(where))
        candidates.append(Candidate(str(candidate_id), where))
    return candidates


def _relative(folder: Path, path: str) -> str:
    return path if os.path.isabs(path) else os.path.normpath(folder / path)


def resolve(config, candidate: Candidate) -> Candidate:
    """The candidate's .vmfb and its sha256: ``.mlir`` compiled (``compile_failed``
    when it does not), an unreadable file ``load_failed``."""
    module = candidate.path
    if candidate.path.endswith(".mlir"):
        try:
            module = call_hook(config.pm, "ireebench_resolve_module", config=config,
                               spec=candidate.path) or candidate.path
        except UsageError as exc:
            candidate.state = State.COMPILE_FAILED
            candidate.message = str(exc).removeprefix(f"--module={candidate.path}: ")
            return candidate
    candidate.module = str(module)
    candidate.sha256 = file_sha256(candidate.module)
    if not candidate.sha256:
        candidate.state = State.LOAD_FAILED
        try:
            with open(candidate.module, "rb"):
                reason = "cannot read it"
        except OSError as exc:
            reason = f"cannot read: {exc.strerror or one_line(exc)}"
        candidate.message = reason
    return candidate


def resolve_all(config, candidates: list[Candidate]) -> None:
    """Each candidate resolved (:func:`resolve`); several ``.mlir`` compile at once, as many
    as the CPUs this process may use (each compile is an ``iree-compile`` process,
    the compile cache writes atomically), in the candidates' order otherwise."""
    compiled = [c for c in candidates if c.path.endswith(".mlir")]
    if len(compiled) > 1:
        workers = min(len(compiled), len(os.sched_getaffinity(0)))
        with ThreadPoolExecutor(workers, thread_name_prefix="iree-compile") as pool:
            for _ in pool.map(functools.partial(resolve, config), compiled):
                pass
    for candidate in candidates:
        if candidate not in compiled or len(compiled) == 1:
            resolve(config, candidate)

