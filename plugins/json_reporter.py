"""JSON reporter (placeholder until issue 3 lands)."""

from ireebench import hookimpl


@hookimpl
def ireebench_reporters():
    return {}
