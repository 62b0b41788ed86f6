"""Built-in invocation kinds: sync, async (coarse fences) and dispatch.

They mirror the ``Batch`` of iree-benchmark-module:

* sync: one VM invocation per batch; any repetition is compiled in.
* async: a batch is ``batch_size`` invocations spread over
  ``batch_concurrency`` fence timelines (invocation i waits on the previous
  signal of its timeline), then one wait on all timelines. The batch is
  rounded up to a multiple of the concurrency. Each batch is prepared
  (semaphores, fences, argument lists) untimed.
* dispatch: a generated dispatch benchmark (``iree.benchmark = "dispatch"``)
  invoked once per batch with the batch size as its i32 repeat count;
  reported in microseconds.
"""

from __future__ import annotations

import functools

import iree.runtime as rt
from ireebench import hookimpl
from ireebench.errors import INVALID_ARGUMENT, UsageError
from ireebench.inputs import PreparedInputs, parse_inputs, to_vm_list
from ireebench.kinds import Batch, InvocationKind
from ireebench.signature import check_inputs, tensor_checker


def _check_inputs(workload, values, expected: int) -> None:
    """Count, then shapes and element types, before anything runs."""
    if len(values) != expected:
        raise UsageError(
            f"--input: function {workload.function.name!r} takes {expected} input(s) "
            f"({workload.function.attr('iree.abi.declaration') or workload.function.cconv}), "
            f"got {len(values)}",
            status=INVALID_ARGUMENT,  # the native tool: "input list and function mismatch"
        )
    check_inputs(workload.function, values)  # shapes/types vs iree.abi.declaration


class SyncBatch(Batch):
    def __init__(self, workload, session):
        self._outputs = rt.VmVariantList(16)
        # invoke() resets the result list first, which releases the previous
        # results before the call, as the native tool does.
        self.execute = functools.partial(
            session.context.invoke, workload.function.vm_function,
            workload.inputs.vm_list, self._outputs,
        )

    def outputs(self):
        return self._outputs


class SyncKind(InvocationKind):
    name = "sync"
    native_discovers = True  # the native tool's own kSync

    def build_inputs(self, workload, session, specs):
        types = workload.function.argument_types
        values = parse_inputs(specs, types, check=tensor_checker(workload.function))
        _check_inputs(workload, values, len(types))
        return to_vm_list(values, session.device)

    def prepare(self, workload, session):
        return SyncBatch(workload, session)


class AsyncBatch(Batch):
    def __init__(self, workload, session):
        device = session.device
        count, concurrency = workload.batch_size, workload.concurrency
        timelines = [device.create_semaphore(0) for _ in range(concurrency)]
        self.completion = rt.HalFence(concurrency)
        for timeline in timelines:
            self.completion.insert(timeline, count // concurrency)
        previous = [rt.HalFence(0) for _ in range(concurrency)]  # nothing to wait on
        invoke = session.context.invoke
        function = workload.function.vm_function
        self.calls = []
        self._last_outputs = None
        for i in range(count):
            track = i % concurrency
            signal = rt.HalFence.create_at(timelines[track], i // concurrency + 1)
            arguments = workload.inputs.clone(extra_capacity=2)
            arguments.push_ref(previous[track])
            arguments.push_ref(signal)
            previous[track] = signal
            outputs = rt.VmVariantList(16)
            self.calls.append(functools.partial(invoke, function, arguments, outputs))
            self._last_outputs = outputs

    def execute(self):
        for call in self.calls:
            call()
        self.completion.wait()

    def outputs(self):
        return self._last_outputs


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
        types = workload.function.argument_types[:-2]
        values = parse_inputs(specs, types, check=tensor_checker(workload.function))
        _check_inputs(workload, values, len(types))
        return to_vm_list(values, session.device)

    def prepare(self, workload, session):
        return AsyncBatch(workload, session)


class DispatchBatch(SyncBatch):
    pass


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
        arguments = rt.VmVariantList(1)
        arguments.push_int(workload.batch_size)
        return PreparedInputs(arguments, [("push_int", workload.batch_size)])

    def prepare(self, workload, session):
        return DispatchBatch(workload, session)


@hookimpl
def ireebench_invocation_kinds():
    return [SyncKind(), AsyncKind(), DispatchKind()]
