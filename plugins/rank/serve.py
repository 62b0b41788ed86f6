"""``ireebench rank ... --rank_serve=SPEC``: a warm worker in a process of its own, on a node.

A ranking's warm worker is normally forked from the ranking (:mod:`.worker`).
On a Ray cluster (:mod:`.remote`) the device is on another machine, so the
node starts the worker as a process of its own: ``python -m ireebench
rank`` with the ranking's own command line and ``--rank_serve=SPEC``. It
parses and configures that command line exactly as the ranking did (the
same plugins, flags and runtime flags: a candidate is measured there as it
would be here), then, instead of ranking, serves the warm worker's protocol
(:func:`.worker._serve`: ``measure``, ``rerank``, ``stop``) on its stdin,
answering on the descriptor SPEC names, until its stdin closes.

SPEC (JSON) says what the ranking would have given a forked worker: the
device (``uri``, ``label``), the function, the baseline's job (its module
already on the node), ``check_outputs``, the ranked metric, and the
listing of the files shipped to the node (``--ray_node_files``: the
``--input`` and ``--parameters`` files, found there by the ``ray_executor``
plugin as a point's are). The run's outputs (``--benchmark_out``, the
store, ``--rank_out``, the cache) are the ranking's: here every option that
writes one has its default, as in a point's process, and the run is local.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ireebench.commands import configure
from ireebench.errors import EXIT_FAILED, UsageError
from ireebench.lib.channel import Channel, encode_error

from .devices import DeviceSpec
from .measure import Job
from .results import Ranking
from .settings import derived
from .stash import RANKED_METRIC
from .worker import _serve

# The rank options that only the ranking acts on: their defaults on the node.
RANKING_ONLY = ("rank_out", "rank_stream", "rank_cache", "rank_budget", "remeasure")
# The ray_executor plugin's options that concern the driver (the node's run is local).
DRIVER_ONLY = ("executor", "ray_address", "ray_retries", "ray_point_timeout", "ray_resource")


def load_spec(path: str) -> dict:
    try:
        spec = json.loads(Path(path).read_text())
        missing = [key for key in ("device", "function", "baseline", "replies_fd")
                   if key not in spec]
        if missing:
            raise KeyError(missing[0])
        return spec
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"--rank_serve={path}: not a warm worker's specification: "
                         f"{exc}") from None


def serve(config, invocation) -> Ranking:
    """Configures the ranking's command line for one device and serves it (see the module
    docstring); the worker's exit status."""
    spec = load_spec(config.getoption("rank_serve"))
    device = DeviceSpec(spec["device"]["uri"], spec["device"]["label"])
    baseline = Job.from_data(spec["baseline"])
    reset = {name: option.default for name, option in config.option_specs.items()
             if option.run_output or name in RANKING_ONLY + DRIVER_ONLY}
    config = derived(config, **(reset | {"module": (baseline.path,), "device": (device.uri,),
                                         "function": spec["function"],
                                         "ray_node_files": spec.get("files", "")}))
    replies = int(spec["replies_fd"])
    try:
        config = configure(config, invocation.selection)
    except Exception as exc:  # noqa: BLE001 - told to the ranking, as a worker's "failed"
        Channel(replies).send("failed", encode_error(exc))
        return Ranking(EXIT_FAILED, [])
    config.stash[RANKED_METRIC] = spec.get("metric", "real_time")
    try:
        # The actor that started it (read by it, not here: it may be gone by now).
        status = _serve(config, device, spec["function"], baseline,
                        bool(spec.get("check_outputs")), requests=0, replies=replies,
                        parent=int(spec.get("parent") or os.getppid()),
                        forward_streams=True)
    finally:
        config.release()
    return Ranking(status, [])
