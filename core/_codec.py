"""The JSON form of what crosses a process boundary: rows and their parts.

The worker's channel (:mod:`.worker`) sends a run's rows, context and
results this way, and so do the rank plugin's worker processes and cache:
:func:`encode` makes JSON data of the dataclasses named in :data:`_TYPES`
(tagged by name), dicts and tuples (tagged), :func:`decode` builds them
back. A module of its own, so that a reader of such data imports neither
the worker nor what it forks with.
"""

from __future__ import annotations

import dataclasses
import numbers

from ._context import CacheInfo, Context
from .results import Counter, MemoryResult, Run

# The dataclasses that cross the channel, by name (nothing else is built).
_TYPES = {cls.__name__: cls for cls in (Run, Counter, MemoryResult, Context, CacheInfo)}


def encode(value):
    """``value`` as JSON data: the channel's dataclasses tagged by name, dicts
    and tuples tagged, other objects as their ``str`` (as JSON reports show them)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, (list, tuple)):
        items = [encode(item) for item in value]
        return items if isinstance(value, list) else {"~": "tuple", "v": items}
    if isinstance(value, dict):
        return {"~": "dict", "v": [[encode(k), encode(v)] for k, v in value.items()]}
    for name, cls in _TYPES.items():
        if isinstance(value, cls):
            return {"~": name, "v": {f.name: encode(getattr(value, f.name))
                                     for f in dataclasses.fields(cls)}}
    return str(value)


def decode(data):
    """The inverse of :func:`encode`."""
    if isinstance(data, list):
        return [decode(item) for item in data]
    if not isinstance(data, dict):
        return data
    tag, value = data["~"], data["v"]
    if tag == "tuple":
        return tuple(decode(item) for item in value)
    if tag == "dict":
        return {decode(k): decode(v) for k, v in value}
    return _TYPES[tag](**{name: decode(item) for name, item in value.items()})
