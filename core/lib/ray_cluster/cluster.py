"""The driver's side of ``--executor=ray``: the cluster asked, the points sent, the rows back.

This is the one module that imports Ray at its top; the plugin imports it
only when a run measures on a cluster (``LAZY_IMPORTS`` in
tests/core/test_imports.py). What it does, in order, before anything is
measured (so that each mistake is one line, with nothing printed before):

1. each point's request (:mod:`.resources`), or why its device cannot be
   asked for;
2. the cluster: ``--ray_address`` reached (a closed port is one line, not
   Ray's minute of retries), ``ray.init`` with Ray's start-up noise kept
   off the run's stderr and Ray's signal handlers undone (Ctrl-C and
   SIGTERM stay ireebench's);
3. a live node offering each point's request, else one line naming what
   is missing and what the cluster offers;
4. every node that could run a point is asked who it is
   (:func:`.node.identity`, pinned to that node): one whose ireebench, IREE
   runtime or plugins differ from this driver's is refused, in one line
   naming it;
5. the files of each point put into the object store once
   (:mod:`.shipping`).

Then every point is a task (``num_cpus=0``: the device is what it holds;
named after the point, as ``ray list tasks`` shows it), retried by Ray on
another node when its node or worker dies (``--ray_retries``). Outcomes
stream back with ``ray.wait`` as tasks finish; a point whose retries are
spent, or whose device no live node offers any more, is an outcome with a
failure (its error rows). A node that joined after step 4 and differs is
refused when its first point reaches it. Closing the stream (Ctrl-C, an
error) cancels what is left and disconnects.

Ray's driver prints the cluster's error messages ("node ... marked dead")
on stdout, the report's stream: they are kept out of it and shown as
``ireebench: ray: ...`` lines on stderr.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import signal
import socket
import tempfile
import time
from collections import deque
from dataclasses import dataclass

import ray
import ray._private.worker as ray_worker
from ireebench.errors import UsageError, one_line, printable
from ireebench.executor import PointOutcome
from ireebench.lib.gbench_json import split_benchmark_json
from ray._private.utils import get_ray_address_file
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from . import node, resources, shipping

# How long the address may take to answer a TCP connection before it is refused.
CONNECT_SECONDS = 5.0
# How long every node has to say who it is (its first worker starts).
PROBE_SECONDS = 300.0
# How often the stream looks up (ray.wait's timeout: Ctrl-C is handled between).
POLL_SECONDS = 0.1
# How often the stream checks that each waiting point's device is still offered.
OFFERED_CHECK_SECONDS = 2.0


@dataclass
class Settings:
    """The run's Ray options."""

    address: str
    retries: int
    timeout: float

    @classmethod
    def of(cls, config) -> Settings:
        return cls(str(config.getoption("ray_address") or ""),
                   int(config.getoption("ray_retries")),
                   float(config.getoption("ray_point_timeout") or 0))


def run_points(config, jobs, environment: dict, selection: list[str], identity: list[str]):
    """The outcomes of ``jobs`` measured on the cluster (see the module docstring).

    Everything that can refuse the run does so before this returns; the
    returned iterator measures.
    """
    settings = Settings.of(config)
    requests = {job.index: resources.request_of(job.config, job.label) for job in jobs}
    messages: deque = deque()
    connect(settings.address, messages)
    try:
        nodes = live_nodes()
        _check_offered(settings.address, jobs, requests, nodes)
        probe(config, nodes, requests, selection, environment, identity)
        arguments = shipping.argument_files(config)
        files, objects = {}, {}
        for job in jobs:
            files[job.index] = shipping.point_files(job.config) + arguments
            for item in files[job.index]:
                if item.sha256 not in objects:
                    objects[item.sha256] = ray.put(item.data)
    except BaseException:
        disconnect()
        raise
    config.stderr.write(f"ireebench: ray: {len(jobs)} point{'s' if len(jobs) != 1 else ''} on "
                        f"the cluster at {settings.address}: {_offered_summary(nodes, requests)}"
                        "\n")
    return ClusterRun(config, jobs, requests, files, objects, settings, messages,
                      {"environment": environment, "selection": selection, "identity": identity})


# --- connecting --------------------------------------------------------------------


def _own_cluster(address: str) -> str:
    """``auto`` resolved as Ray would, but only to a cluster this user started: the
    address file Ray's ``ray start`` leaves in its temporary folder is trusted only
    when it is this user's own (another user's file could send the run's modules and
    inputs to their cluster, issue 40), and Ray's fallback, any ``gcs_server`` process
    on the machine whoever runs it, is never taken."""
    if address != "auto":
        return address
    if os.environ.get("RAY_ADDRESS"):
        return os.environ["RAY_ADDRESS"]  # the caller's own environment names it
    path = get_ray_address_file(None)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise UsageError(f"--ray_address=auto: no cluster of yours on this machine ({path} "
                         "is missing): start one with `ray start --head`, or give "
                         "--ray_address=HOST:PORT") from None
    except OSError as exc:
        raise UsageError(f"--ray_address=auto: {path}: {exc.strerror or one_line(exc)}") \
            from None
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(handle.fileno())
        if st.st_uid != os.geteuid():
            raise UsageError(f"--ray_address=auto: {path} belongs to uid {st.st_uid}, not to "
                             "you: ireebench joins no cluster another user started; give "
                             "--ray_address=HOST:PORT")
        found = handle.read(4096).decode(errors="replace").strip()
    if not found:
        raise UsageError(f"--ray_address=auto: {path} names no address")
    return found


def _reachable(address: str) -> None:
    """A closed port is one line now, not Ray's minute of retries."""
    target = address.removeprefix("ray://").rsplit("/", 1)[0]
    host, sep, port = target.rpartition(":")
    if not sep or not port.isdigit():
        raise UsageError(f"--ray_address={address}: expected HOST:PORT (the head node's "
                         "address, which `ray start --head` prints), ray://HOST:PORT or auto")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), CONNECT_SECONDS) as sock:
            answer = _http2_answer(sock)
    except OSError as exc:
        raise UsageError(f"--ray_address={address}: no Ray cluster answers there: "
                         f"{exc.strerror or one_line(exc)}") from None
    if answer is not None:
        # Something listens but is no gRPC server (Ray's GCS and client are): Ray
        # itself would wait on it for a minute or more (issue 40).
        raise UsageError(f"--ray_address={address}: no Ray cluster answers there: the port "
                         f"is open but {answer} (a Ray head speaks gRPC within "
                         f"{CONNECT_SECONDS:g} s)")


# HTTP/2's client preface and an empty SETTINGS frame: a gRPC server answers
# with a SETTINGS frame of its own (type 4), whatever else it does.
HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])


def _http2_answer(sock: socket.socket) -> str | None:
    """None when the peer answers HTTP/2's preface with a SETTINGS frame, else what it
    did instead (said nothing, closed, answered something else)."""
    sock.settimeout(CONNECT_SECONDS)
    try:
        sock.sendall(HTTP2_PREFACE)
        frame = b""
        while len(frame) < 9:
            chunk = sock.recv(9 - len(frame))
            if not chunk:
                return "closed the connection without an answer"
            frame += chunk
    except TimeoutError:
        return f"said nothing within {CONNECT_SECONDS:g} s"
    return None if frame[3] == 4 else "answered something else than gRPC (HTTP/2)"


@contextlib.contextmanager
def _quiet_stderr():
    """Ray's start-up lines (glog warnings from its C++ core) kept off fd 2; what they
    said is given to the error if the start fails."""
    saved = os.dup(2)
    with tempfile.TemporaryFile() as caught:
        os.dup2(caught.fileno(), 2)
        try:
            yield caught
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def connect(address: str, messages: deque) -> None:
    """``ray.init`` on ``address``, quietly, leaving ireebench's signal handlers."""
    address = _own_cluster(address)
    _reachable(address)
    handlers = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        with _quiet_stderr() as caught:
            try:
                ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False,
                         namespace="ireebench")
            except Exception as exc:  # noqa: BLE001 - Ray raises what it likes
                caught.seek(0)
                said = [line for line in caught.read().decode(errors="replace").splitlines()
                        if line.strip()]
                detail = one_line(exc) or (said[-1] if said else type(exc).__name__)
                raise UsageError(f"--ray_address={address}: cannot join the Ray cluster: "
                                 f"{detail}") from None
    finally:
        for signum, handler in handlers.items():
            if handler is not None:
                signal.signal(signum, handler)
    # The cluster's error messages, which Ray prints on stdout: kept for the stream.
    ray_worker.print_to_stdstream = lambda data, ignore_prefix=False: messages.extend(
        data.get("lines") or [])


def disconnect() -> None:
    with contextlib.suppress(Exception):
        ray.shutdown()


# --- the cluster before anything runs -----------------------------------------------


def live_nodes() -> list[dict]:
    return [entry for entry in ray.nodes() if entry.get("Alive")]


def _describe_node(entry: dict) -> str:
    return (f"{entry.get('NodeManagerAddress', '?')} (host {entry.get('NodeManagerHostname', '?')},"
            f" id {str(entry.get('NodeID', ''))[:8]})")


def offered(nodes: list[dict]) -> str:
    names = sorted({name for entry in nodes for name in entry.get("Resources", {})
                    if not name.startswith(("node:", "memory", "object_store_memory"))})
    return ", ".join(names) or "nothing"


def _check_offered(address: str, jobs, requests: dict, nodes: list[dict]) -> None:
    for job in jobs:
        request = requests[job.index]
        if any(request.fits(entry.get("Resources", {})) for entry in nodes):
            continue
        example = json.dumps({name: 1 for name in request.resources} or {"GPU": 1})
        raise UsageError(
            f"--executor=ray: no node of the cluster at {address} offers {request.describe()} "
            f"(point {job.label}); a node offers it with ray start --resources='{example}'"
            f"{' --num-gpus=N' if request.num_gpus else ''} (the cluster offers: "
            f"{offered(nodes)})")


def _offered_summary(nodes: list[dict], requests: dict) -> str:
    wanted = {name for request in requests.values() for name in request.needs()}
    counts = {name: sum(1 for entry in nodes if entry.get("Resources", {}).get(name))
              for name in sorted(wanted)}
    return ", ".join(f"{name} on {count} node{'s' if count != 1 else ''}"
                     for name, count in counts.items()) or "no device asked"


def mismatch(entry: str, mine: list[str], theirs: dict) -> str:
    if theirs.get("error"):
        return (f"--executor=ray: node {entry} cannot run this run's ireebench: "
                f"{theirs['error']} (install ireebench and the run's plugins there)")
    differs = [line.strip() for line in theirs["lines"] if line not in mine]
    missing = [line.strip() for line in mine if line not in theirs["lines"]]
    said = "; ".join(part for part in (
        f"it has {', '.join(differs)}" if differs else "",
        f"this driver has {', '.join(missing)}" if missing else "") if part)
    return (f"--executor=ray: node {entry} runs another ireebench or other plugins ({said}): "
            "install the same ireebench, IREE runtime and plugins on every node")


def refusal(result: dict, identity: list[str]) -> UsageError:
    """A node refused when its task or actor started (:func:`.node.admit`)."""
    entry = f"{result['ip']} (host {result['host']}, id {result['node_id'][:8]})"
    return UsageError(mismatch(entry, identity, result["identity"]))


def probe(config, nodes: list[dict], requests: dict, selection: list[str],
           environment: dict, identity: list[str]) -> None:
    """Every node that could run a point says who it is; one that differs is refused."""
    asked = [entry for entry in nodes
             if any(request.fits(entry.get("Resources", {})) for request in requests.values())]
    probe = ray.remote(node.identity)
    refs = {probe.options(num_cpus=0, max_retries=0, name="ireebench identity",
                          scheduling_strategy=NodeAffinitySchedulingStrategy(
                              entry["NodeID"], soft=False)).remote(selection, environment):
            entry for entry in asked}
    ready, waiting = ray.wait(list(refs), num_returns=len(refs), timeout=PROBE_SECONDS)
    if waiting:
        raise UsageError(f"--executor=ray: node {_describe_node(refs[waiting[0]])} did not say "
                         f"who it is within {PROBE_SECONDS:g} s (is its Ray worker starting?)")
    for ref in ready:
        try:
            theirs = ray.get(ref)
        except ray.exceptions.RayError as exc:
            raise UsageError(f"--executor=ray: node {_describe_node(refs[ref])} cannot run "
                             f"ireebench's tasks: {ray_error(exc)} (install ireebench there)") \
                from None
        if theirs["error"] or theirs["lines"] != identity:
            raise UsageError(mismatch(_describe_node(refs[ref]), identity, theirs))


# --- the run ----------------------------------------------------------------------


def ray_error(exc: BaseException) -> str:
    """A Ray exception in one line: its cause's, where it carries one."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException) and not isinstance(cause, ray.exceptions.RayError):
        return f"{type(cause).__name__}: {one_line(cause)}"
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


class ClusterRun:
    """The points' tasks, submitted at once; their outcomes as they finish (iterate);
    :meth:`close` cancels what is left and leaves the cluster."""

    def __init__(self, config, jobs, requests, files, objects, settings: Settings,
                 messages: deque, common: dict):
        self.config = config
        self.requests = requests
        self.settings = settings
        self.messages = messages
        self.identity = common["identity"]
        self.pending: dict = {}
        self.closed = False
        task = ray.remote(node.measure_point)
        try:
            for job in jobs:
                request = requests[job.index]
                spec = {**common, "command": list(job.command), "timeout": settings.timeout,
                        "files": [{"kind": item.kind, "key": item.key, "name": item.name,
                                   "sha256": item.sha256, "position": item.position}
                                  for item in files[job.index]]}
                ref = task.options(
                    num_cpus=0, num_gpus=request.num_gpus, resources=dict(request.resources),
                    max_retries=settings.retries, retry_exceptions=False,
                    name=f"ireebench {job.label}").remote(
                    spec, *[objects[item.sha256] for item in files[job.index]])
                self.pending[ref] = job
        except BaseException:
            self.close()
            raise

    def __iter__(self):
        checked = time.monotonic()
        while self.pending:
            ready, _ = ray.wait(list(self.pending), num_returns=1, timeout=POLL_SECONDS)
            say(self.config, self.messages)
            for ref in ready:
                job = self.pending.pop(ref)
                yield _outcome(job, ref, self.settings, self.identity)
            if time.monotonic() - checked >= OFFERED_CHECK_SECONDS and self.pending:
                checked = time.monotonic()
                yield from _unoffered(self.pending, self.requests)
        say(self.config, self.messages)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        for ref in self.pending:
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)
        self.pending.clear()
        disconnect()


# Ray's message when a node's health checks failed.
_NODE_DEAD = re.compile(r"The node with node id: (\w+) and address: (\S+).*marked dead")


def say(config, messages: deque) -> None:
    """The cluster's messages Ray received, one line each: a dead node said so, a
    failed task left out (its point's outcome says what became of it), anything
    else by its first sentence."""
    shown = set()
    while messages:
        text = " ".join(str(messages.popleft()).split())
        dead = _NODE_DEAD.search(text)
        if dead:
            line = (f"node {dead.group(2)} (id {dead.group(1)[:8]}) is dead (its health checks "
                    "failed); its points go to other nodes, within --ray_retries")
        elif text.startswith("Task ") and " failed" in text.split(".", 1)[0]:
            continue
        else:
            line = text.split(". ", 1)[0].rstrip(".")
        if line and line not in shown:
            shown.add(line)
            config.stderr.write(f"ireebench: ray: {printable(line)}\n")


def _unoffered(pending: dict, requests: dict):
    """The waiting points whose device no live node offers any more: their failures."""
    nodes = live_nodes()
    for ref, job in list(pending.items()):
        request = requests[job.index]
        if any(request.fits(entry.get("Resources", {})) for entry in nodes):
            continue
        with contextlib.suppress(Exception):
            ray.cancel(ref, force=True)
        del pending[ref]
        yield PointOutcome(job, failure=f"no live node of the Ray cluster offers "
                                        f"{request.describe()} any more")


def _outcome(job, ref, settings: Settings, identity: list[str]) -> PointOutcome:
    try:
        result = ray.get(ref)
    except ray.exceptions.TaskCancelledError:
        return PointOutcome(job, failure="cancelled on the Ray cluster")
    except ray.exceptions.RayTaskError as exc:  # the task's own code raised: not retried
        return PointOutcome(job, failure=f"failed on the Ray cluster: {ray_error(exc)}")
    except ray.exceptions.RayError as exc:  # its node or worker lost, each time
        spent = (f" (and its {settings.retries} retr{'y' if settings.retries == 1 else 'ies'})"
                 if settings.retries else "")
        return PointOutcome(job, failure=f"lost on the Ray cluster{spent}: {ray_error(exc)}")
    where = {"host_name": result["host"], "ray_node_id": result["node_id"]}
    if result.get("refused"):  # a node that joined after the others were asked
        raise refusal(result, identity)
    if result.get("failure"):
        return PointOutcome(job, failure=result["failure"], provenance=where)
    stdout, returncode = result["stdout"], result["returncode"]
    if result.get("timed_out"):
        stdout = _timed_out(stdout, settings.timeout, result["ip"])
        if stdout is None:  # interrupted before it measured anything: its error rows
            return PointOutcome(job, failure=(
                f"timed out: still running after {settings.timeout:g} s on node "
                f"{result['ip']} (--ray_point_timeout), before any of its benchmarks ran"),
                provenance=where)
        returncode = 1
    return PointOutcome(job, stdout, result["stderr"], returncode, provenance=where)


def _timed_out(stdout: str, timeout: float, ip: str) -> str | None:
    """The report of a point interrupted at its timeout: the benchmark it was running
    (an error row, as Ctrl-C makes it) says it timed out. None when the point had no
    report or no row yet: its process was interrupted while it started (loading
    Python, the runtime, its module), which a busy node can make longer than the
    timeout; the point's error rows then say it timed out all the same."""
    report, rest = split_benchmark_json(stdout)
    if report is None or not report.get("benchmarks"):
        return None
    for entry in report["benchmarks"]:
        message = str(entry.get("error_message", ""))
        if entry.get("error_occurred") and message.startswith("interrupted by SIGINT"):
            entry["error_message"] = (f"timed out: still running after {timeout:g} s on node "
                                      f"{ip} (--ray_point_timeout); {message}")
    return json.dumps(report) + ("\n" + rest if rest else "")
