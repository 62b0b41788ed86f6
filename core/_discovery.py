"""Turns the exported functions of the benchmarked module into workloads.

The rules themselves are hooks (``ireebench_classify_function`` and
``ireebench_select_function``); the built-in ones are in
:mod:`ireebench.plugins.kinds` and follow iree-benchmark-module.

This module does not import the runtime: it works on the functions of a
module the session (or :func:`module_functions`) loaded.

A point of a sweep names its workloads after its parameters
(``BM_f/bs:4/process_time/real_time``), and ``--benchmark_filter`` matches
those full names. :func:`planned_run_names` tells the names a point will
report before any device exists (the module loaded without one), so a run
of many points knows them all before it measures the first.
"""

from __future__ import annotations

import os

from . import names
from ._modules import module_images
from .backend import PLUGIN_KINDS, Backend, refusal
from .errors import NOT_FOUND, UsageError
from .hookcall import call_hook, collect_named
from .stash import StashKey
from .workload import FunctionInfo, Workload

MAX_BATCH = 2**31 - 1  # the native tool's int32 batch size

# The functions ``ireebench_select_function`` passed over in the last
# discovery, with their kinds, in export order (``config.stash[SKIPPED]``):
# what a backend can name when nothing is left to benchmark.
SKIPPED = StashKey["list[tuple[FunctionInfo, object]]"]()


def invocation_kinds(config, owners=None) -> dict:
    return collect_named(config.pm, "ireebench_invocation_kinds", "invocation kind",
                         owners=owners, config=config)


def exported_functions(session) -> list[FunctionInfo]:
    module, renamed = session.module, session.renamed_functions[-1]
    return _functions_of(module, renamed)


def _functions_of(module, renamed: dict) -> list[FunctionInfo]:
    return [FunctionInfo.from_vm_function(module.lookup_function(name), renamed.get(name))
            for name in module.function_names]


def point_run_name(config, function: FunctionInfo) -> str:
    """The reported name of ``function`` in this configuration (its point's
    parameters and prefix included): what ``--benchmark_filter`` matches."""
    return names.run_name(function.name, config.params, config.name_prefix)


def module_functions(config) -> list[FunctionInfo]:
    """The exported functions of the benchmarked module (the last --module),
    read without a device (for a plugin that looks at signatures before the
    session opens: ``ireebench_generate_points``).

    The first thing a run asks of the runtime, so the runtime is imported
    here (:mod:`ireebench._session`), not when this module is: listing the
    plugins or reading reports never loads it.
    """
    from . import _session as session  # the runtime: see LAZY_IMPORTS in tests/core/test_imports.py

    module, renamed = session.module_without_device(module_images(config)[-1])
    return _functions_of(module, renamed)


def classify(config, function: FunctionInfo, kinds: dict):
    name = call_hook(config.pm, "ireebench_classify_function", config=config,
                     function=function, kinds=kinds)
    if name not in kinds:
        raise UsageError(f"function {function.name!r}: classified as unknown kind {name!r} "
                         f"(known: {', '.join(sorted(kinds))})")
    return kinds[name]


def discover_workloads(config, session) -> list[Workload]:
    """The workloads to measure, in export order, with their inputs uploaded.

    The functions not selected are recorded in ``config.stash[SKIPPED]``.
    """
    workloads = []
    for function, kind, selected in selected_functions(config, exported_functions(session),
                                                       session.module_path):
        workloads.append(build_workload(config, session, function, kind, selected))
    return workloads


def selected_functions(config, functions: list[FunctionInfo], module_path: str,
                       kinds: dict | None = None) -> list[tuple[FunctionInfo, object, bool]]:
    """``(function, kind, selected)`` for each function this configuration benchmarks.

    ``--function`` (an unknown name is one line), classification, selection,
    then ``--benchmark_filter`` on the point's full name; the functions not
    selected are recorded in ``config.stash[SKIPPED]``.
    """
    kinds = invocation_kinds(config) if kinds is None else kinds
    wanted = config.getoption("function")
    if wanted:
        matches = [f for f in functions if f.name == wanted]
        if not matches:
            public = [f.name for f in functions if not f.name.startswith("__")]
            where = f" (point {config.point_label})" if config.point_label else ""
            raise UsageError(
                f"--function={wanted}{where}: no exported function named {wanted!r} in "
                f"{module_path} (exported: {', '.join(public) or 'none'})",
                status=NOT_FOUND,
            )
        candidates = [(matches[0], True)]
    else:
        candidates = [(f, False) for f in functions]
    found = []
    skipped = config.stash[SKIPPED] = []
    for function, selected in candidates:
        kind = classify(config, function, kinds)
        chosen = call_hook(config.pm, "ireebench_select_function", config=config,
                           function=function, kind=kind, selected=selected)
        if not chosen:
            skipped.append((function, kind))
            continue
        # Filter on the name first: inputs of filtered-out functions are
        # neither parsed nor uploaded.
        if config.selects(point_run_name(config, function)):
            found.append((function, kind, selected))
    return found


def planned_run_names(config, functions: list[FunctionInfo] | None = None) -> list[str]:
    """The names this configuration will report, found without a device.

    The benchmarked module is resolved (an ``x.mlir`` compiled) and loaded
    without a device (or its ``functions`` given, read by the caller with
    :func:`module_functions`), its functions classified and selected as
    :func:`discover_workloads` will; raises the same one-line errors.
    """
    specs = list(config.getoption("module") or [])
    functions = module_functions(config) if functions is None else functions
    return [point_run_name(config, function)
            for function, _, _ in selected_functions(config, functions, specs[-1])]


def unloaded_run_name(config) -> str:
    """The name a configuration whose module cannot be had (not compiled, missing,
    not a module) reports its error under: its ``--function``, else the module
    file's stem (its functions are unknown), with its parameters and prefix."""
    function = config.getoption("function")
    if not function:
        specs = list(config.getoption("module") or []) or ["module"]
        function = os.path.splitext(os.path.basename(specs[-1]))[0] or "module"
    return names.run_name(function, config.params, config.name_prefix)


def build_workload(config, session, function, kind, selected) -> Workload:
    batch, concurrency = kind.batching(
        config.getoption("batch_size"), config.getoption("batch_concurrency")
    )
    if batch > MAX_BATCH:
        raise UsageError(f"--batch_size={config.getoption('batch_size')}: "
                         "rounded batch size is too large")
    workload = Workload(
        name=names.family_name(function.name, config.params, config.name_prefix),
        function=function,
        kind=kind,
        batch_size=batch,
        concurrency=concurrency,
        time_unit=config.getoption("time_unit") or kind.default_time_unit,
        selected=selected,
        params=dict(config.params),
    )
    specs = list(config.getoption("input") or []) if selected else []
    workload.inputs = kind.build_inputs(workload, session, specs)
    return workload


def classify_module_functions(config) -> list[tuple[FunctionInfo, object, str]]:
    """``(function, kind, plugin)`` for each function of the benchmarked module a run
    selects, classified without a device, when some plugin provides a kind the
    native tool does not run by itself (otherwise ``[]``, and nothing is loaded).

    For backends that run what the native tool discovers: they refuse such a
    function in one line instead of leaving it out
    (:func:`ireebench.backend.check_kinds`).
    """
    owners: dict[str, str] = {}
    kinds = invocation_kinds(config, owners)
    if all(kind.native_discovers for kind in kinds.values()):
        return []
    wanted = config.getoption("function")
    found = []
    for function in module_functions(config):
        selected = function.name == wanted
        if wanted and not selected:
            continue
        kind = classify(config, function, kinds)
        chosen = call_hook(config.pm, "ireebench_select_function", config=config,
                           function=function, kind=kind, selected=selected)
        if chosen and config.selects(names.run_name(function.name)):
            found.append((function, kind, owners.get(kind.name, "")))
    return found


def check_kinds(config, backend: Backend) -> None:
    """A backend without ``plugin_kinds`` is refused a function of a plugin's kind.

    Only asked when a plugin provides a kind the native tool does not run by
    itself; then the module's functions are classified (the module loaded
    without a device) and a selected function of such a kind is one line.
    """
    if backend.has(PLUGIN_KINDS):
        return
    for function, kind, owner in classify_module_functions(config):
        if kind.native_discovers:
            continue
        raise UsageError(
            f"--backend={backend.name}: cannot run {names.family_name(function.name)}, a "
            f"function of the kind {kind.name!r} (plugin {owner!r}): "
            f"{refusal(config, PLUGIN_KINDS).split('; ')[0]}; use --backend=runtime")
