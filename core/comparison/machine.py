"""The machine a report was measured on, and its fingerprint: which runs may be compared.

Times measured on two machines (or two devices of one) differ for reasons
no statistic can separate from a change of the code, so a results store
compares a run only with stored runs of the same fingerprint (unless asked
otherwise). The fingerprint is a hash of what Google Benchmark's and
ireebench's context say of the machine:

* the machine's name: the ``--benchmark_context`` entry ``machine`` when
  there is one (the runners of one CI pool share it), else ``host_name``;
* ``num_cpus``;
* the HAL devices (``iree_devices``, ireebench's provenance), as given.

Nothing that varies between two runs of one machine (load, date, clock
scaling) is part of it.
"""

from __future__ import annotations

import hashlib
import json

# The --benchmark_context entry that names the machine instead of its host name.
MACHINE_TAG = "machine"


def _devices(context: dict) -> list[str]:
    devices = context.get("iree_devices") or []
    if isinstance(devices, str):
        devices = [devices]
    return [str(device) for device in devices]


def machine_identity(context: dict) -> dict:
    """What the fingerprint hashes (see the module docstring)."""
    name = context.get(MACHINE_TAG) or context.get("host_name") or ""
    return {"machine": str(name), "num_cpus": context.get("num_cpus"),
            "devices": _devices(context)}


def machine_fingerprint(context: dict) -> str:
    """16 hex digits identifying the machine and devices of a report's context."""
    identity = json.dumps(machine_identity(context), sort_keys=True)
    return hashlib.sha256(identity.encode()).hexdigest()[:16]


def describe_machine(context: dict) -> str:
    """``host (2 CPUs, local-task)``, for messages and tables."""
    identity = machine_identity(context)
    devices = ", ".join(identity["devices"]) or "no device recorded"
    cpus = identity["num_cpus"]
    return f"{identity['machine'] or '?'} ({cpus if cpus is not None else '?'} CPUs, {devices})"
