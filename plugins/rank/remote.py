"""``ireebench rank --executor=ray``: each device's warm worker on a node of a Ray cluster.

The ranking (:class:`~.schedule.Ranker`) stays on the driver; each
``--devices`` device's warm worker is a long-lived Ray actor
(:class:`ireebench.lib.ray_cluster.node.ProcessActor`) asking for the
device's resource as a point's task does (:func:`request_for`) and holding it
for the whole ranking. In it runs ``ireebench rank ... --rank_serve``
(:mod:`.serve`) as a process of its own; :class:`RayWorker` is the ranking's
handle of it, a :class:`~.worker.WorkerHandle` like a forked worker's, whose
relay thread fills a local pipe from the actor. Modules are shipped to an
actor the first time it needs them (for that call only, not kept in the
object store). A worker lost with its node is told apart from a crash: its
candidate is measured again within ``--ray_retries``
(:mod:`.losses`). Why, and what travels: docs/fleet.md, "A ranking".

This module imports Ray at its top: the schedule imports it only for
``--executor=ray`` (``LAZY_IMPORTS`` in tests/core/test_imports.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections import deque

import ray
from ireebench import UsageError
from ireebench.lib.channel import describe_death, encode_error, encode_message
from ireebench.lib.ray_cluster import cluster
from ireebench.lib.ray_cluster.identity import driver_identity, forwarded_environment
from ireebench.lib.ray_cluster.node import ProcessActor
from ireebench.lib.ray_cluster.resources import (
    GPU_DRIVERS,
    Request,
    device_request,
    explicit_request,
)
from ireebench.lib.ray_cluster.shipping import input_files

from .devices import CPU_DRIVERS, DeviceSpec, check_devices, driver_of
from .worker import STOP_SECONDS, WorkerHandle, stop_or_kill

# How long a receive waits on the node for the worker's next bytes (the relay's
# round trip: a reply reaches the driver as soon as it is written, this is only
# how often an idle worker is asked again).
RELAY_SECONDS = 0.5
# The actor's threads: a receive that waits, a send, a kill, a put at once.
ACTOR_THREADS = 4
# How long the ranking's end waits for its actors' shutdown (their workers killed, their
# folders removed); one that has not answered by then is killed, its folder left to the
# node's next (an actor of a node that died without Ray knowing it yet never answers).
SHUTDOWN_SECONDS = 5.0
SCRATCH_PREFIX = "ireebench-rank-"  # a node's folder for a ranking's actor (core/_scratch.py)


# --- the devices ------------------------------------------------------------------


def request_for(uri: str, explicit: list[str]) -> Request:
    """What one device's actor asks for: ``--ray_resource`` if given, else one GPU for
    a CUDA or HIP device, else one of ``iree:<device>``."""
    return explicit_request(explicit) if explicit else device_request([uri])


def node_uri(uri: str) -> str:
    """The device its worker opens on the node: a GPU is the one Ray gave the actor (it
    sets the visible devices), so ``hip://1`` is ``hip`` there."""
    return driver_of(uri) if driver_of(uri) in GPU_DRIVERS else uri


def ray_devices(uris: list[str], cpu_workers: int, cpu_sets: str, drivers: list[str],
                explicit: list[str]) -> list[DeviceSpec]:
    """One :class:`DeviceSpec` per actor: each GPU device, ``--cpu_workers`` of each CPU
    device (unpinned: the node's resource says how many measure there at once)."""
    if cpu_sets:
        raise UsageError(f"--cpu_sets={cpu_sets}: with --executor=ray a CPU worker has the "
                         "CPUs of its node (which measures one candidate at a time per unit "
                         "of its iree:<device> resource)")
    check_devices(uris, cpu_workers, drivers)
    specs, index = [], 0
    for position, uri in enumerate(uris):
        resource = request_for(uri, explicit).describe()
        if driver_of(uri) not in CPU_DRIVERS:
            label = uri if uris.count(uri) == 1 else f"{uri}#{position}"
            specs.append(DeviceSpec(uri, label, resource=resource))
            continue
        for _ in range(cpu_workers):
            specs.append(DeviceSpec(uri, f"{uri}#{index}", resource=resource))
            index += 1
    return specs


# --- on the driver ------------------------------------------------------------------


class RayWorkers:
    """The ranking's actors on the cluster, one per device; :meth:`start` gives the
    handle of a new warm worker (the device's actor's, or a new actor's)."""

    def __init__(self, config, selection: list[str], devices: list[DeviceSpec]):
        self.config = config
        self.devices = devices
        self.address = str(config.getoption("ray_address") or "")
        self.retries = int(config.getoption("ray_retries"))
        self.explicit = list(config.getoption("ray_resource") or [])
        self.messages: deque = deque()
        self.actors: dict[str, object] = {}  # device label -> its actor
        self.made = 0  # actors made so far (each one's number: its modules' key)
        self.numbers: dict[str, int] = {}  # device label -> its actor's number
        self.modules: dict[tuple, str] = {}  # (actor number, sha256) -> the path there
        self.files: list[dict] = []
        self.file_refs: list = []
        # What a node must share with this driver (checked when a worker starts there).
        self.common = {"selection": selection, "environment": forwarded_environment(config),
                       "identity": driver_identity(config)}
        # The ranking's command line, for the worker there to configure as here (its
        # candidates too, which --rank_serve never reads; its outputs it leaves alone).
        self.command = list(config.argv)
        self.connected = False

    def open(self) -> RayWorkers:
        """Joins the cluster; one line if it cannot hold every device at once."""
        cluster.connect(self.address, self.messages)
        self.connected = True
        try:
            nodes = cluster.live_nodes()
            self._check_capacity(nodes)
            # Every node that could hold a device says who it is: one that differs is one
            # line now (a node that joins later is checked when a worker starts there).
            cluster.probe(self.config, nodes, {spec.label: request_for(spec.uri, self.explicit)
                                               for spec in self.devices},
                          **self.common)
            for item in input_files(self.config):
                self.files.append({"key": item.key, "name": item.name, "sha256": item.sha256})
                self.file_refs.append(ray.put(item.data))
        except BaseException:
            self.close()
            raise
        described = ", ".join(f"{spec.label} ({spec.resource})" for spec in self.devices)
        self.config.stderr.write(f"ireebench: ray: rank: {len(self.devices)} warm worker"
                                 f"{'s' if len(self.devices) != 1 else ''} on the cluster at "
                                 f"{self.address}: {described}\n")
        return self

    def _check_capacity(self, nodes: list[dict]) -> None:
        wanted: dict[str, float] = {}
        for spec in self.devices:
            for name, amount in request_for(spec.uri, self.explicit).needs().items():
                wanted[name] = wanted.get(name, 0) + amount
        for name, amount in sorted(wanted.items()):
            total = sum(entry.get("Resources", {}).get(name, 0) for entry in nodes)
            if total >= amount:
                continue
            example = "--num-gpus=1" if name == "GPU" else \
                f"--resources='{json.dumps({name: 1})}'"
            raise UsageError(
                f"--devices={','.join(spec.uri for spec in self.devices)}: with "
                f"--executor=ray each worker holds its device for the whole ranking: they ask "
                f"for {amount:g} of {name}, the cluster at {self.address} offers {total:g} "
                f"(a node offers one with ray start {example}; it offers: "
                f"{cluster.offered(nodes)})")

    def say(self) -> None:
        """The cluster's messages (a node marked dead) on stderr."""
        cluster.say(self.config, self.messages)

    def _actor(self, spec: DeviceSpec):
        actor = self.actors.get(spec.label)
        if actor is None:
            request = request_for(spec.uri, self.explicit)
            self.made += 1
            actor = ray.remote(ProcessActor).options(
                num_cpus=0, num_gpus=request.num_gpus, resources=dict(request.resources),
                max_restarts=0, max_concurrency=ACTOR_THREADS,
                name=f"ireebench rank {spec.label} ({os.getpid()}.{self.made})").remote(
                SCRATCH_PREFIX)
            self.actors[spec.label] = actor
            self.numbers[spec.label] = self.made
        return actor

    def forget(self, spec: DeviceSpec, actor) -> None:
        """A device's actor that was lost with its node: the next worker is a new one."""
        if self.actors.get(spec.label) is actor:
            del self.actors[spec.label]
        with contextlib.suppress(Exception):
            ray.kill(actor)

    def start(self, spec: DeviceSpec, function: str, baseline, check_outputs: bool,
              metric: str) -> RayWorker:
        actor = self._actor(spec)
        worker = RayWorker(self, spec, actor, self.numbers[spec.label])
        served = {"device": {"uri": node_uri(spec.uri), "label": spec.label},
                  "function": function, "check_outputs": check_outputs, "metric": metric}
        worker.begin(served, baseline)
        return worker

    def module_on(self, worker: RayWorker, path: str, sha256: str) -> str:
        """The path on ``worker``'s node of the module at ``path`` here (shipped once to
        each actor). The bytes are the call's argument, which Ray puts into the object
        store for the call only: a tuner's thousands of modules are not all kept there."""
        key = (worker.number, sha256)
        found = self.modules.get(key)
        if found is None:
            try:
                with open(path, "rb") as handle:
                    data = handle.read()
            except OSError:  # gone here: the worker there says so (load_failed)
                return path
            found = ray.get(worker.actor.put.remote(sha256, os.path.basename(path), data))
            self.modules[key] = found
        return found

    def close(self) -> None:
        """Every actor shut down (its workers killed, its folder removed) at once, and
        killed; one that has not answered within :data:`SHUTDOWN_SECONDS` leaves its
        folder to the node's next (:mod:`ireebench._scratch`)."""
        actors = list(self.actors.values())
        self.actors.clear()
        if actors:
            with contextlib.suppress(Exception):
                asked = [actor.shutdown.remote() for actor in actors]
                ray.wait(asked, num_returns=len(asked), timeout=SHUTDOWN_SECONDS)
        for actor in actors:
            with contextlib.suppress(Exception):
                ray.kill(actor)
        if self.connected:
            self.say()
            cluster.disconnect()
            self.connected = False


def _loss(exc: BaseException) -> str:
    """Why an actor was lost, in a few words: ``ActorDiedError: The actor died because
    its node has died`` (Ray's first clause; the rest is its internals)."""
    text = " ".join(str(exc).split())
    clause = text.split(": ", 1)[0].split(". ", 1)[0].rstrip(".")
    return f"{type(exc).__name__}: {clause}" if clause else type(exc).__name__


class RayWorker(WorkerHandle):
    """A warm worker on the cluster, as the ranking holds a forked one
    (:class:`.worker.WorkerProcess`): requests out, replies on :attr:`replies` (a
    local pipe its relay thread fills from the node)."""

    def __init__(self, pool: RayWorkers, spec: DeviceSpec, actor, number: int):
        read, self._write = os.pipe()
        os.set_blocking(read, False)
        super().__init__(spec, 0, read)
        self.pool = pool
        self.actor = actor
        self.number = number  # its actor's (RayWorkers.made)
        self.generation = 0
        self._text: deque = deque()
        self.failure = ""  # why a request could not reach it (it was killed)
        self._closed = threading.Event()

    def begin(self, served: dict, baseline) -> None:
        """Starts the worker on the node (asynchronously: Ray places the actor) and the
        relay that brings its replies here."""
        self._served = served
        self._baseline = baseline
        self._thread = threading.Thread(target=self._relay, daemon=True,
                                        name=f"ireebench rank relay {self.spec.label}")
        self._thread.start()

    def _frame(self, kind: str, *args) -> None:
        os.write(self._write, encode_message(kind, *args))

    def _relay(self) -> None:
        try:
            try:
                baseline = dict(self._baseline.to_data())
                baseline["path"] = self.pool.module_on(self, baseline["path"],
                                                       baseline["sha256"])
                started = ray.get(self.actor.start.remote(
                    self.pool.common, ["rank", *self.pool.command], "--rank_serve",
                    {**self._served, "baseline": baseline}, self.pool.files,
                    *self.pool.file_refs))
            except UsageError as exc:  # a file changed on its way
                self._frame("failed", encode_error(exc))
                return
            self.where = {"host_name": started["host"], "ray_node_id": started["node_id"]}
            if started.get("refused"):
                self._frame("failed", encode_error(cluster.refusal(started,
                                                                   self.pool.common["identity"])))
                return
            self.generation = started["generation"]
            while not self._closed.is_set():
                reply = ray.get(self.actor.receive.remote(self.generation, RELAY_SECONDS))
                if reply["text"]:
                    self._text.append(reply["text"])
                if reply["data"]:
                    os.write(self._write, reply["data"])
                if reply["ended"]:
                    self.wait_status = reply["status"]
                    return
        except ray.exceptions.RayActorError as exc:
            self.lost = _loss(exc)
        except ray.exceptions.RayTaskError as exc:  # the actor's own code failed: an error
            cause = getattr(exc, "cause", None)     # of the ranking, not a lost node
            with contextlib.suppress(OSError):
                self._frame("error" if self.generation else "failed",
                            encode_error(cause if isinstance(cause, Exception) else exc))
        except OSError:  # the ranking closed its end: it is done with this worker
            pass
        except Exception as exc:  # noqa: BLE001 - Ray's other errors: the worker is gone
            self.lost = _loss(exc)
        finally:
            if self.generation and self.wait_status is None and not self.lost:
                with contextlib.suppress(Exception):  # done with before its end was read
                    self.actor.discard.remote(self.generation)
            with contextlib.suppress(OSError):
                os.close(self._write)

    def send(self, kind: str, *args) -> bool:
        """One request; False when the worker (or its node) is gone. The modules its jobs
        name are shipped to its node first."""
        try:
            if kind == "measure":
                args = (self._on_node(args[0]), *args[1:])
            elif kind == "rerank":
                args = ([self._on_node(job) for job in args[0]], *args[1:])
            return bool(ray.get(self.actor.send.remote(self.generation,
                                                       encode_message(kind, *args))))
        except ray.exceptions.RayActorError as exc:  # its node died: read as its loss
            self.lost = self.lost or _loss(exc)
            return False
        except Exception as exc:  # noqa: BLE001 - the request did not reach it: its end
            self.failure = f"could not be sent its request: {_loss(exc)}"
            self.kill()
            return False

    def _on_node(self, job: dict) -> dict:
        return {**job, "path": self.pool.module_on(self, job["path"], job["sha256"])}

    def receive(self) -> list:
        """The messages that have arrived; sets ``ended`` at the end."""
        while self._text:
            text = self._text.popleft()
            with contextlib.suppress(Exception):
                self.pool.config.stderr.write(text)
        self.pool.say()
        return super().receive()

    def kill(self) -> None:
        """Kills its process on the node; an actor that does not answer was lost with its
        node (a candidate "hanging" there is then not the candidate's doing)."""
        if not self.generation:
            return
        try:
            ray.get(self.actor.kill.remote(self.generation), timeout=STOP_SECONDS)
        except (ray.exceptions.RayActorError, ray.exceptions.GetTimeoutError) as exc:
            self.lost = self.lost or _loss(exc)
        except Exception:  # noqa: BLE001, S110 - Ray's other errors: gone already
            pass

    def reap(self) -> int:
        return self.wait_status if self.wait_status is not None else 0

    def death(self) -> str:
        where = self.where.get("host_name", "")
        if self.lost:
            return f"was lost with its node{f' ({where})' if where else ''}: {self.lost}"
        return self.failure or describe_death(self.reap())

    def close(self, stop: bool = True) -> None:
        """Asks an idle worker to stop (killed if it has not within
        :data:`STOP_SECONDS`), or kills it; the device's actor stays (but one lost with
        its node, or one whose worker never started). Once: a second call does nothing
        (its descriptor may be another's)."""
        if self._closed.is_set():
            return
        if stop and not self.ended and not self.lost:
            stop_or_kill(self)
        elif not self.lost:
            self.kill()
        self._closed.set()
        with contextlib.suppress(OSError):
            os.close(self.replies)
        if not self.generation:
            # Never started (Ray had no node to put its actor on, in place of one lost):
            # the actor goes now, before the ranking's end frees a device for it to
            # start on, with nothing to do there.
            self.pool.forget(self.spec, self.actor)
        # Its relay's last answer says whether the actor is gone (then the device's next
        # worker is a new actor, not this dead one).
        self._thread.join(timeout=RELAY_SECONDS + STOP_SECONDS)
        if self.lost:
            self.pool.forget(self.spec, self.actor)
