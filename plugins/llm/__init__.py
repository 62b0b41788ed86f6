"""``--llm_decode_steps``: an LLM's prefill, then token-by-token decode, as it serves.

For modules exported as sharktank's ``export_paged_llm_v1`` exports LLMs, with
``--llm_decode_steps=S`` each ``decode_bs{N}`` beside a ``prefill_bs{N}`` is
a workload of the ``llm`` kind whose every batch is one generation: a
prefill, then ``S`` decode calls (:mod:`.generation`, imported when a run
first builds one; settings in :mod:`.settings`, ``--llm_config`` in
:mod:`.service_config`). The kind is offered only with the flag (backends
that run only the native tool's kinds never look for one). A wrapper of
``ireebench_measure_repetition`` (:class:`GenerationKeeper`, the plugin
``llm.generations``, registered only with the flag) keeps the generations of
measured repetitions for the counters and the rows of :mod:`.metrics`. See
docs/serving.md, "LLM prefill and decode".
"""

from __future__ import annotations

import functools

from ireebench import InvocationKind, hookimpl
from ireebench.backend import IN_PROCESS, PLUGIN_KINDS, require
from ireebench.errors import flag_error
from ireebench.lib import slo
from ireebench.names import family_of, function_of, row_name
from ireebench.outfiles import register_input

from . import metrics
from .settings import FIXED, GREEDY, GenerationSettings, batch_size_of

GROUP = "LLM prefill and decode (sharktank's export_paged_llm_v1)"
DEFAULT_PROMPT = 128
DEFAULT_STRIDE = 32  # sharktank's default --block-seq-stride


@hookimpl
def ireebench_addoption(parser):
    add = parser.addoption
    add("--llm_decode_steps", "llm_decode_steps", type=int, default=None, group=GROUP,
        metavar="S", per_point=True, module_run=True, requires=IN_PROCESS,
        help="Run each decode_bs{N} with its prefill_bs{N} as an LLM serves: a prefill, then S "
             "decode calls at advancing positions per iteration; reports TTFT, TPOT, ITL, "
             "tokens/s and the step time against the context length.")
    add("--llm_prompt_length", "llm_prompt_length", type=int, default=DEFAULT_PROMPT,
        group=GROUP, metavar="L", per_point=True, module_run=True, requires=IN_PROCESS,
        help=f"Tokens of the prompt the prefill processes (default {DEFAULT_PROMPT}).")
    add("--llm_tokens", "llm_tokens", default=GREEDY, group=GROUP, metavar="greedy|fixed",
        per_point=True, module_run=True, requires=IN_PROCESS,
        help="greedy (default): each step's token is the argmax of the logits just returned; "
             "fixed: a fixed token stream, nothing read back.")
    add("--llm_block_seq_stride", "llm_block_seq_stride", type=int, default=None,
        group=GROUP, metavar="N", per_point=True, module_run=True, requires=IN_PROCESS,
        help="Positions per KV-cache page, as exported (sharktank's --block-seq-stride; "
             f"default: --llm_config's, else {DEFAULT_STRIDE}).")
    add("--llm_config", "llm_config", default=None, group=GROUP, metavar="FILE",
        per_point=True, module_run=True, requires=IN_PROCESS,
        help="The config.json sharktank's export_paged_llm_v1 wrote (--output-config): the "
             "KV cache's stride, pages, page size and type, so no --input is needed.")
    add("--llm_cache_pages", "llm_cache_pages", type=int, default=None, group=GROUP,
        metavar="N", per_point=True, module_run=True, requires=IN_PROCESS,
        help="Pages of the KV cache made from --llm_config or the declared cache type "
             "(default: the config's, else what the requests need). With a --input for the "
             "cache, its shape says.")


def generation_settings(config) -> GenerationSettings | None:
    steps = config.getoption("llm_decode_steps")
    if steps is None:
        return None
    from .service_config import MAX_SIZE, MAX_TOKENS, read_service_config
    option = config.getoption
    # Bounds checked before anything is made (issue 40): beyond them the token
    # arrays and the cache alone would exhaust a machine's memory.
    for name, most in (("llm_decode_steps", MAX_TOKENS), ("llm_prompt_length", MAX_TOKENS),
                       ("llm_block_seq_stride", MAX_TOKENS), ("llm_cache_pages", MAX_SIZE)):
        if option(name) is not None and option(name) > most:
            raise flag_error(name, option(name), f"must be at most {most}")
    if steps < 1:
        raise flag_error("llm_decode_steps", steps, "must be at least 1")
    if option("llm_prompt_length") < 1:
        raise flag_error("llm_prompt_length", option("llm_prompt_length"), "must be at least 1")
    if option("llm_tokens") not in (GREEDY, FIXED):
        raise flag_error("llm_tokens", option("llm_tokens"), "expected greedy or fixed")
    layout = read_service_config(option("llm_config")) if option("llm_config") else None
    stride = option("llm_block_seq_stride")
    if stride is None:
        stride = layout.block_stride if layout is not None else DEFAULT_STRIDE
    if stride < 1:
        raise flag_error("llm_block_seq_stride", stride, "must be at least 1")
    pages = option("llm_cache_pages")
    if pages is not None and pages < 2:
        raise flag_error("llm_cache_pages", pages, "must be at least 2 (page 0 is unused)")
    return GenerationSettings(option("llm_prompt_length"), steps, option("llm_tokens"),
                              stride, pages, layout)


def runtime_part():
    """:mod:`.generation`, the generations' work with the runtime and numpy, imported when
    a run first builds an ``llm`` workload (not when the plugin is loaded)."""
    from . import generation  # the runtime, numpy: see LAZY_IMPORTS in tests/core/test_imports.py

    return generation


class LlmKind(InvocationKind):
    """``decode_bs{N}`` with its ``prefill_bs{N}``: one generation per batch."""

    name = "llm"

    def __init__(self, settings: GenerationSettings):
        self.settings = settings

    def auto_discover(self, function) -> bool:
        return True  # its inputs are made here (the cache from the declaration)

    def build_inputs(self, workload, session, specs):
        return runtime_part().build(workload, session, specs, self.settings)

    def prepare(self, workload, session):
        return runtime_part().GenerationBatch(workload.inputs, session)


WRAPPER_NAME = "llm.generations"


@hookimpl
def ireebench_configure(config):
    settings = generation_settings(config)
    if settings is None:
        return
    require(config, IN_PROCESS, "llm_decode_steps", settings.decode_steps)
    require(config, PLUGIN_KINDS, "llm_decode_steps", settings.decode_steps)
    if config.getoption("llm_config"):
        register_input(config, f"--llm_config={config.getoption('llm_config')}",
                       config.getoption("llm_config"))
    config.pm.register(GenerationKeeper(), name=WRAPPER_NAME)
    config.add_cleanup(functools.partial(config.pm.unregister, name=WRAPPER_NAME))


@hookimpl
def ireebench_invocation_kinds(config):
    """The ``llm`` kind, in a run with ``--llm_decode_steps`` (and for listings)."""
    if config is None:
        return [LlmKind(None)]
    settings = generation_settings(config)
    return [LlmKind(settings)] if settings is not None else []


@hookimpl
def ireebench_classify_function(config, function, kinds):
    """``decode_bs{N}`` is an LLM workload with ``--llm_decode_steps``."""
    if config.getoption("llm_decode_steps") is None:
        return None
    return "llm" if batch_size_of(function.name) is not None else None


class GenerationKeeper:
    """The wrapper of ``ireebench_measure_repetition`` of a run with ``--llm_decode_steps``:
    keeps the generations of each measured repetition, and adds their counters."""

    @hookimpl(wrapper=True)
    def ireebench_measure_repetition(self, config, workload, repetition):
        if workload.kind.name != "llm":
            return (yield)
        run = yield
        batch = repetition.batch
        if run is None or run.error_occurred or batch is None:
            return run
        inputs = workload.inputs  # a generation.LlmInputs
        inputs.measured[repetition.index] = batch.generations  # a retry replaces its first
        slos = config.stash.get(slo.SLOS, None)
        run.counters.update(metrics.repetition_counters(batch.generations, inputs.batch, slos))
        run.label = inputs.settings.describe() + (f"; {slo.describe(slos)}" if slos else "")
        return run


@hookimpl
def ireebench_report_row_names(config, run_names):
    if config.getoption("llm_decode_steps") is None:
        return None
    return [row_name(family_of(name), row) for name in run_names
            if batch_size_of(function_of(name)) is not None for row in metrics.ROWS]


@hookimpl
def ireebench_report_extra_rows(config, workload, runs):
    if workload.kind is None or workload.kind.name != "llm" or workload.inputs is None:
        return None
    return metrics.extra_rows(workload, workload.inputs)
