"""The invocations a scenario issues, prepared before the clock starts.

One invocation is one *sample* (LoadGen's word): one call of the
function. An async (coarse-fences) function gets, as in the native tool's
async batches (``--batch_concurrency``), lanes: sample ``i`` runs on lane
``i % lanes`` and waits on the signal of the lane's previous sample (each
sample signals a semaphore of its own), so a lane executes its samples in
order while the lanes overlap. Each sample's argument list (the inputs, uploaded once, then its
wait and signal fences) and result list are made here, untimed; issuing is
then one ``invoke``, which returns as soon as the work is queued.

A sync function (SingleStream only) is issued the same way; its ``invoke``
returns when the work is done.
"""

from __future__ import annotations

from dataclasses import dataclass

import iree.runtime as rt


@dataclass
class Sample:
    """One prepared invocation."""

    arguments: object  # VmVariantList
    results: object  # VmVariantList
    done: object  # HalFence signalled when it completes (None: a sync function)
    lane: int


class Invocations:
    """Makes the samples of one run, in issue order, round robin over the lanes."""

    def __init__(self, workload, session, lanes: int):
        self.function = workload.function.vm_function
        self.invoke = session.context.invoke
        self.asynchronous = workload.kind.name == "async"
        self.lanes = lanes if self.asynchronous else 1
        self._inputs = workload.inputs
        self._results = max(len(workload.function.results), 1)
        self._made = 0
        if self.asynchronous:
            self._device = session.device
            self._previous = [rt.HalFence(0) for _ in range(self.lanes)]  # nothing to wait on

    def make(self, count: int) -> list[Sample]:
        """The next ``count`` samples."""
        samples = []
        for _ in range(count):
            index = self._made
            self._made += 1
            if not self.asynchronous:
                samples.append(Sample(self._inputs.vm_list, rt.VmVariantList(self._results),
                                      None, 0))
                continue
            lane = index % self.lanes
            # A semaphore a sample (not a lane's timeline at value i): a function that
            # signals without waiting would signal i + 1 before i (see kinds' batches).
            done = rt.HalFence.create_at(self._device.create_semaphore(0), 1)
            arguments = self._inputs.clone(extra_capacity=2)
            arguments.push_ref(self._previous[lane])
            arguments.push_ref(done)
            self._previous[lane] = done
            samples.append(Sample(arguments, rt.VmVariantList(self._results), done, lane))
        return samples
