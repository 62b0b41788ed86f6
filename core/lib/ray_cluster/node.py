"""What runs on a node of the Ray cluster: its identity, and one point's measurement.

Both run in a Ray worker process of the node (imported there by reference:
the node must have ireebench installed, as the driver's identity check
says). A point is measured exactly as on the driver's machine: by
``python -m ireebench`` with the point's own command line
(``--point_index``, see :mod:`ireebench.points`), in the node's Python, with
its plugins and ireebench's worker, its JSON report read from stdout. The
files it needs arrive through the object store, each checked by sha256
(:mod:`.shipping`), in a private directory that is removed afterwards (or,
the task killed first, by the next task on the node: :mod:`ireebench.scratch`).

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
import os
import signal
import socket
import subprocess
import sys
import time

import ray
from ireebench.executor import POINT_PROCESS_ENV
from ireebench.scratch import Scratch

from .identity import compared_lines
from .shipping import ARGUMENT, MODULE, NodeFiles

# The environment variable that tells a point's process which node measures it.
NODE_ENV = "IREEBENCH_RAY_NODE_ID"
# A point's folder on its node, which a task killed before its cleanup leaves to the
# next (core/scratch.py).
SCRATCH_PREFIX = "ireebench-ray-"
# How long an interrupted point has to write its report before it is killed.
INTERRUPT_GRACE_SECONDS = 30.0

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
    mine = identity(spec["selection"], spec["environment"])
    result = {key: mine[key] for key in ("node_id", "ip", "host")}
    if mine["error"] or mine["lines"] != spec["identity"]:
        return {**result, "refused": True, "identity": mine}
    scratch = Scratch(SCRATCH_PREFIX)
    root = scratch.path
    try:
        command = list(spec["command"])
        files = NodeFiles(root=os.path.join(root, "mirror"))
        for item, blob in zip(spec["files"], blobs):
            digest = hashlib.sha256(blob).hexdigest()
            if digest != item["sha256"]:
                return {**result, "failure": (
                    f"{item['key']}: the bytes that reached node {result['ip']} are not those "
                    f"sent (sha256 {digest[:12]}, sent {item['sha256'][:12]})")}
            if item["kind"] == ARGUMENT:  # under its driver path: a suite's own paths
                path = files.root + item["key"]
                command[item["position"]] = path
            else:
                path = os.path.join(root, "files", item["sha256"], item["name"])
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as handle:
                handle.write(blob)
            if item["kind"] == MODULE:
                files.modules[item["key"]] = path
            elif item["kind"] != ARGUMENT:
                files.files[item["key"]] = path
        listing = os.path.join(root, "files.json")
        files.dump(listing)
        environment = {**os.environ, **spec["environment"], **POINT_PROCESS_ENV,
                       NODE_ENV: result["node_id"]}
        result["started"] = time.time()
        result.update(_run([sys.executable, "-m", "ireebench", *command,
                            f"--ray_node_files={listing}"], environment, root,
                           spec["timeout"]))
        result["ended"] = time.time()
        return result
    finally:
        scratch.remove()


def _run(command: list[str], environment: dict, folder: str, timeout: float) -> dict:
    """Runs the point's ireebench (dying with this worker), with its timeout."""
    # -I -S: the shim itself needs nothing but the standard library (no site: ~20 ms less).
    proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", _OWN_PROCESS, str(os.getpid()),
                             *command], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=folder, env=environment,
                            start_new_session=True)
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
