"""Built-in invocation kinds: sync, async (coarse fences) and dispatch, and the

They mirror the ``Batch`` of iree-benchmark-module (sync: one invocation;
async: ``batch_size`` invocations over ``batch_concurrency`` fence timelines,
then one wait, prepared untimed; dispatch: one invocation taking the batch
size as its repeat count), with its discovery rules (both ``trylast``, so a
plugin's rule comes first): docs/usage.md, "What gets benchmarked" and
"Invocation kinds and batches".

The kinds themselves (their names, batching and discovery rules) are here,
where ``ireebench plugins`` and ``--help`` find them; what they do with the
runtime (the argument lists, the batches) is :mod:`.batches`, which imports
``iree.runtime`` and is imported when a run first builds a workload's
inputs (:func:`runtime_part`).
"""

from __future__ import annotations

from ireebench import hookimpl
from ireebench.errors import UsageError
from ireebench.kinds import InvocationKind
from ireebench.names import is_internal


def runtime_part():
    """:mod:`.batches`, the kinds' work with the runtime, imported on first use."""
    from . import batches  # the runtime: see LAZY_IMPORTS in tests/core/test_imports.py

    return batches


class SyncKind(InvocationKind):
    name = "sync"
    native_discovers = True  # the native tool's own kSync

    def build_inputs(self, workload, session, specs):
        return runtime_part().vm_inputs(workload, session, specs,
                                        workload.function.argument_types)

    def prepare(self, workload, session):
        return runtime_part().SyncBatch(workload, session)


# Every async invocation of a batch gets its own argument lists and fence,
# all prepared before the batch runs: a bound keeps a typo such as
# --batch_concurrency=2147483647 from exhausting memory before anything runs.
MAX_ASYNC_BATCH = 1 << 20


class AsyncKind(InvocationKind):
    name = "async"
    reusable_batch = False
    native_discovers = True  # the native tool's own kAsync

    def batching(self, batch_size, concurrency):
        batch = -(-batch_size // concurrency) * concurrency
        if batch > MAX_ASYNC_BATCH:
            raise UsageError(
                f"--batch_size={batch_size} --batch_concurrency={concurrency}: a batch of "
                f"{batch} async invocations (rounded up to a multiple of the concurrency) is "
                f"more than ireebench prepares at once ({MAX_ASYNC_BATCH})")
        return batch, concurrency

    def auto_discover(self, function):
        return function.argument_count == 2  # only the wait and signal fences

    def build_inputs(self, workload, session, specs):
        return runtime_part().vm_inputs(workload, session, specs,
                                        workload.function.argument_types[:-2])

    def prepare(self, workload, session):
        return runtime_part().AsyncBatch(workload, session)


class DispatchKind(InvocationKind):
    name = "dispatch"
    default_time_unit = "us"
    native_discovers = True  # the native tool's own kDispatch

    def auto_discover(self, function):
        return True

    def build_inputs(self, workload, session, specs):
        if specs:
            raise UsageError(
                f"--input: dispatch wrappers take --batch_size, not --input "
                f"(function {workload.function.name!r})"
            )
        return runtime_part().repeat_count(workload.batch_size)

    def prepare(self, workload, session):
        return runtime_part().DispatchBatch(workload, session)


@hookimpl
def ireebench_invocation_kinds():
    return [SyncKind(), AsyncKind(), DispatchKind()]


@hookimpl(trylast=True)
def ireebench_classify_function(function, kinds):
    if function.attr("iree.benchmark") == "dispatch":
        return "dispatch"
    if function.attr("iree.abi.model") == "coarse-fences":
        return "async"
    return "sync"


@hookimpl(trylast=True)
def ireebench_select_function(function, kind, selected):
    if selected:
        return True
    if kind.name == "dispatch" or function.attr("iree.benchmark") == "entry":
        return True
    if is_internal(function.name):
        return False
    return kind.auto_discover(function)
