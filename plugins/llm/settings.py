"""What a run with ``--llm_decode_steps`` generates: its settings, and which functions.

Read from the flags when the run is configured (``ireebench.plugins.llm``);
the generations themselves, with the runtime, are :mod:`.generation`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DECODE = re.compile(r"^decode_bs(\d+)$")
GREEDY, FIXED = "greedy", "fixed"


@dataclass(frozen=True)
class GenerationSettings:
    prompt_length: int
    decode_steps: int
    tokens: str  # greedy or fixed
    block_stride: int
    cache_pages: int | None  # None: the config's, else as many as the requests need
    layout: object = None  # a service_config.CacheLayout from --llm_config, or None

    def describe(self) -> str:
        how = ("greedy decoding of the returned logits" if self.tokens == GREEDY
               else "a fixed token stream")
        return f"{how}, prompt {self.prompt_length}, {self.decode_steps} decode steps"


def batch_size_of(function_name: str) -> int | None:
    match = DECODE.match(function_name)
    return int(match.group(1)) if match else None
