"""``--llm_config``: the KV-cache layout from the JSON sharktank's exporter writes beside the module.

``export_paged_llm_v1 --output-config=config.json`` writes the service
config shortfin reads (``ModelParams``); of it the kind needs the paged KV
cache: ``paged_kv_cache.block_seq_stride`` (positions per page),
``device_block_count`` (pages), ``kv_cache_dtype`` (``float16`` ...) and the
page size in elements (``paged_kv_block_size_elements_per_device[0]``, or
the older top-level ``paged_kv_block_size_elements``). Every mistake is one
line naming the file and the key. Read when the run is configured, so it
keeps to the standard library (the element type named, looked up when the
cache is made).
"""

from __future__ import annotations

from dataclasses import dataclass

from ireebench.commands import read_json_file
from ireebench.errors import UsageError

MAX_CONFIG_BYTES = 1 << 20  # a service config is a few hundred bytes
MAX_SIZE = (1 << 31) - 1  # a size or count: what a module's i32/index shapes hold
MAX_TOKENS = 1 << 20  # prompt, decode steps, stride: 1M tokens, beyond any served context
# sharktank's dtype names (kv_cache_dtype) -> IREE's element type spelling.
DTYPES = {"float16": "f16", "float32": "f32", "bfloat16": "bf16", "float64": "f64"}


@dataclass(frozen=True)
class CacheLayout:
    block_stride: int
    pages: int
    page_size: int  # elements
    element: str  # IREE's spelling of the cache's element type (f16 ...)


def read_service_config(path: str) -> CacheLayout:
    flag = f"--llm_config={path}"
    document = read_json_file(path, flag, MAX_CONFIG_BYTES)
    cache = document.get("paged_kv_cache") if isinstance(document, dict) else None
    if not isinstance(cache, dict):
        raise UsageError(f"{flag}: no paged_kv_cache (the config export_paged_llm_v1 "
                         "writes with --output-config)")

    def positive(value, key: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise UsageError(f"{flag}: {key} must be a positive integer, not {value!r}")
        if value > MAX_SIZE:
            raise UsageError(f"{flag}: {key} is {value}, more than {MAX_SIZE}")
        return value

    sizes = cache.get("paged_kv_block_size_elements_per_device")
    if isinstance(sizes, list) and sizes:
        page_size = positive(sizes[0], "paged_kv_cache.paged_kv_block_size_elements_per_device")
    else:
        page_size = positive(document.get("paged_kv_block_size_elements"),
                             "paged_kv_block_size_elements")
    dtype = cache.get("kv_cache_dtype")
    element = DTYPES.get(dtype) if isinstance(dtype, str) else None
    if element is None:
        raise UsageError(f"{flag}: paged_kv_cache.kv_cache_dtype {dtype!r} is not one ireebench "
                         f"makes a cache of ({', '.join(DTYPES)})")
    return CacheLayout(positive(cache.get("block_seq_stride"), "paged_kv_cache.block_seq_stride"),
                       positive(cache.get("device_block_count"),
                                "paged_kv_cache.device_block_count"),
                       page_size, element)
