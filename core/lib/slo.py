"""A library for service-level objectives: ``--goodput``'s SLOs, and a request judged by them.

Goodput (DistServe; vLLM ``bench serve --goodput``, AIPerf) is the number of
requests per second that met **every** SLO given: ``ttft`` (time to first
token), ``tpot`` (time per output token after the first), ``e2e`` (the whole
request). ``--goodput=ttft:200ms,tpot:20ms,e2e:1s`` takes any subset; a
bound is a time with its unit (``us``, ``ms``, ``s``). The ``goodput``
plugin parses the flag once and keeps the SLOs under the documented stash
key :data:`SLOS`; the plugins whose rows are requests (the ``llm`` kind's
generations) read it there and judge each request with :func:`met`, a
request being judged by the SLOs it has a time for (a request without a
first token, a plain query, by ``e2e`` only).
"""

from __future__ import annotations

import re

from ireebench.errors import UsageError
from ireebench.stash import StashKey

NAMES = ("ttft", "tpot", "e2e")
UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0}
# The run's SLOs, seconds by name (``{"ttft": 0.2}``); absent without --goodput.
SLOS = StashKey["dict[str, float]"]()
EXAMPLE = "ttft:200ms,tpot:20ms,e2e:1s"
_BOUND = re.compile(r"^(ttft|tpot|e2e):([0-9]*\.?[0-9]+(?:e[-+]?[0-9]+)?)(us|ms|s)$")


def parse(text: str, flag: str = "--goodput") -> dict[str, float]:
    """``ttft:200ms,e2e:1s`` -> ``{"ttft": 0.2, "e2e": 1.0}``; a bad one is one line."""
    slos: dict[str, float] = {}
    for part in text.split(","):
        found = _BOUND.match(part.strip())
        if found is None:
            raise UsageError(f"{flag}={text}: expected NAME:TIME[,NAME:TIME...] with NAME one "
                             f"of {', '.join(NAMES)} and TIME in us, ms or s (e.g. {EXAMPLE})")
        name, value, unit = found.groups()
        if name in slos:
            raise UsageError(f"{flag}={text}: {name} is given twice")
        seconds = float(value) * UNITS[unit]
        if not seconds > 0:
            raise UsageError(f"{flag}={text}: {name} must be above 0")
        slos[name] = seconds
    return slos


def met(times: dict[str, float], slos: dict[str, float]) -> bool:
    """Whether a request with ``times`` (seconds by name) met every SLO it has a time for."""
    return all(times[name] <= bound for name, bound in slos.items() if name in times)


def describe(slos: dict[str, float]) -> str:
    """``goodput: ttft <= 200 ms, e2e <= 1000 ms``: what a row's goodput counted."""
    return "goodput: " + ", ".join(f"{name} <= {bound * 1e3:g} ms" for name, bound in slos.items())


__all__ = ["EXAMPLE", "NAMES", "SLOS", "describe", "met", "parse"]
