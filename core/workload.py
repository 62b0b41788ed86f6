"""Exported functions and the workloads built from them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import names


@dataclass
class FunctionInfo:
    """What discovery knows about one exported VM function."""

    # The exported name; bytes that are not UTF-8 are surrogate escapes
    # (``vm_function.name`` is then the repaired name, see ireebench._vmfb).
    name: str
    vm_function: Any  # iree.runtime.VmFunction
    reflection: dict[str, str]
    cconv: str  # e.g. "0rr_r"

    @classmethod
    def from_vm_function(cls, vm_function, name: str | None = None) -> FunctionInfo:
        return cls(
            name=name or vm_function.name,
            vm_function=vm_function,
            reflection=dict(vm_function.reflection),
            cconv=_cconv_of(vm_function),
        )

    def attr(self, name: str) -> str:
        return self.reflection.get(name, "")

    @property
    def argument_types(self) -> list[str]:
        return split_cconv(self.arguments)

    @property
    def arguments(self) -> str:
        body = self.cconv[1:] if self.cconv[:1].isdigit() else self.cconv
        return body.partition("_")[0]

    @property
    def results(self) -> str:
        body = self.cconv[1:] if self.cconv[:1].isdigit() else self.cconv
        results = body.partition("_")[2]
        return "" if results == "v" else results

    @property
    def argument_count(self) -> int:
        return len(self.argument_types)


def _cconv_of(vm_function) -> str:
    # The bindings expose the calling convention only through repr():
    # "<VmFunction NAME(CCONV), reflection = {...}>".
    text = repr(vm_function)
    prefix = f"<VmFunction {vm_function.name}("
    if text.startswith(prefix):
        return text[len(prefix) :].split(")", 1)[0]
    return "0v_v"


@dataclass
class Workload:
    """A function to benchmark, with its ABI and batch accounting resolved.

    ``kind`` and ``function.vm_function`` are None for a workload a native
    backend reports (it knows the function by name only).
    """

    name: str  # "BM_" + function name (names.family_name)
    function: FunctionInfo
    kind: Any  # ireebench.kinds.InvocationKind
    batch_size: int  # logical iterations per measured batch
    concurrency: int  # fence timelines (async), else 1
    time_unit: str  # ns, us or ms
    selected: bool  # named with --function
    inputs: Any = None  # ireebench.inputs.PreparedInputs
    # The batch of the last measured iteration, from the end of the last
    # repetition until ireebench_workload_finish returns (its outputs are
    # the last outputs); None otherwise.
    last_batch: Any = None
    # The configuration point this workload measures (axis name -> value,
    # e.g. {"bs": 4}); empty outside a sweep. Every row copies it.
    params: dict = field(default_factory=dict)

    @property
    def run_name(self) -> str:
        return self.name + names.TIMING_SUFFIX


def split_cconv(arguments: str) -> list[str]:
    """Splits the argument fragment of a calling convention into types.

    A variadic span ``C...D`` counts as one argument.
    """
    if arguments == "v":  # void
        return []
    types, i = [], 0
    while i < len(arguments):
        char = arguments[i]
        if char == "C":
            end = arguments.find("D", i)
            end = len(arguments) - 1 if end < 0 else end
            types.append(arguments[i : end + 1])
            i = end + 1
        else:
            types.append(char)
            i += 1
    return types


__all__ = [
    "FunctionInfo", "Workload", "split_cconv"
]
