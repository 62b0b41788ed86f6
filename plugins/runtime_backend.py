"""The default backend: measure in-process with the IREE Python runtime."""

from ireebench import hookimpl
from ireebench.runner import run_in_process


@hookimpl
def ireebench_backends():
    return {"runtime": run_in_process}
