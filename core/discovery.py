"""Turns the exported functions of the benchmarked module into workloads.

The rules themselves are hooks (``ireebench_classify_function`` and
``ireebench_select_function``); the built-in ones are in
:mod:`ireebench.plugins.discovery` and follow iree-benchmark-module.
"""

from __future__ import annotations

import iree.runtime as rt

from . import names
from .errors import NOT_FOUND, UsageError
from .hookcall import call_hook, collect_named
from .modules import module_images, open_vm_module
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
    return [FunctionInfo.from_vm_function(module.lookup_function(name), renamed.get(name))
            for name in module.function_names]


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
    kinds = invocation_kinds(config)
    functions = exported_functions(session)
    wanted = config.getoption("function")
    if wanted:
        matches = [f for f in functions if f.name == wanted]
        if not matches:
            public = [f.name for f in functions if not f.name.startswith("__")]
            raise UsageError(
                f"--function={wanted}: no exported function named {wanted!r} in "
                f"{session.module_path} (exported: {', '.join(public) or 'none'})",
                status=NOT_FOUND,
            )
        candidates = [(matches[0], True)]
    else:
        candidates = [(f, False) for f in functions]
    workloads = []
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
        if config.selects(names.run_name(function.name)):
            workloads.append(build_workload(config, session, function, kind, selected))
    return workloads


def build_workload(config, session, function, kind, selected) -> Workload:
    batch, concurrency = kind.batching(
        config.getoption("batch_size"), config.getoption("batch_concurrency")
    )
    if batch > MAX_BATCH:
        raise UsageError(f"--batch_size={config.getoption('batch_size')}: "
                         "rounded batch size is too large")
    workload = Workload(
        name=names.family_name(function.name),
        function=function,
        kind=kind,
        batch_size=batch,
        concurrency=concurrency,
        time_unit=config.getoption("time_unit") or kind.default_time_unit,
        selected=selected,
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
    instance = rt.VmInstance()
    module, renamed = open_vm_module(instance, module_images(config)[-1])
    wanted = config.getoption("function")
    found = []
    for name in module.function_names:
        function = FunctionInfo.from_vm_function(module.lookup_function(name), renamed.get(name))
        selected = function.name == wanted
        if wanted and not selected:
            continue
        kind = classify(config, function, kinds)
        chosen = call_hook(config.pm, "ireebench_select_function", config=config,
                           function=function, kind=kind, selected=selected)
        if chosen and config.selects(names.run_name(function.name)):
            found.append((function, kind, owners.get(kind.name, "")))
    return found
