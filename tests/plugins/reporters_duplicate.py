"""Test plugin: registers a reporter under a name the built-ins already use."""

from ireebench import hookimpl
from ireebench.reporting import Reporter


@hookimpl
def ireebench_reporters():
    """Claims ``json``, which the built-in JSON reporter owns."""
    return {"json": Reporter}
