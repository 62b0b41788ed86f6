"""The machine a row was measured on, and its fingerprint: which rows may be compared.

Times measured on two machines (or two devices of one) differ for reasons
no statistic can separate from a change of the code, so a results store
compares a row only with stored rows of the same fingerprint (unless asked
otherwise). The fingerprint is a hash of what Google Benchmark's and
ireebench's context say of the machine:

* the machine's name: the ``--benchmark_context`` entry ``machine`` when
  there is one (the runners of one CI pool share it), else ``host_name``;
* ``num_cpus``;
* the HAL devices (``iree_devices``, ireebench's provenance), as given.

Nothing that varies between two runs of one machine (load, date, clock
scaling) is part of it.

A report's context describes the run as a whole; in a run of several
points (a sweep or a suite) each row also carries the keys of its own
point (:data:`ROW_KEYS`: its devices, its module and the module's sha256),
which override the context's for that row. :func:`row_context` is the one
place that overlays them: every reader that asks on which machine, devices
or module a row was measured (the store's fingerprint per row, ``history``,
the gate's baselines, the report) asks it.
"""

from __future__ import annotations

import json

# The --benchmark_context entry that names the machine instead of its host name.
MACHINE_TAG = "machine"

# The context keys a row may carry for itself (those of its point, in a run of
# several points), with the context keys' meaning: a row's value wins over the
# context's. ``host_name`` is for a backend whose points run on other hosts.
ROW_KEYS = ("iree_devices", "iree_module", "iree_module_sha256", "host_name")


def row_context(context: dict, row: dict | None = None) -> dict:
    """The context of one row: the report's ``context`` overlaid by the row's own
    :data:`ROW_KEYS` (a row of a plain run has none: the context as it is)."""
    if not row:
        return context
    own = {key: row[key] for key in ROW_KEYS if key in row}
    return {**context, **own} if own else context


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
    """16 hex digits identifying the machine and devices of a context (a report's,
    or a row's: :func:`row_context`)."""
    identity = json.dumps(machine_identity(context), sort_keys=True)
    import hashlib
    return hashlib.sha256(identity.encode()).hexdigest()[:16]


def row_fingerprint(context: dict, row: dict | None = None) -> str:
    """The fingerprint of the machine and devices one row was measured on."""
    return machine_fingerprint(row_context(context, row))


def describe_machine(context: dict) -> str:
    """``host (2 CPUs, local-task)``, for messages and tables."""
    identity = machine_identity(context)
    devices = ", ".join(identity["devices"]) or "no device recorded"
    cpus = identity["num_cpus"]
    return f"{identity['machine'] or '?'} ({cpus if cpus is not None else '?'} CPUs, {devices})"


def devices_of(context: dict) -> list[str]:
    """The HAL devices of a context (a row's: :func:`row_context`), as given."""
    return _devices(context)


def combined_provenance(contexts: list[dict]) -> tuple[list[str], list[dict]]:
    """``(devices, modules)`` of a run made of parts (a sweep's points, the shards
    ``ireebench merge`` joins): every part's devices and modules
    (``{"path", "sha256"}``: its ``iree_modules``, else its ``iree_module``), in
    order, each once."""
    devices: list[str] = []
    modules: list[dict] = []
    for context in contexts:
        devices += [device for device in _devices(context) if device not in devices]
        listed = context.get("iree_modules")
        if not isinstance(listed, list):
            listed = [{"path": context["iree_module"],
                       "sha256": context.get("iree_module_sha256", "")}] \
                if context.get("iree_module") else []
        modules += [module for module in listed if module not in modules]
    return devices, modules
