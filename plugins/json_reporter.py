"""The JSON reporter (``--benchmark_format=json``): Google Benchmark's JSON, byte for
byte, written by :class:`ireebench.lib.gbench_json.JSONReporter` (its layout is
described there)."""

from __future__ import annotations

from ireebench import hookimpl
from ireebench.lib.gbench_json import JSONReporter


@hookimpl
def ireebench_reporters():
    """Registers the ``json`` reporter (--benchmark_format=json, --reporter=json)."""
    return {"json": JSONReporter}
