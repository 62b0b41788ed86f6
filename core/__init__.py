"""ireebench: benchmark IREE modules, flag-compatible with iree-benchmark-module.

Python API::

    import ireebench
    result = ireebench.run(["--module=model.vmfb", "--device=local-sync"])
    for run in result.runs:
        print(run.benchmark_name, run.real_time, run.time_unit)

Everything a plugin author needs is importable from here: ``hookimpl``,
``hookspec`` (to declare hooks of your own in ``ireebench_addhooks``) and
``call_hook`` (to call them), the errors, ``StashKey``, the types hooks
receive and return (``Config``, ``CommandConfig``, ``Invocation``,
``FunctionInfo``, ``Workload``, ``InvocationKind``, ``Batch``,
``Backend``, ``Run``, ``Counter``, ``Reporter``, ``ProfilingSink``,
``Statistic``), ``prepare_inputs``/``parse_inputs`` and the signature
helpers (``declared_input_types``, ``parse_tensor_type``,
``element_type``) for a kind that makes its own inputs, and
``module_functions`` for a plugin that looks at a module's signatures,
``stamp_rows`` for a backend with the ``sweeps`` capability (a point's
context entries on each of its rows), ``point_of_row`` for the point a row
of a multi-point run was measured in.
Backend authors find their helpers in :mod:`ireebench.backend`, plugin
tests theirs in :mod:`ireebench.testing`.

This module's ``__all__`` is public, with the modules listed in
``ireebench._public.PUBLIC_MODULES``: a name there changes only after a
minor version of :class:`IreebenchDeprecationWarning` (docs/plugins.md,
"Stability"); every other module is internal.

``import ireebench`` loads neither the IREE runtime nor numpy: the names
whose modules need them (:data:`RUNTIME_NAMES`: the input and signature
helpers, ``element_type``) are imported on first use (PEP 562), like the
runtime itself, which a run imports when it first needs it
(docs/architecture.md, "What a command imports").
"""

from __future__ import annotations

import io
import os

from ._cli import execute
from ._cli.commands import CommandConfig
from ._cli.invocation import Invocation
from ._public import IreebenchDeprecationWarning, deprecated_names, lazy_names
from .backend import Backend
from .config import Config
from .errors import PluginError, UsageError
from .hookcall import call_hook
from .hookspecs import hookimpl, hookspec
from .kinds import Batch, InvocationKind
from .points import point_of_row, stamp_rows
from .profiling import ProfilingSink
from .reporting import Reporter
from .results import Counter, Run, RunResult
from .stash import StashKey
from .stats import Statistic
from .version import __version__
from .workload import FunctionInfo, Workload


def run(argv: list[str], stdout=None, stderr=None, plugins=()) -> RunResult:
    """Runs ireebench with command-line flags and returns a :class:`RunResult`.

    Results are :class:`Run` objects with numbers. Everything the run
    prints goes to ``stdout``/``stderr`` (default: discarded, so a notebook
    stays clean; pass ``sys.stdout`` to see it). ``plugins`` are plugin
    objects or modules registered for this run only (after the built-ins,
    installed plugins and ``--plugin`` ones). User errors raise
    :class:`UsageError`, plugin failures :class:`PluginError`.
    """
    return execute(argv, stdout if stdout is not None else io.StringIO(),
                   stderr if stderr is not None else io.StringIO(), plugins)


def rank(candidates, baseline, *flags: str, stdout=None, stderr=None, plugins=(),
         **options):
    """Ranks candidate modules against ``baseline``: ``ireebench rank`` from Python
    (``baseline=None`` with ``replay=CAPTURE, executable=ID``: payloads by replay).

    ``candidates`` are paths, or one path (``.vmfb``, ``.mlir``, globs, manifests),
    ``flags`` further command-line flags, and each keyword an option
    (``devices="local-sync"``, ``cpu_workers=2``, ``benchmark_min_time="0.02s"``;
    ``True``/``False`` as ``true``/``false``, a list or tuple repeats the flag,
    ``None`` leaves the option out).
    Returns the rank plugin's ``Ranking`` (a :class:`RunResult`: its ``runs``
    are every measurement's rows; ``candidates`` the typed results, best
    first, each with its ``state``). Errors as :func:`run`.
    """
    if isinstance(candidates, (str, os.PathLike)):
        candidates = [candidates]  # one path is one candidate, not its characters
    # None: no --baseline (a ranking by replay, replay=..., has the capture as its baseline).
    given = [] if baseline is None else [f"--baseline={os.fspath(baseline)}"]
    argv = ["rank", *map(os.fspath, candidates), *given, *flags]
    for name, value in options.items():
        if value is None:
            continue  # an option left at its default
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(item, bool):
                item = "true" if item else "false"
            argv.append(f"--{name}={os.fspath(item) if isinstance(item, os.PathLike) else item}")
    return run(argv, stdout, stderr, plugins)


# Public names whose modules import the IREE runtime and numpy: name ->
# ".module:attribute" of this package, imported when first read.
RUNTIME_NAMES = {
    "element_type": ".dtypes:by_name",
    "parse_inputs": ".inputs",
    "prepare_inputs": ".inputs",
    "declared_input_types": ".signature",
    "parse_tensor_type": ".signature",
}
# Public names imported on first use although they need neither: what --help and a
# subcommand never call (a module's functions: its discovery, hashing the file).
DEFERRED_NAMES = {"module_functions": "._discovery"}
__getattr__, __dir__ = lazy_names(__name__, {**RUNTIME_NAMES, **DEFERRED_NAMES})

__all__ = [
    "Backend", "Batch", "CommandConfig", "Config", "Counter", "FunctionInfo", "Invocation",
    "InvocationKind", "IreebenchDeprecationWarning", "PluginError", "ProfilingSink", "Reporter",
    "Run", "RunResult", "StashKey", "Statistic", "UsageError", "Workload", "__version__",
    "call_hook", "declared_input_types", "deprecated_names", "element_type", "hookimpl",
    "hookspec", "lazy_names", "module_functions", "parse_inputs", "parse_tensor_type", "point_of_row", "prepare_inputs",
    "rank", "run", "stamp_rows",
]
