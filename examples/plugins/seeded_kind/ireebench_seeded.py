"""Example plugin: an invocation kind that feeds seeded random inputs to ``bench_*`` functions.

Functions named ``bench_*`` are benchmarked without ``--input``: their
tensor arguments get numpy arrays drawn from ``--seeded_seed`` (the same
numbers every run), shaped from the function's declared signature
(``iree.abi.declaration``; a dynamic dimension is ``--seeded_dim``),
primitives get a fixed value. Install it (``pip install
examples/plugins/seeded_kind``: entry point ``seeded_kind``) or load it
with ``--plugin examples/plugins/seeded_kind/ireebench_seeded.py``::

    ireebench --module=model.vmfb --plugin=... --seeded_seed=7

The five steps of a kind (see ``ireebench.kinds``): ``auto_discover``,
``build_inputs`` (arrays turned into prepared inputs with
``ireebench.prepare_inputs``: no ``.npy`` round trip), ``prepare``, the
batch's ``execute``, and ``native_inputs`` (the same arrays as ``.npy``
files, so ``--dispatch_statistics`` and replay capture can rerun it in the
native tool).
"""

from __future__ import annotations

import functools

import iree.runtime as rt
import numpy as np
from ireebench import (
    Batch,
    InvocationKind,
    StashKey,
    UsageError,
    declared_input_types,
    element_type,
    hookimpl,
    parse_tensor_type,
    prepare_inputs,
)

SEED = StashKey[int]()
DYNAMIC_DIM = StashKey[int]()
PRIMITIVES = {"i32": np.int32(1), "i64": np.int64(1), "f32": 1.0, "f64": 1.0}


@hookimpl
def ireebench_addoption(parser):
    group = "seeded_kind plugin"
    parser.addoption("--seeded_seed", "seeded_seed", type=int, default=0, group=group,
                     help="Seed of the random inputs of bench_* functions.")
    parser.addoption("--seeded_dim", "seeded_dim", type=int, default=1, group=group,
                     help="Size of a dynamic (?) dimension in a bench_* argument.")


@hookimpl
def ireebench_configure(config):
    if config.getoption("seeded_dim") <= 0:
        raise UsageError(f"--seeded_dim={config.getoption('seeded_dim')}: must be positive")
    config.stash[SEED] = config.getoption("seeded_seed")
    config.stash[DYNAMIC_DIM] = config.getoption("seeded_dim")


class SeededBatch(Batch):
    def __init__(self, workload, session):
        self._outputs = rt.VmVariantList(16)
        self.execute = functools.partial(session.context.invoke, workload.function.vm_function,
                                         workload.inputs.vm_list, self._outputs)

    def outputs(self):
        return self._outputs


class SeededKind(InvocationKind):
    """``bench_*`` functions with seeded random numpy inputs."""

    name = "seeded"

    def __init__(self, seed: int, dynamic_dim: int):
        self.seed = seed
        self.dynamic_dim = dynamic_dim

    def arrays(self, function) -> list:
        """The inputs of ``function``, the same for a seed every time."""
        types = declared_input_types(function.attr("iree.abi.declaration")) or []
        generator = np.random.default_rng(self.seed)
        values = []
        for index, text in enumerate(types):
            if text in PRIMITIVES:
                values.append(PRIMITIVES[text])
                continue
            parsed = parse_tensor_type(text)
            element = element_type(parsed[1]) if parsed else None
            if element is None or element.is_bf16:
                raise UsageError(f"seeded_kind: argument {index} of @{function.name} is {text}, "
                                 "which this kind cannot generate")
            shape = [self.dynamic_dim if dim is None else dim for dim in parsed[0]]
            if element.is_float:
                values.append(generator.standard_normal(shape).astype(element.numpy))
            else:
                values.append(generator.integers(0, 8, shape).astype(element.numpy))
        return values

    def auto_discover(self, function) -> bool:
        return True  # every bench_* function: its inputs are made here

    def build_inputs(self, workload, session, specs):
        if specs:
            raise UsageError(f"--input: {workload.function.name} gets seeded inputs "
                             "(drop --input, or -p no:seeded_kind)")
        function = workload.function
        return prepare_inputs(self.arrays(function), session, function.argument_types)

    def prepare(self, workload, session):
        return SeededBatch(workload, session)

    def native_inputs(self, workload, directory):
        values = []
        for index, value in enumerate(self.arrays(workload.function)):
            if isinstance(value, np.ndarray):
                path = directory / f"arg{index}.npy"
                np.save(path, value, allow_pickle=False)
                values.append(f"@{path}")
            else:
                values.append(str(value))
        return values


@hookimpl
def ireebench_invocation_kinds(config):
    if config is None:  # listed by `ireebench plugins`, outside a run
        return [SeededKind(0, 1)]
    return [SeededKind(config.stash[SEED], config.stash[DYNAMIC_DIM])]


@hookimpl(tryfirst=True)
def ireebench_classify_function(function):
    return "seeded" if function.name.startswith("bench_") else None
