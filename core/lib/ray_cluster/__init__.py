"""A library for measuring on a Ray cluster, shared by ``--executor=ray`` (the
``ray_executor`` plugin) and ``ireebench rank --executor=ray``: the driver
(:mod:`.cluster`, the one that imports Ray), the node's side (:mod:`.node`), a
device's resource (:mod:`.resources`), the files shipped (:mod:`.shipping`) and
the identity a node must share (:mod:`.identity`)."""

import importlib

# The submodules, each imported when first read (`cluster` imports Ray).
__all__ = ["cluster", "identity", "node", "resources", "shipping"]


def __getattr__(name: str):
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return importlib.import_module(f".{name}", __name__)
