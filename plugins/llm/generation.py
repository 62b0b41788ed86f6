"""Prefill, then token-by-token decode, on a module exported as sharktank exports LLMs.

The interface is ``export_paged_llm_v1``'s (nod-ai/shark-ai, run as its
``LlmRunner`` runs it): ``prefill_bs{N}`` and ``decode_bs{N}`` on a paged
KV-cache tensor the functions update in place, page 0 unused, each request
owning its pages. One generation (:meth:`GenerationBatch.execute`): the
prefill, then ``--llm_decode_steps`` decode calls at advancing positions, fed
the argmax of the logits just returned (greedy, inside the step's time) or a
fixed stream; every other input is uploaded when the batch is prepared. The
``time.perf_counter()`` stamps at the start, at the first token and after
each step are the only work it adds to the timed region. The steps:
docs/serving.md, "LLM prefill and decode".

This module (the runtime, numpy) is imported when a run first builds an
``llm`` workload (:func:`ireebench.plugins.llm.runtime_part`), not when the
plugin is loaded.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from time import perf_counter

import iree.runtime as rt
import numpy as np
from ireebench import Batch, UsageError
from ireebench.dtypes import by_name
from ireebench.inputs import parse_inputs
from ireebench.signature import declared_input_types, parse_tensor_type

from .settings import FIXED, GREEDY, GenerationSettings, batch_size_of

# The prompt's tokens: a short repeating pattern of small ids (every vocabulary has them).
PATTERN = 16


@dataclass
class Generation:
    """The stamps of one generation (perf_counter seconds)."""

    start: float
    first_token: float
    steps: list[float]  # after each decode step
    tokens: list = field(default_factory=list)  # greedy: each step's chosen tokens (arrays)


@dataclass
class LlmInputs:
    """Everything a generation needs, on the device, made once (the workload's inputs)."""

    settings: GenerationSettings
    batch: int  # N of decode_bs{N}
    prefill: object  # VmFunction
    decode: object
    cache: object  # HalBufferView, updated in place
    int_type: object  # ElementType of the token/position/page tensors
    vocab_limit: int
    prefill_arguments: list  # buffer views: tokens, seq_lens, seq_block_ids
    steps: list  # per decode step: (seq_lens, start_positions, seq_block_ids) buffer views
    fixed_tokens: list  # per decode step: the token buffer (fixed stream)
    # Generations of the measured repetitions, by repetition index (a retry replaces).
    measured: dict = field(default_factory=dict)

    def context_lengths(self) -> list[int]:
        """The context each decode step attends to (its seq_len)."""
        length = self.settings.prompt_length
        return [length + step + 1 for step in range(self.settings.decode_steps)]


def _declared(function) -> list[str]:
    return declared_input_types(function.attr("iree.abi.declaration")) or []


def _upload(session, array: np.ndarray, element_type):
    return session.device.allocator.allocate_buffer_copy(
        memory_type=rt.MemoryType.DEVICE_LOCAL,
        allowed_usage=rt.BufferUsage.DEFAULT | rt.BufferUsage.MAPPING,
        device=session.device, buffer=np.ascontiguousarray(array, dtype=element_type.numpy),
        element_type=element_type.hal)


def prompt_token(position: int, vocab_limit: int) -> int:
    return position % vocab_limit + 1


def build(workload, session, specs, settings: GenerationSettings) -> LlmInputs:
    """The workload's inputs: the cache, the page tables and every step's positions."""
    function = workload.function
    batch = batch_size_of(function.name)
    prefill_name = f"prefill_bs{batch}"
    if prefill_name not in session.module.function_names:
        raise UsageError(f"--llm_decode_steps: {function.name} has no {prefill_name} beside it "
                         f"in {session.module_path} (the kind runs sharktank's prefill_bs{{N}} "
                         "and decode_bs{N} pairs)")
    prefill = session.module.lookup_function(prefill_name)
    decode_types = _declared(function)
    if function.argument_count != 5 or (decode_types and len(decode_types) != 5):
        raise UsageError(f"--llm_decode_steps: {function.name} takes {function.argument_count} "
                         "arguments; sharktank's decode_bs{N} takes 5 (tokens, seq_lens, "
                         "start_positions, seq_block_ids, cache)")
    stride = settings.block_stride
    pages_per_request = math.ceil((settings.prompt_length + settings.decode_steps) / stride)
    needed = batch * pages_per_request + 1  # page 0 unused, as sharktank's allocator
    cache = _cache(workload, session, specs, decode_types, settings, needed)
    shape = list(cache.shape)
    pages = shape[0] if shape else 0
    if pages < needed:
        raise UsageError(f"--llm_decode_steps: {batch} request(s) of "
                         f"{settings.prompt_length}+{settings.decode_steps} tokens need "
                         f"{needed} cache pages of {stride} positions (page 0 unused); the "
                         f"cache has {pages}")
    int_type = _integer_type(decode_types)
    vocab = _vocabulary(function)
    vocab_limit = min(PATTERN, max(vocab - 1, 1)) if vocab else PATTERN
    table = np.array([[1 + request * pages_per_request + page for page in range(pages_per_request)]
                      for request in range(batch)], dtype=np.int64)
    length = settings.prompt_length
    prompt_pages = math.ceil(length / stride)
    tokens = np.zeros((batch, prompt_pages * stride), dtype=np.int64)
    tokens[:, :length] = [prompt_token(position, vocab_limit) for position in range(length)]
    prefill_arguments = [_upload(session, tokens, int_type),
                         _upload(session, np.full(batch, length), int_type),
                         _upload(session, table[:, :prompt_pages], int_type)]
    steps, fixed = [], []
    for step in range(settings.decode_steps):
        position = length + step
        used = math.ceil((position + 1) / stride)
        steps.append((_upload(session, np.full(batch, position + 1), int_type),
                      _upload(session, np.full(batch, position), int_type),
                      _upload(session, table[:, :used], int_type)))
        if settings.tokens == FIXED:
            fixed.append(_upload(session, np.full((batch, 1), prompt_token(position,
                                                                           vocab_limit)),
                                 int_type))
    inputs = LlmInputs(settings, batch, prefill, function.vm_function, cache, int_type,
                       vocab_limit, prefill_arguments, steps, fixed)
    _trial(session, inputs, function.name, prefill_name)
    return inputs


def _trial(session, inputs: LlmInputs, decode_name: str, prefill_name: str) -> None:
    """The prefill and the last decode step once, before anything is timed: a module that
    takes its cache as a ``!hal.buffer_view`` (sharktank's exports) checks its shape and
    type only when called, and a config or a context it does not take would otherwise be
    the runtime's INVALID_ARGUMENT in an error row, after measuring started."""
    token = _upload(session, np.ones((inputs.batch, 1), dtype=np.int64), inputs.int_type)
    calls = [(prefill_name, inputs.prefill, [*inputs.prefill_arguments, inputs.cache]),
             (decode_name, inputs.decode, [token, *inputs.steps[-1], inputs.cache])]
    for name, function, views in calls:
        arguments = rt.VmVariantList(len(views))
        for view in views:
            arguments.push_ref(view)
        try:
            session.context.invoke(function, arguments, rt.VmVariantList(2))
        except (RuntimeError, ValueError) as error:  # the bindings raise ValueError
            found = re.search(r"INVALID_ARGUMENT; (.*?); while ", str(error))
            if found is None:
                raise
            settings = inputs.settings
            flag = "--llm_config" if settings.layout is not None and "cache" in found.group(1) \
                else "--llm_decode_steps"
            cache = "x".join(map(str, inputs.cache.shape))
            raise UsageError(f"{flag}: {name} does not take what the settings make (prompt "
                             f"{settings.prompt_length}, {settings.decode_steps} decode steps, "
                             f"a {cache} cache): {found.group(1)}") from None


def _integer_type(decode_types: list[str]):
    parsed = parse_tensor_type(decode_types[0]) if decode_types else None
    element = by_name(parsed[1]) if parsed else None
    return element if element is not None and not element.is_float else by_name("i64")


def _vocabulary(function) -> int | None:
    """The logits' last dimension, from the declared result (``tensor<1x1x32xf32>``)."""
    declaration = function.attr("iree.abi.declaration")
    _, arrow, results = declaration.partition("->")
    if not arrow:
        return None
    found = re.search(r"tensor<([^>]*)>", results)
    parsed = parse_tensor_type(f"tensor<{found.group(1)}>") if found else None
    if not parsed or len(parsed[0]) < 1 or parsed[0][-1] is None:
        return None
    return parsed[0][-1]


def _cache(workload, session, specs, decode_types, settings: GenerationSettings, needed: int):
    """The KV cache: ``--input`` (one value), else zeros of ``--llm_config``'s layout or of
    the declared type."""
    name = workload.function.name
    if specs:
        if len(specs) != 1:
            raise UsageError(f"--input: {name} runs as an LLM (--llm_decode_steps): give only "
                             f"its cache, one --input (got {len(specs)}); the tokens, lengths "
                             "and pages are made for each step")
        values = parse_inputs(specs, ["r"])
        return _upload(session, values[0].array, values[0].element_type)
    layout = settings.layout
    declared = parse_tensor_type(decode_types[4]) if len(decode_types) == 5 else None
    if layout is not None:
        pages = settings.cache_pages or layout.pages
        _check_layout(name, layout, declared)
        element = by_name(layout.element)
        return _upload(session, _zeros((pages, layout.page_size), element), element)
    if declared is None or any(dim is None for dim in declared[0][1:]) \
            or by_name(declared[1]) is None:
        shown = decode_types[4] if len(decode_types) == 5 else "not declared"
        raise UsageError(f"--llm_decode_steps: the cache argument of {name} is {shown}; give "
                         f"the exporter's --llm_config=config.json, or its shape and type with "
                         f"--function={name} --input=PAGESxPAGE_SIZExTYPE=0 (e.g. "
                         f"--input={needed}x1024xf16=0)")
    pages = settings.cache_pages or needed
    element = by_name(declared[1])
    shape = [pages if dim is None else dim for dim in declared[0][:1]] + declared[0][1:]
    return _upload(session, _zeros(shape, element), element)


def _check_layout(name: str, layout, declared) -> None:
    """``--llm_config`` against the cache the module declares: a page size or element
    type it does not take is one line before anything runs, not the runtime's error."""
    if declared is None or any(dim is None for dim in declared[0][1:]):
        return
    page = math.prod(declared[0][1:])
    if page != layout.page_size:
        raise UsageError(f"--llm_config: paged_kv_cache's page size is {layout.page_size} "
                         f"elements; {name}'s cache takes pages of {page} "
                         f"({'x'.join(map(str, declared[0][1:]))})")
    if declared[1] != layout.element:
        raise UsageError(f"--llm_config: paged_kv_cache.kv_cache_dtype is {layout.element}; "
                         f"{name}'s cache is {declared[1]}")


def _zeros(shape, element) -> np.ndarray:
    """The cache's zeros, refused in one line when larger than this machine's memory."""
    size = math.prod(shape) * np.dtype(element.numpy).itemsize
    memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    if size > memory:
        raise UsageError(f"--llm_cache_pages: a cache of {'x'.join(map(str, shape))} "
                         f"{element.name} is {size / 2**30:.3g} GiB, more than this machine's "
                         f"{memory / 2**30:.3g} GiB")
    return np.zeros(shape, dtype=element.numpy)


def _argmax_tokens(device, results, batch: int, position: int | None):
    """The greedy tokens: the argmax of each request's logits ([N, S, V]) at ``position``
    (the prompt's last; None or a single position: the last one returned)."""
    logits = results.get_as_object(0, rt.HalBufferView)
    values = rt.DeviceArray(device, logits).to_host()
    if values.ndim == 3:
        values = values[:, position if position is not None and values.shape[1] > 1 else -1, :]
    return np.argmax(values.reshape(batch, -1), axis=-1)


class GenerationBatch(Batch):
    """One generation per :meth:`execute` (see the module docstring)."""

    def __init__(self, inputs: LlmInputs, session):
        self.inputs = inputs
        self.invoke = session.context.invoke
        self.session = session
        self.device = session.device
        self.generations: list[Generation] = []
        self._results = rt.VmVariantList(2)

    def _arguments(self, tokens, step_inputs, cache):
        arguments = rt.VmVariantList(5)
        arguments.push_ref(tokens)
        for view in step_inputs:
            arguments.push_ref(view)
        arguments.push_ref(cache)
        return arguments

    def execute(self) -> None:
        inputs, invoke, clock, device = self.inputs, self.invoke, perf_counter, self.device
        batch, int_type, greedy = inputs.batch, inputs.int_type, inputs.settings.tokens == GREEDY
        results = self._results
        cache = inputs.cache
        start = clock()
        prefill = rt.VmVariantList(4)
        for view in inputs.prefill_arguments:
            prefill.push_ref(view)
        prefill.push_ref(cache)
        invoke(inputs.prefill, prefill, results)
        token, chosen = None, []
        if greedy:
            last = inputs.settings.prompt_length - 1
            chosen.append(_argmax_tokens(device, results, batch, last))
            token = self._upload_tokens(chosen[-1], int_type)
        first = clock()
        stamps = []
        for step, step_inputs in enumerate(inputs.steps):
            tokens = token if greedy else inputs.fixed_tokens[step]
            invoke(inputs.decode, self._arguments(tokens, step_inputs, cache), results)
            if greedy:
                chosen.append(_argmax_tokens(device, results, batch, None))
                token = self._upload_tokens(chosen[-1], int_type)
            stamps.append(clock())
        self.generations.append(Generation(start, first, stamps, chosen))

    def _upload_tokens(self, tokens, int_type):
        return _upload(self.session, np.asarray(tokens).reshape(-1, 1), int_type)

    def outputs(self):
        return self._results
