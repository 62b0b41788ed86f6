"""What a point asks of a Ray cluster: the resource of its device.

One measurement holds a device at a time, so each point's task asks for its
device, and Ray runs it only on a node that has that device free:

* a CUDA or HIP device (``--device=cuda``, ``hip``): ``num_gpus`` (one per
  such device of the point); Ray gives the task its GPUs and sets
  ``CUDA_VISIBLE_DEVICES`` (``ROCR_VISIBLE_DEVICES``/``HIP_VISIBLE_DEVICES``),
  so the point's ``cuda`` is the GPU Ray chose. ``cuda://1`` would name a
  GPU the task was not given: refused, unless the point asks for two;
* any other device: the custom resource ``iree:<device>``
  (``iree:local-task``, ``iree:vulkan``), which a node advertises with
  ``ray start --resources='{"iree:local-task": 1}'`` (one: one measurement
  at a time on it);
* ``--ray_resource=NAME[=AMOUNT]`` instead (repeatable, per point: an
  ``{AXIS}`` of a sweep): what a node advertises for a board or phone it
  drives (``board:pixel8``), or anything else the point needs.

Each task asks for no CPU: the device is what it holds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ireebench._session import device_uris, driver_of
from ireebench.errors import UsageError

# Drivers whose devices Ray knows as GPUs (it sets their visible devices).
GPU_DRIVERS = ("cuda", "hip", "rocm")
PREFIX = "iree:"


@dataclass(frozen=True)
class Request:
    """What one point's task asks for."""

    num_gpus: int = 0
    resources: dict = field(default_factory=dict)  # custom resource -> amount

    def describe(self) -> str:
        """``iree:local-task``, ``2 GPUs``, ``board:pixel8 and 1 GPU``."""
        parts = [name if amount == 1 else f"{name}={amount:g}"
                 for name, amount in sorted(self.resources.items())]
        if self.num_gpus:
            parts.append(f"{self.num_gpus} GPU{'s' if self.num_gpus > 1 else ''}")
        return " and ".join(parts) or "nothing"

    def needs(self) -> dict:
        """Resource name (``GPU`` for GPUs, as Ray counts them) -> amount."""
        wanted = dict(self.resources)
        if self.num_gpus:
            wanted["GPU"] = float(self.num_gpus)
        return wanted

    def fits(self, offered: dict) -> bool:
        """Does a node offering ``offered`` (its total resources) have room for it?"""
        return all(offered.get(name, 0) >= amount for name, amount in self.needs().items())


def parse_resource(text: str) -> tuple[str, float]:
    """``board:pixel8`` -> (``board:pixel8``, 1.0); ``iree:vulkan=0.5`` -> 0.5."""
    name, sep, amount = str(text).partition("=")
    name = name.strip()
    if not name:
        raise UsageError(f"--ray_resource={text}: expected NAME or NAME=AMOUNT")
    if not sep:
        return name, 1.0
    try:
        value = float(amount)
        if not 0 < value < math.inf:
            raise ValueError
    except ValueError:
        raise UsageError(f"--ray_resource={text}: the amount must be a positive number") \
            from None
    return name, value


def _gpu_index(uri: str) -> str:
    """``cuda://1`` -> ``1``; ``cuda`` -> ``""``."""
    return uri.split("://", 1)[1].strip("/") if "://" in uri else ""


def explicit_request(texts: list[str], where: str = "") -> Request:
    """The :class:`Request` of ``--ray_resource`` values (``GPU=2`` counts GPUs)."""
    resources: dict[str, float] = {}
    gpus = 0
    for text in texts:
        name, amount = parse_resource(text)
        if name == "GPU":
            if amount != int(amount):
                raise UsageError(f"--ray_resource={text}{where}: GPUs are counted whole")
            gpus += int(amount)
        else:
            resources[name] = resources.get(name, 0) + amount
    return Request(gpus, resources)


def request_of(config, label: str = "") -> Request:
    """The :class:`Request` of a point (its config), or one line saying why none fits."""
    where = f" (point {label})" if label else ""
    explicit = list(config.getoption("ray_resource") or [])
    if explicit:
        return explicit_request(explicit, where)
    devices = device_uris(config)
    gpus = [uri for uri in devices if driver_of(uri) in GPU_DRIVERS]
    for uri in gpus:
        index = _gpu_index(uri)
        if index and not (index.isdigit() and int(index) < len(gpus)):
            raise UsageError(
                f"--device={uri}{where}: with --executor=ray, Ray chooses the GPU a point "
                f"runs on (it sets the visible devices): give --device={driver_of(uri)}, or "
                "name a node's device with --ray_resource")
    return device_request(devices)


def device_request(uris: list[str]) -> Request:
    """One GPU per CUDA or HIP device, one of ``iree:<device>`` per other device."""
    resources, gpus = {}, 0
    for uri in uris:
        if driver_of(uri) in GPU_DRIVERS:
            gpus += 1
        else:
            resources[PREFIX + uri] = resources.get(PREFIX + uri, 0) + 1.0
    return Request(gpus, resources)
