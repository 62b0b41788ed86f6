"""What the built-in kinds do with the runtime: argument lists and batches.

Imported by :mod:`ireebench.plugins.kinds` when a run first builds a
workload's inputs; every call here is untimed except ``execute``.
"""

from __future__ import annotations

import functools

import iree.runtime as rt
from ireebench.errors import INVALID_ARGUMENT, UsageError
from ireebench.inputs import PreparedInputs, parse_inputs, to_vm_list
from ireebench.kinds import Batch
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


def vm_inputs(workload, session, specs, types: list[str]) -> PreparedInputs:
    """The ``--input`` values for arguments of ``types``, checked and uploaded."""
    values = parse_inputs(specs, types, check=tensor_checker(workload.function))
    _check_inputs(workload, values, len(types))
    return to_vm_list(values, session.device)


def repeat_count(batch_size: int) -> PreparedInputs:
    """A dispatch benchmark's one argument: its i32 repeat count."""
    arguments = rt.VmVariantList(1)
    arguments.push_int(batch_size)
    return PreparedInputs(arguments, [("push_int", batch_size)])


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


class AsyncBatch(Batch):
    def __init__(self, workload, session):
        device = session.device
        count, concurrency = workload.batch_size, workload.concurrency
        # Each invocation signals a semaphore of its own (the native tool: one timeline
        # per track, value i): the compiler drops the wait fence of a function whose
        # results depend on nothing (a constant), so a track's calls can complete out of
        # order, and a later value signalled first fails the earlier signal ("semaphore
        # already signaled past N"). The track's order is kept by each waiting on the
        # one before it.
        self.completion = rt.HalFence(count)
        previous = [rt.HalFence(0) for _ in range(concurrency)]  # nothing to wait on
        invoke = session.context.invoke
        function = workload.function.vm_function
        self.calls = []
        self._last_outputs = None
        for i in range(count):
            track = i % concurrency
            semaphore = device.create_semaphore(0)
            signal = rt.HalFence.create_at(semaphore, 1)
            self.completion.insert(semaphore, 1)
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


class DispatchBatch(SyncBatch):
    pass
