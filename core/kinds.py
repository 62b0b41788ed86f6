"""The invocation-kind interface.

An invocation kind decides how a function is called and what one measured
batch of ``batch_size`` logical iterations executes. Built-in kinds (sync,
async, dispatch) live in :mod:`ireebench.plugins.kinds`; third parties add
kinds through the ``ireebench_invocation_kinds`` hook.
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
            again (then it is prepared once per measurement and the loop only
            calls ``execute``); False if every batch needs a fresh ``prepare``
            (done untimed before each batch).
    """

    name = "kind"
    default_time_unit = "ms"
    reusable_batch = True

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
