"""The invocation-kind interface: how a function is called, what one batch executes.

An invocation kind decides how a function is called and what one measured
batch of ``batch_size`` logical iterations executes. Built-in kinds (sync,
async, dispatch) live in :mod:`ireebench.plugins.kinds`; third parties add
kinds through the ``ireebench_invocation_kinds`` hook and claim functions
in ``ireebench_classify_function``.

A kind in five steps (see ``examples/seeded_kind`` for a complete one):

1. ``auto_discover(function)``: without ``--function``, may this function
   run with no ``--input``?
2. ``build_inputs(workload, session, specs)``: the argument list, built once
   and uploaded to the device before anything is timed; return
   :func:`ireebench.inputs.prepare_inputs` of numpy arrays and numbers, or
   parse ``specs`` (the ``--input`` values) with
   :func:`ireebench.inputs.parse_inputs`.
3. ``prepare(workload, session)``: one :class:`Batch`, untimed.
4. ``Batch.execute()``: the timed region.
5. ``native_inputs(workload, directory)``: how native passes (profiling,
   replay capture, device profiling) can rerun it, or ``None``: they then
   refuse it in one line naming the kind, before anything is measured.
"""

from __future__ import annotations


class Batch:
    """One prepared batch. ``execute()`` is the timed region."""

    def execute(self) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def outputs(self):
        """The VmVariantList of the last invocation's results, or None."""
        return


class InvocationKind:
    """Base class of invocation kinds.

    Attributes:
        name: unique kind name (``sync``, ``async``, ``dispatch``...).
        default_time_unit: unit of the reported rows unless --time_unit.
        reusable_batch: True if one prepared batch can be executed again and
            again (then it is prepared once per repetition and the loop only
            calls ``execute``); False if every batch needs a fresh ``prepare``
            (done untimed before each batch).
        native_discovers: True when the native iree-benchmark-module finds
            and runs this kind's functions by itself, with the user's own
            ``--function``/``--input`` (the built-in kinds, which mirror its
            own). Otherwise native passes ask :meth:`native_inputs`.
    """

    name = "kind"
    default_time_unit = "ms"
    reusable_batch = True
    native_discovers = False

    def batching(self, batch_size: int, concurrency: int) -> tuple[int, int]:
        """Returns (logical iterations per batch, concurrency)."""
        return batch_size, 1

    def auto_discover(self, function) -> bool:
        """Without --function: True if this function can run with no --input."""
        return function.argument_count == 0

    def build_inputs(self, workload, session, specs) -> object:
        """Builds the argument list once (untimed). Returns PreparedInputs."""
        raise NotImplementedError

    def prepare(self, workload, session) -> Batch:
        """Prepares one batch (untimed)."""
        raise NotImplementedError

    def native_inputs(self, workload, directory) -> list[str] | None:
        """The ``--input`` values with which the native tool runs this workload.

        Native passes then run ``--function=<name>`` with them, one workload
        at a time (write arrays as ``.npy`` files into ``directory``, a
        private directory of the run, and return ``@path`` values). The
        default, ``None``, means the native tool cannot run it: a native pass
        that would need to refuses in one line naming the kind.
        """
        return None


__all__ = [
    "Batch", "InvocationKind"
]
