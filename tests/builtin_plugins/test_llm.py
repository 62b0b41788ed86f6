"""``--llm_decode_steps``: prefill, then token-by-token decode, on a small LLM-shaped module.

examples/llm/toy_llm.mlir has sharktank's interface (prefill_bs1,
decode_bs1, a paged KV cache updated in place): an embedding, one
attention-like step over the cache up to ``seq_len``, logits. The last
logits the kind leaves (``--output``) are checked against a generation
driven here with iree.runtime at advancing positions, and differ from one
that replays the first position.
"""

from __future__ import annotations

import json
import math
import os

import iree.runtime as rt
import numpy as np
import pytest
from conftest import ROOT, one_error_line

PROMPT, STEPS, STRIDE = 20, 12, 16
CACHE = "--input=64x1024xf32=0"
LLM = ("--function=decode_bs1", CACHE, f"--llm_decode_steps={STEPS}",
       f"--llm_prompt_length={PROMPT}", f"--llm_block_seq_stride={STRIDE}")


@pytest.fixture(scope="module")
def toy_llm(compile_mlir):
    return compile_mlir((ROOT / "examples" / "llm" / "toy_llm.mlir").read_text())


def test_rows_count_the_calls_made(ireebench, toy_llm):
    result = ireebench(f"--module={toy_llm}", *LLM, "--benchmark_min_time=3x",
                       "--benchmark_repetitions=2", "--benchmark_format=json")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)["benchmarks"]
    names = [row["name"] for row in rows]
    base = "BM_decode_bs1"
    assert names == [*[f"{base}/process_time/real_time"] * 2,
                     *[f"{base}/process_time/real_time_{name}"
                       for name in ("mean", "median", "stddev", "cv")],
                     f"{base}/ttft", f"{base}/tpot", f"{base}/itl", f"{base}/decode_context"]
    for row in rows[:2]:
        assert row["iterations"] == 3  # generations
        assert row["decode_calls"] == 3 * STEPS
        assert row["ttft_ms"] > 0 and row["tpot_ms"] > 0
        assert row["label"] == (f"greedy decoding of the returned logits, prompt {PROMPT}, "
                                f"{STEPS} decode steps")
    ttft, tpot, itl, context = rows[6:]
    # Only measured generations: 2 repetitions of 3 (not the warm-up's).
    assert ttft["iterations"] == tpot["iterations"] == 6
    assert itl["iterations"] == 6 * STEPS  # one inter-token latency per decode call
    assert itl["p50_ms"] <= itl["max_ms"] and "p99_ms" not in itl
    assert "p95 needs 130 decode steps, p97 219, p99 662, p99.9 6636 (ran 72)" in itl["label"]
    assert "p50 needs 11 generations" in ttft["label"]
    # TPOT is the mean of a generation's decode steps: the means agree.
    assert tpot["real_time"] == pytest.approx(itl["real_time"], rel=1e-6)
    assert context["iterations"] == STEPS
    assert (context["context_min"], context["context_max"]) == (PROMPT + 1, PROMPT + STEPS)
    assert {"slope_us_per_token", "intercept_ms", "r_squared"} <= set(context)


def _generate(module_path, tokens_mode: str, advance: bool) -> np.ndarray:
    """The last decode logits of one generation, driven with iree.runtime."""
    config = rt.Config("local-task")
    device = config.device
    module = rt.VmModule.mmap(config.vm_instance, str(module_path))
    context = rt.VmContext(config.vm_instance, [rt.create_hal_module(config.vm_instance,
                                                                     device), module])

    def upload(array):
        return device.allocator.allocate_buffer_copy(
            memory_type=rt.MemoryType.DEVICE_LOCAL, allowed_usage=rt.BufferUsage.DEFAULT,
            device=device, buffer=np.ascontiguousarray(array),
            element_type=rt.HalElementType.FLOAT_32 if array.dtype == np.float32
            else rt.HalElementType.SINT_64)

    def call(name, *arrays):
        arguments = rt.VmVariantList(5)
        for array in arrays:
            arguments.push_ref(array if not isinstance(array, np.ndarray) else upload(array))
        results = rt.VmVariantList(1)
        context.invoke(module.lookup_function(name), arguments, results)
        return rt.DeviceArray(device, results.get_as_object(0, rt.HalBufferView)).to_host()

    cache = upload(np.zeros((64, 1024), np.float32))
    pages = np.array([[1, 2]], np.int64)  # ceil((20 + 12) / 16) pages, from page 1
    prompt = np.zeros((1, 32), np.int64)
    prompt[0, :PROMPT] = [position % 16 + 1 for position in range(PROMPT)]
    logits = call("prefill_bs1", prompt, np.array([PROMPT]), pages[:, :2], cache)
    token = int(np.argmax(logits[0, PROMPT - 1]))
    for step in range(STEPS):
        position = PROMPT + step if advance else PROMPT
        if tokens_mode == "fixed":
            token = position % 16 + 1
        used = math.ceil((position + 1) / STRIDE)
        logits = call("decode_bs1", np.array([[token]]), np.array([position + 1]),
                      np.array([position]), pages[:, :used], cache)
        token = int(np.argmax(logits[0, -1]))
    return logits


@pytest.mark.parametrize("tokens", ["greedy", "fixed"])
def test_positions_and_the_cache_advance_per_step(ireebench, toy_llm, tmp_path, tokens):
    out = tmp_path / "last.npy"
    result = ireebench(f"--module={toy_llm}", *LLM, f"--llm_tokens={tokens}",
                       "--benchmark_min_time=1x", "--enable_output_processing",
                       f"--output=@{out}")
    assert result.returncode == 0, result.stderr
    described = ("greedy decoding of the returned logits" if tokens == "greedy"
                 else "a fixed token stream")
    assert f"{described}, prompt {PROMPT}, {STEPS} decode steps" in result.stdout
    last = np.load(out)
    np.testing.assert_allclose(last, _generate(toy_llm, tokens, advance=True), rtol=1e-5)
    # The same inputs replayed at the first position would leave other logits.
    assert not np.allclose(last, _generate(toy_llm, tokens, advance=False), rtol=1e-3)


def test_the_exporters_config_gives_the_cache(ireebench, toy_llm, tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"paged_kv_cache": {
        "block_seq_stride": STRIDE, "device_block_count": 64, "kv_cache_dtype": "float32",
        "paged_kv_block_size_elements_per_device": [1024]}}))
    out = tmp_path / "last.npy"
    # No --function, no --input: decode_bs1 is found, its cache made from the config.
    result = ireebench(f"--module={toy_llm}", f"--llm_config={config}",
                       f"--llm_decode_steps={STEPS}", f"--llm_prompt_length={PROMPT}",
                       "--benchmark_min_time=1x", "--enable_output_processing",
                       f"--output=@{out}")
    assert result.returncode == 0, result.stderr
    assert "BM_decode_bs1/decode_context" in result.stdout
    np.testing.assert_allclose(np.load(out), _generate(toy_llm, "greedy", advance=True),
                               rtol=1e-5)
    config.write_text(json.dumps({"paged_kv_cache": {"block_seq_stride": 16}}))
    line = one_error_line(ireebench(f"--module={toy_llm}", f"--llm_config={config}",
                                    "--llm_decode_steps=4"))
    assert line == (f"ireebench: error: --llm_config={config}: paged_kv_block_size_elements "
                    "must be a positive integer, not None")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # opened plainly, it would block the run forever
    line = one_error_line(ireebench(f"--module={toy_llm}", f"--llm_config={fifo}",
                                    "--llm_decode_steps=4"))
    assert line == f"ireebench: error: --llm_config={fifo}: not a regular file"


@pytest.mark.parametrize(("args", "message"), [
    (("--function=decode_bs1", "--llm_decode_steps=4"),
     ("--llm_decode_steps: the cache argument of decode_bs1 is !hal.buffer_view; give the "
      "exporter's --llm_config=config.json, or its shape and type with --function=decode_bs1 "
      "--input=PAGESxPAGE_SIZExTYPE=0")),
    (("--function=decode_bs1", "--input=3x1024xf32=0", "--llm_decode_steps=40",
      "--llm_block_seq_stride=16"),
     ("--llm_decode_steps: 1 request(s) of 128+40 tokens need 12 cache pages of 16 positions "
     "(page 0 unused); the cache has 3")),
    (("--function=decode_bs1", CACHE, "--llm_decode_steps=4", "--llm_tokens=beam"),
     "--llm_tokens=beam: expected greedy or fixed"),
    (("--function=decode_bs1", CACHE, "--llm_decode_steps=0"),
     "--llm_decode_steps=0: must be at least 1"),
])
def test_bad_llm_flags_are_one_line(ireebench, toy_llm, args, message):
    line = one_error_line(ireebench(f"--module={toy_llm}", *args))
    assert message in line, line


@pytest.mark.parametrize(("flag", "message"), [
    ("--llm_decode_steps=2000000000", "--llm_decode_steps=2000000000: must be at most 1048576"),
    ("--llm_prompt_length=2000000000",
     "--llm_prompt_length=2000000000: must be at most 1048576"),
    ("--llm_cache_pages=2000000000", "--llm_cache_pages: a cache of 2000000000x1024 f32 is"),
    ("size=10**40", "paged_kv_cache.device_block_count is 1" + "0" * 40 + ", more than"),
])
def test_sizes_beyond_a_machine_are_one_line_before_measuring(ireebench, toy_llm, tmp_path,
                                                              flag, message):
    """Sizes of 10^40 or 2e9 (issue 40): one line naming the flag or key, not a
    MemoryError or ValueError as a plugin error."""
    blocks = 10**40 if flag.startswith("size=") else 64
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"paged_kv_cache": {
        "block_seq_stride": STRIDE, "device_block_count": blocks, "kv_cache_dtype": "float32",
        "paged_kv_block_size_elements_per_device": [1024]}}))
    args = [f"--module={toy_llm}", f"--llm_config={config}", "--llm_decode_steps=4",
            "--benchmark_min_time=1x"]
    if not flag.startswith("size="):
        args.append(flag)
    line = one_error_line(ireebench(*args))
    assert message in line, line


@pytest.mark.parametrize(("change", "message"), [
    ({"paged_kv_block_size_elements_per_device": [512]},
     "cache shape dimension 1 mismatch; expected 1024 but have 512"),
    ({"kv_cache_dtype": "float16"}, "cache element type mismatch; expected f32"),
])
def test_a_config_the_module_does_not_take_is_one_line_before_measuring(
        ireebench, toy_llm, tmp_path, change, message):
    """The toy LLM takes its cache as a !hal.buffer_view, as sharktank's exports: only a
    call checks it, so the kind calls the prefill and the last decode step once before
    timing (issue 40): one line naming --llm_config, not an error row."""
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"paged_kv_cache": {
        "block_seq_stride": STRIDE, "device_block_count": 64, "kv_cache_dtype": "float32",
        "paged_kv_block_size_elements_per_device": [1024], **change}}))
    line = one_error_line(ireebench(f"--module={toy_llm}", f"--llm_config={config}",
                                    "--llm_decode_steps=4", "--benchmark_min_time=1x"))
    assert line.startswith("ireebench: error: --llm_config: prefill_bs1 does not take what "
                           "the settings make (prompt 128, 4 decode steps, a 64x"), line
    assert message in line, line


def test_percentile_counters_say_they_are_bounds(ireebench, toy_llm, tmp_path):
    """An LLM row's p50_ms is LoadGen's early-stopping estimate, a bound at 99 %
    confidence above the sample median (issue 39: it equalled max_ms at 2.5x the mean):
    the row's label says what its pNN_ms are."""
    out = tmp_path / "out.json"
    result = ireebench(f"--module={toy_llm}", *LLM, "--benchmark_min_time=12x",
                       "--device=local-sync", f"--benchmark_out={out}")
    assert result.returncode == 0, result.stdout[-2000:]
    rows = {row["name"].rsplit("/", 1)[-1]: row for row in json.loads(out.read_text())[
        "benchmarks"]}
    ttft = rows["ttft"]
    assert "p50_ms" in ttft and "pNN_ms: bounds at 99% confidence (early stopping); p90 " \
        "needs 64 generations" in ttft["label"], ttft


@pytest.mark.parametrize(("slos", "good"), [("e2e:1000s,ttft:1000s,tpot:1000s", True),
                                            ("ttft:1us", False)])
def test_goodput_counts_the_generations_that_met_every_slo(ireebench, toy_llm, tmp_path,
                                                           slos, good):
    """--goodput (issue 42): every generation meets SLOs of 1000 s, none a TTFT of 1 us:
    good_requests is all or none of the row's generations, goodput the good ones per
    second of generation (each repetition row, with what it counted in its label)."""
    out = tmp_path / "out.json"
    result = ireebench(f"--module={toy_llm}", *LLM, "--benchmark_min_time=5x",
                       "--benchmark_repetitions=2", "--device=local-sync", f"--goodput={slos}",
                       f"--benchmark_out={out}")
    assert result.returncode == 0, result.stderr
    rows = [row for row in json.loads(out.read_text())["benchmarks"]
            if row["run_type"] == "iteration" and row["name"].endswith("/real_time")]
    assert len(rows) == 2
    for row in rows:
        assert row["good_requests"] == (row["iterations"] if good else 0), row
        assert (row["goodput"] > 0) == good, row
        assert "; goodput: " in row["label"], row


def test_a_bad_goodput_is_one_line(ireebench, toy_llm):
    line = one_error_line(ireebench(f"--module={toy_llm}", *LLM, "--goodput=ttft:200"))
    assert line == ("ireebench: error: --goodput=ttft:200: expected NAME:TIME[,NAME:TIME...] "
                    "with NAME one of ttft, tpot, e2e and TIME in us, ms or s (e.g. "
                    "ttft:200ms,tpot:20ms,e2e:1s)")
