"""The devices a ranking runs on, one warm worker each, named as libtuner names them.

``--devices=hip://0,hip://GPU-UUID`` (libtuner's ``--devices``: a
comma-separated list of IREE device URIs, ``cuda://0`` likewise) gives one
worker per device. A CPU device (``local-sync``, ``local-task``) gives
``--cpu_workers=N`` workers, each pinned (``os.sched_setaffinity``) to its
own CPUs: the CPUs this process may use, split into disjoint contiguous
sets in order, or the sets ``--cpu_sets=0-1:2-3`` lists (``taskset -c``
lists, separated by ``:``). Listing a CPU device twice
(``--devices=local-sync,local-sync``) is two workers as well. A
``local-task`` worker's task system is given its CPUs too
(``--task_topology_cpu_ids``), unless the command line sets a topology.

Nothing here touches a device: GPU drivers are initialised only in the
workers (a process that forks after initialising CUDA or HIP cannot use
them in its children), so a device that cannot be created is found by its
worker, and named in one line.

A device's *fingerprint* says which cached results are valid for it
(:mod:`.cache`): the machine (host name, architecture, CPU model), the
driver, and for a GPU its URI, for a CPU worker how many CPUs it has.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import socket
from dataclasses import dataclass

from ireebench import UsageError

CPU_DRIVERS = ("local-sync", "local-task")
TOPOLOGY_FLAG = "--task_topology_"


@dataclass(frozen=True)
class DeviceSpec:
    """One warm worker's device."""

    uri: str  # as given: hip://0, local-sync
    label: str  # unique among the workers: hip://0, local-sync#1
    cpus: tuple[int, ...] = ()  # a CPU worker's CPUs (empty: not pinned)
    # On a Ray cluster (--executor=ray): the resource its worker's actor asks for
    # (iree:local-task, 1 GPU); empty: a worker of this machine.
    resource: str = ""

    @property
    def driver(self) -> str:
        return driver_of(self.uri)

    @property
    def is_cpu(self) -> bool:
        return self.driver in CPU_DRIVERS

    def runtime_flags(self, given: list[str]) -> list[str]:
        """The flags its worker parses before creating the device: a ``local-task``
        worker's topology on its CPUs (unless ``given`` sets a topology)."""
        if self.driver != "local-task" or not self.cpus \
                or any(flag.startswith(TOPOLOGY_FLAG) for flag in given):
            return []
        return [f"--task_topology_cpu_ids={','.join(map(str, self.cpus))}"]

    def to_dict(self) -> dict:
        found = {"label": self.label, "uri": self.uri, "cpus": list(self.cpus),
                 "fingerprint": fingerprint(self)}
        if self.resource:
            found["ray_resource"] = self.resource
        return found


def driver_of(uri: str) -> str:
    return uri.split("://", 1)[0].split(":", 1)[0]


def parse_device_list(text: str) -> list[str]:
    """``hip://0,hip://1`` -> its URIs (libtuner's ``parse_devices``)."""
    uris = [item.strip() for item in text.split(",")]
    if not text.strip() or any(not uri for uri in uris):
        raise UsageError(f"--devices={text}: expected a comma-separated list of devices "
                         "(hip://0,hip://GPU-UUID, cuda://0, local-sync ...)")
    return uris


def parse_cpu_list(text: str, flag: str = "cpu_sets") -> tuple[int, ...]:
    """``0-3,8`` -> (0, 1, 2, 3, 8), as ``taskset -c`` reads a CPU list."""
    cpus: list[int] = []
    for part in text.split(","):
        low, dash, high = part.strip().partition("-")
        try:
            first, last = int(low), int(high if dash else low)
        except ValueError:
            raise UsageError(f"--{flag}={text}: expected CPU lists such as 0-3,8 "
                             "(separated by ':')") from None
        if first < 0 or last < first:
            raise UsageError(f"--{flag}={text}: {part.strip()} is not a CPU range")
        cpus.extend(range(first, last + 1))
    return tuple(sorted(set(cpus)))


def available_cpus() -> list[int]:
    """The CPUs this process may run on."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux: every CPU, unpinned
        return list(range(os.cpu_count() or 1))


def check_devices(uris: list[str], cpu_workers: int, drivers: list[str]) -> None:
    """Every device's driver, on this machine or a cluster."""
    for uri in uris:
        if driver_of(uri) not in drivers:
            raise UsageError(f"--devices={','.join(uris)}: unknown driver {driver_of(uri)!r} "
                             f"(available: {', '.join(drivers)})")


def worker_devices(uris: list[str], cpu_workers: int, cpu_sets: str,
                   drivers: list[str]) -> list[DeviceSpec]:
    """One :class:`DeviceSpec` per warm worker (see the module docstring)."""
    check_devices(uris, cpu_workers, drivers)
    gpus = [uri for uri in uris if driver_of(uri) not in CPU_DRIVERS]
    repeated = sorted({uri for uri in gpus if gpus.count(uri) > 1})
    if repeated:
        raise UsageError(f"--devices={','.join(uris)}: {repeated[0]} is listed twice "
                         "(one worker per device)")
    cpu_uris = [uri for uri in uris if driver_of(uri) in CPU_DRIVERS]
    if cpu_sets and (len(cpu_uris) != 1 or cpu_workers != 1):
        raise UsageError(f"--cpu_sets={cpu_sets}: give one CPU device in --devices (each set "
                         "is one worker of it) and no --cpu_workers")
    groups = iter(_cpu_groups(len(cpu_uris) * cpu_workers, cpu_sets))
    specs, index = [], 0
    for uri in uris:
        if driver_of(uri) not in CPU_DRIVERS:
            specs.append(DeviceSpec(uri, uri))
            continue
        for cpus in groups if cpu_sets else [next(groups) for _ in range(cpu_workers)]:
            specs.append(DeviceSpec(uri, f"{uri}#{index}", cpus))
            index += 1
    return specs


def _cpu_groups(workers: int, cpu_sets: str) -> list[tuple[int, ...]]:
    """The disjoint CPU sets of ``workers`` CPU workers."""
    if workers == 0:
        return []
    available = available_cpus()
    if cpu_sets:
        groups = [parse_cpu_list(item) for item in cpu_sets.split(":")]
        flat = [cpu for group in groups for cpu in group]
        if len(flat) != len(set(flat)):
            raise UsageError(f"--cpu_sets={cpu_sets}: the sets overlap (each worker gets CPUs "
                             "of its own)")
        outside = sorted(set(flat) - set(available))
        if outside:
            raise UsageError(f"--cpu_sets={cpu_sets}: CPU {outside[0]} is not one this process "
                             f"may use ({_cpu_text(available)})")
        return groups
    if workers > len(available):
        raise UsageError(f"{workers} CPU workers need as many CPUs; this process may use "
                         f"{len(available)} ({_cpu_text(available)}): lower --cpu_workers")
    size = len(available) // workers
    return [tuple(available[i * size:(i + 1) * size]) for i in range(workers)]


def _cpu_text(cpus: list[int]) -> str:
    return "CPU " + ",".join(map(str, cpus))


@functools.cache  # read once: every candidate's fingerprint asks
def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "cpu model"):
                    return value.strip()
    except OSError:
        pass
    return platform.processor()


def fingerprint(spec: DeviceSpec) -> str:
    """16 hex digits: which cached measurements this device may reuse.

    A device of a Ray cluster is the resource its worker asks for: the nodes
    that offer a resource are taken to be alike (which is what advertising
    it says), so a rerun reuses what any of them measured."""
    if spec.resource:
        identity = {"ray resource": spec.resource, "driver": spec.driver, "uri": spec.uri}
    else:
        identity = {"host": socket.gethostname(), "machine": platform.machine(),
                    "cpu": _cpu_model(), "driver": spec.driver}
        if spec.is_cpu:
            identity["cpus"] = len(spec.cpus) or len(available_cpus())
        else:
            identity["uri"] = spec.uri
    text = json.dumps(identity, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
