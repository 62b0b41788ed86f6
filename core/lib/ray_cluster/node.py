"""What runs on a node of the Ray cluster: its identity, and one point's measurement.

Both run in a Ray worker process of the node (imported there by reference:
the node must have ireebench installed, as the driver's identity check
says). A point is measured exactly as on the driver's machine: by
``python -m ireebench`` with the point's own command line
(``--point_index``, see :mod:`ireebench.points`), in the node's Python, with
its plugins and ireebench's worker, its JSON report read from stdout. The
files it needs arrive through the object store, each checked by sha256
(:mod:`.shipping`), in a private directory that is removed afterwards (or,
the task killed first, by the next task on the node: :mod:`ireebench._scratch`).

A point still running after ``--ray_point_timeout`` is interrupted as
Ctrl-C interrupts a local run (SIGINT to its process group: the worker
turns the benchmark that runs into an error row and writes its report);
one that does not end then is killed. The point's process dies with the
task's worker (``PR_SET_PDEATHSIG``), so a cancelled task or a lost
worker leaves nothing measuring.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time

import ray
from ireebench._scratch import Scratch
from ireebench.errors import UsageError
from ireebench.executor import POINT_PROCESS_ENV

from .identity import compared_lines
from .shipping import ARGUMENT, MODULE, NodeFiles

# The environment variable that tells a point's process which node measures it.
NODE_ENV = "IREEBENCH_RAY_NODE_ID"
# A point's folder on its node, which a task killed before its cleanup leaves to the
# next (core/_scratch.py).
SCRATCH_PREFIX = "ireebench-ray-"
# How long an interrupted point has to write its report before it is killed.
INTERRUPT_GRACE_SECONDS = 30.0
# How long an actor's worker that ended (or was killed) has to be reaped.
REAP_SECONDS = 2.0

# Starts the point's ireebench as a process of its own: it dies with this worker
# (the parent-death signal survives the exec; set here, not in a preexec_fn: the
# worker has threads), and SIGINT and SIGTERM reach it (a Ray worker ignores SIGINT,
# and an ignored signal stays ignored across exec: ireebench would never see one).
_OWN_PROCESS = (
    "import ctypes, os, signal, sys\n"
    "ctypes.CDLL(None).prctl(1, int(signal.SIGKILL), 0, 0, 0)\n"
    "if os.getppid() != int(sys.argv[1]):\n"
    "    os._exit(1)\n"
    "for signum in (signal.SIGINT, signal.SIGTERM):\n"
    "    signal.signal(signum, signal.SIG_DFL)\n"
    "signal.pthread_sigmask(signal.SIG_UNBLOCK, (signal.SIGINT, signal.SIGTERM))\n"
    "os.execv(sys.argv[2], sys.argv[2:])\n")

# (plugin selection, environment) -> this node's identity: a worker measures many
# points, and asks once.
_IDENTITIES: dict = {}


@functools.cache
def where() -> dict:
    """This node: its Ray id, address and host name (asked once per worker: Ray finds
    its address by a probe)."""
    context = ray.get_runtime_context()
    return {"node_id": context.get_node_id(), "ip": ray.util.get_node_ip_address(),
            "host": socket.gethostname()}


def identity(selection: list[str], environment: dict) -> dict:
    """This node's versions and plugins as ``ireebench PLUGINS --version`` prints them
    (the run's plugin selection, its ireebench environment), and where it is."""
    key = (tuple(selection), tuple(sorted(environment.items())))
    found = _IDENTITIES.get(key)
    if found is None:
        scratch = Scratch(SCRATCH_PREFIX)
        try:
            proc = subprocess.run([sys.executable, "-m", "ireebench", *selection, "--version"],
                                  capture_output=True, text=True, errors="replace",
                                  env={**os.environ, **environment}, cwd=scratch.path,
                                  stdin=subprocess.DEVNULL, timeout=300, check=False)
        finally:
            scratch.remove()
        errors = [line for line in proc.stderr.splitlines() if line.strip()]
        found = {"lines": compared_lines(proc.stdout.splitlines()),
                 "error": "" if proc.returncode == 0 else
                 (errors[-1] if errors else f"exit status {proc.returncode}")}
        if not found["error"]:
            _IDENTITIES[key] = found
    return {**found, **where()}


def admit(common: dict) -> dict:
    """Where this node is (``node_id``, ``ip``, ``host``); with ``refused`` and its
    identity when its ireebench, IREE runtime or plugins differ from the driver's
    (``common``: the driver's ``selection``, ``environment`` and ``identity``)."""
    mine = identity(common["selection"], common["environment"])
    result = {key: mine[key] for key in ("node_id", "ip", "host")}
    if mine["error"] or mine["lines"] != common["identity"]:
        result.update(refused=True, identity=mine)
    return result


def altered(blob: bytes, sha256: str, key: str, ip: str) -> str:
    """Why a file that reached this node is not the one sent ("" when it is)."""
    digest = hashlib.sha256(blob).hexdigest()
    return "" if digest == sha256 else (f"{key}: the bytes that reached node {ip} are not "
                                        f"those sent (sha256 {digest[:12]}, sent {sha256[:12]})")


def write_file(path: str, blob: bytes) -> None:
    """A shipped file written whole under its name (a reader never sees half of it)."""
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path + ".part", "wb") as handle:
            handle.write(blob)
        os.replace(path + ".part", path)


def own_process(command: list[str], environment: dict, folder: str, **popen):
    """``command`` (ireebench's arguments) as a process of its own that dies with this
    Ray worker (see :data:`_OWN_PROCESS`)."""
    # -I -S: the shim itself needs nothing but the standard library (no site: ~20 ms less).
    return subprocess.Popen([sys.executable, "-I", "-S", "-c", _OWN_PROCESS, str(os.getpid()),
                             sys.executable, "-m", "ireebench", *command], cwd=folder,
                            env=environment, start_new_session=True, **popen)


def _environment(environment: dict, node_id: str) -> dict:
    return {**os.environ, **environment, **POINT_PROCESS_ENV, NODE_ENV: node_id}


def measure_point(spec: dict, *blobs: bytes) -> dict:
    """Measures one point here; see the module docstring.

    :param spec: ``command`` (ireebench's arguments for the point), ``files``
        (what each of ``blobs`` is: kind, key, name, sha256, position),
        ``environment`` (the driver's ireebench variables), ``selection`` and
        ``identity`` (the driver's plugin selection and version lines),
        ``timeout`` (seconds, 0: none).
    :param blobs: the shipped files' bytes (Ray fetched them to this node).
    :return: where it ran, when (``started``, ``ended``: this node's clock),
        and ``stdout``, ``stderr``, ``returncode``, ``timed_out``; or
        ``refused`` (this node's identity differs: nothing was measured) or
        ``failure`` (a file arrived changed).
    """
    result = admit(spec)
    if result.get("refused"):
        return result
    scratch = Scratch(SCRATCH_PREFIX)
    root = scratch.path
    try:
        command = list(spec["command"])
        files = NodeFiles(root=os.path.join(root, "mirror"))
        for item, blob in zip(spec["files"], blobs):
            failure = altered(blob, item["sha256"], item["key"], result["ip"])
            if failure:
                return {**result, "failure": failure}
            if item["kind"] == ARGUMENT:  # under its driver path: a suite's own paths
                path = files.root + item["key"]
                command[item["position"]] = path
            else:
                path = os.path.join(root, "files", item["sha256"], item["name"])
            write_file(path, blob)
            if item["kind"] == MODULE:
                files.modules[item["key"]] = path
            elif item["kind"] != ARGUMENT:
                files.files[item["key"]] = path
        listing = os.path.join(root, "files.json")
        files.dump(listing)
        environment = _environment(spec["environment"], result["node_id"])
        result["started"] = time.time()
        result.update(_run([*command, f"--ray_node_files={listing}"], environment, root,
                           spec["timeout"]))
        result["ended"] = time.time()
        return result
    finally:
        scratch.remove()


def _run(command: list[str], environment: dict, folder: str, timeout: float) -> dict:
    """Runs the point's ireebench (dying with this worker), with its timeout."""
    proc = own_process(command, environment, folder, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    timed_out = False
    try:
        try:
            stdout, stderr = proc.communicate(timeout=timeout or None)
        except subprocess.TimeoutExpired:
            timed_out = True
            _signal(proc, signal.SIGINT)  # as Ctrl-C: the running benchmark an error row
            try:
                stdout, stderr = proc.communicate(timeout=INTERRUPT_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                _signal(proc, signal.SIGKILL)
                stdout, stderr = proc.communicate()
    except BaseException:  # the task cancelled: nothing goes on measuring
        _signal(proc, signal.SIGKILL)
        with contextlib.suppress(Exception):
            proc.wait(timeout=5)
        raise
    return {"stdout": stdout.decode(errors="replace"), "stderr": stderr.decode(errors="replace"),
            "returncode": proc.returncode, "timed_out": timed_out}


def _signal(proc, signum: int) -> None:
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signum)


# --- a long-lived worker on the node -------------------------------------------------


class _Served:
    """One worker process the actor started."""

    def __init__(self, proc: subprocess.Popen, replies: int, log: str):
        self.proc = proc
        self.replies = replies
        self.log = log
        self.read = 0  # how much of its log was passed on


class ProcessActor:
    """A Ray actor holding a device of its node for a whole session (a ranking's), whose
    worker is an ireebench process of its own (:func:`own_process`) answering in the
    frames of :mod:`ireebench.lib.channel` on a pipe: the actor relays those bytes and the
    driver's requests (its stdin), and passes on what the worker writes. Its files (the
    modules, once each, by sha256; the session's ``--input`` and ``--parameters``
    files) live in its folder (:mod:`ireebench._scratch`), removed at :meth:`shutdown`."""

    def __init__(self, scratch_prefix: str):
        self.scratch = Scratch(scratch_prefix)
        self.root = self.scratch.path
        self.modules: dict[str, str] = {}  # sha256 -> the module's file here
        self.served: dict[int, _Served] = {}
        self.generation = 0
        # Its calls run on threads of their own (a receive waits while a send goes
        # through), in no set order: what writes under its folder holds this lock, and
        # nothing writes once it is shut down (a put that came after would make the
        # folder again, its lock file gone: left for good).
        self.lock = threading.Lock()
        self.closed = False

    def _file(self, sha256: str, name: str, blob: bytes) -> str:
        failure = altered(blob, sha256, name, where()["ip"])
        if failure:
            raise UsageError(failure)
        path = os.path.join(self.root, "files", sha256, os.path.basename(name) or "file")
        write_file(path, blob)
        return path

    def _open(self) -> None:
        if self.closed:
            raise RuntimeError("this node's actor of the session is shut down")

    def put(self, sha256: str, name: str, blob: bytes) -> str:
        """A module on this node: its path here."""
        with self.lock:
            self._open()
            if sha256 not in self.modules:
                self.modules[sha256] = self._file(sha256, name, blob)
            return self.modules[sha256]

    def start(self, common: dict, command: list[str], serve_flag: str, spec: dict,
              files: list[dict], *blobs: bytes) -> dict:
        """Starts ``ireebench SELECTION COMMAND SERVE_FLAG=FILE``, FILE holding ``spec``
        with ``files`` (the listing of the shipped ``blobs``: ``--ray_node_files``),
        ``replies_fd`` and ``parent``: where it runs and its generation (after checking
        this node's identity, :func:`admit`), or ``refused``."""
        where = admit(common)
        if where.get("refused"):
            return where
        with self.lock:
            self._open()
            listing = NodeFiles(root=os.path.join(self.root, "mirror"))
            for item, blob in zip(files, blobs):
                listing.files[item["key"]] = self._file(item["sha256"], item["name"], blob)
            self.generation += 1
            generation = self.generation
            listing_path = os.path.join(self.root, f"files-{generation}.json")
            listing.dump(listing_path)
            replies_r, replies_w = os.pipe()
            spec_path = os.path.join(self.root, f"worker-{generation}.json")
            with open(spec_path, "w") as handle:
                json.dump({**spec, "files": listing_path, "replies_fd": replies_w,
                           "parent": os.getpid()}, handle)
            log = os.path.join(self.root, f"worker-{generation}.log")
            with open(log, "wb") as output:
                proc = own_process([*common["selection"], *command, f"{serve_flag}={spec_path}"],
                                   _environment(common["environment"], where["node_id"]),
                                   self.root, stdin=subprocess.PIPE, stdout=output,
                                   stderr=output, pass_fds=(replies_w,))
            os.close(replies_w)
            self.served[generation] = _Served(proc, replies_r, log)
        return {**where, "generation": generation}

    def send(self, generation: int, frame: bytes) -> bool:
        served = self.served.get(generation)
        if served is None:
            return False
        try:
            served.proc.stdin.write(frame)
            served.proc.stdin.flush()
        except (OSError, ValueError):
            return False
        return True

    def receive(self, generation: int, timeout: float) -> dict:
        """The worker's next bytes (waiting up to ``timeout``), what it wrote on its own
        stdout and stderr, and at its end its wait status."""
        served = self.served.get(generation)
        if served is None:
            return {"data": b"", "text": "", "ended": True, "status": 0}
        try:
            ready, _, _ = select.select([served.replies], [], [], timeout)
            data = os.read(served.replies, 1 << 16) if ready else b""
        except (OSError, ValueError):  # discarded meanwhile (another of the actor's threads)
            ready, data = True, b""
        ended = bool(ready) and not data
        status = None
        if ended:
            try:
                served.proc.wait(timeout=REAP_SECONDS)
            except subprocess.TimeoutExpired:
                self.kill(generation)
                served.proc.wait()
            code = served.proc.returncode
            status = -code if code < 0 else code << 8  # as os.waitpid says it
        text = self._log(served)
        if ended:
            self._forget(generation)
        return {"data": data, "text": text, "ended": ended, "status": status}

    @staticmethod
    def _log(served: _Served) -> str:
        try:
            with open(served.log, "rb") as handle:
                handle.seek(served.read)
                chunk = handle.read(1 << 16)
        except OSError:
            return ""
        served.read += len(chunk)
        return chunk.decode(errors="replace")

    def kill(self, generation: int) -> None:
        served = self.served.get(generation)
        if served is not None:
            _signal(served.proc, signal.SIGKILL)

    def discard(self, generation: int) -> None:
        """A worker the driver is done with before its end was read: killed, reaped,
        its pipes closed."""
        served = self.served.get(generation)
        if served is None:
            return
        self.kill(generation)
        with contextlib.suppress(subprocess.TimeoutExpired):
            served.proc.wait(timeout=REAP_SECONDS)
        self._forget(generation)

    def _forget(self, generation: int) -> None:
        served = self.served.pop(generation, None)
        if served is not None:
            with contextlib.suppress(OSError, ValueError):
                served.proc.stdin.close()
            with contextlib.suppress(OSError):
                os.close(served.replies)

    def shutdown(self) -> None:
        with self.lock:
            self.closed = True
            for generation in list(self.served):
                self.kill(generation)
            self.scratch.remove()
