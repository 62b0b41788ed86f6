"""``--executor=ray``: a run's points measured on a Ray cluster, each on a node holding its device.

Every point of the run is a Ray task asking for its device's resource, measured
on its node exactly as a point in a process of its own here (``python -m
ireebench`` with ``--point_index``, the same plugins, its files shipped and
checked by sha256: the library :mod:`ireebench.lib.ray_cluster`). This driver
owns the outputs: rows come back as tasks finish, with ``host_name`` and
``ray_node_id``, and are reported here once. See docs/fleet.md.

Ray is the ``ray`` extra, imported only when a run measures on a cluster:
:func:`run_points` is the one lazy import of
:mod:`ireebench.lib.ray_cluster.cluster`. On a node, ``--ray_node_files``
points every point's module, input and parameter files at the shipped ones.
"""

from __future__ import annotations

import importlib.util

from ireebench import StashKey, hookimpl
from ireebench.backend import EXECUTORS
from ireebench.errors import UsageError
from ireebench.executor import Executor, PointJob, select_executor
from ireebench.lib.ray_cluster.identity import (
    driver_identity,
    forwarded_environment,
    plugin_selection,
)

NAME = "ray"
GROUP = "Ray cluster (--executor=ray)"
INSTALL_HINT = 'pip install "ireebench[ray]"'
DEFAULT_RETRIES = 3
# The flags that only mean something with --executor=ray.
RAY_ONLY = ("ray_retries", "ray_point_timeout", "ray_resource")
# On a node: the files the task shipped for the point (--ray_node_files).
NODE_FILES = StashKey["NodeFiles"]()  # ireebench.lib.ray_cluster.shipping's


@hookimpl
def ireebench_addoption(parser):
    """Adds --ray_address, --ray_retries, --ray_point_timeout, --ray_resource."""
    parser.addoption(
        "--ray_address", "ray_address", default="", group=GROUP, metavar="HOST:PORT",
        envvar="RAY_ADDRESS", show_envvar=True, run_output=True,
        help="The Ray cluster of --executor=ray: its head's address, as `ray start --head` "
             "prints it (run ireebench on a node of the cluster), ray://HOST:10001 (Ray "
             "Client, from elsewhere) or auto (the cluster this machine is a node of, started by this user).")
    parser.addoption(
        "--ray_retries", "ray_retries", type=int, default=DEFAULT_RETRIES, group=GROUP,
        metavar="N", run_output=True, requires=EXECUTORS,
        help="How many times a point whose node (or Ray worker) dies is measured again, on "
             f"another node with its device, before it is an error row (default "
             f"{DEFAULT_RETRIES}).")
    parser.addoption(
        "--ray_point_timeout", "ray_point_timeout", type=float, default=0.0, group=GROUP,
        metavar="SECONDS", run_output=True, requires=EXECUTORS,
        help="A point still running after SECONDS on its node is interrupted there, as "
             "Ctrl-C interrupts a local run: the benchmark it was measuring is an error row "
             "saying it timed out, and its device is free again. 0 (default): no limit.")
    parser.addoption(
        "--ray_resource", "ray_resource", multiple=True, group=GROUP, metavar="NAME[=AMOUNT]",
        per_point=True, run_output=True, requires=EXECUTORS,
        help="The Ray resource a point asks for instead of its device's (iree:<device>, or "
             "GPUs for cuda and hip): a board or phone a node advertises with ray start "
             "--resources='{\"board:pixel8\": 1}'; repeatable; {AXIS} of a sweep per point.")
    parser.addoption(
        "--ray_node_files", "ray_node_files", default="", group=GROUP, hidden=True,
        help="On a node: the files the Ray task shipped for this point (a JSON listing).")


def run_points(config, jobs: list[PointJob]):
    """The ``ray`` executor: the lazy import of the cluster's driver (Ray itself)."""
    from ireebench.lib.ray_cluster import cluster  # the `ray` extra: only on a cluster

    return cluster.run_points(config, jobs, forwarded_environment(config),
                              plugin_selection(config), driver_identity(config))


@hookimpl
def ireebench_executors(config):
    """Provides ``--executor=ray``."""
    return [Executor(NAME, run_points, "each point a task of a Ray cluster, on a node that "
                                       "holds its device (--ray_address; the ray extra)")]


def _given(config, name: str) -> bool:
    value = config.getoption(name)
    spec = config.option_specs.get(name)
    return value not in (None, (), [], "") and (spec is None or value != spec.default)


@hookimpl
def ireebench_configure(config):
    """Checks the Ray flags, the extra and the address of an ``--executor=ray`` run."""
    if config.getoption("ray_node_files"):
        from ireebench.lib.ray_cluster.shipping import NodeFiles
        config.stash[NODE_FILES] = NodeFiles.load(config.getoption("ray_node_files"))
    if select_executor(config).name != NAME:
        for name in RAY_ONLY:
            if _given(config, name):
                raise UsageError(f"--{name}: only for --executor=ray (this run measures "
                                 f"with --executor={select_executor(config).name})")
        return
    if importlib.util.find_spec("ray") is None:
        raise UsageError(f"--executor=ray: needs Ray, the ray extra: {INSTALL_HINT}")
    if not config.getoption("ray_address"):
        raise UsageError("--executor=ray: which Ray cluster? give --ray_address=HOST:PORT (or "
                         "set RAY_ADDRESS): the address `ray start --head` prints")
    if config.getoption("ray_retries") < 0:
        raise UsageError(f"--ray_retries={config.getoption('ray_retries')}: must be 0 or more")
    timeout = config.getoption("ray_point_timeout")
    if not timeout >= 0:
        raise UsageError(f"--ray_point_timeout={timeout:g}: must be 0 (no limit) or more "
                         "seconds")
    objects = [info.name for info in config.pm.infos.values() if info.origin == "python api"]
    if objects:
        raise UsageError(f"--executor=ray: the plugin objects given to the Python API "
                         f"({', '.join(objects)}) cannot run on a node; install them as "
                         "plugins there and name them with -p")


# --- on a node ---------------------------------------------------------------------

@hookimpl(tryfirst=True)
def ireebench_generate_points(config, points):
    """On a node (``--ray_node_files``): every point's module, input and parameter files
    are the ones the task shipped (a plain run's too: its point is the run). First,
    so that the points other plugins derive from them read the shipped files too."""
    files = config.stash.get(NODE_FILES, None)
    if files is None:
        return
    for point in points:
        files.rewrite(point.config.options)
    if not any(point.config is config for point in points):
        files.rewrite(config.options)  # the run's own (the first point's), read at its start
