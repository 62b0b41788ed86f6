"""Racing under a budget (``--race_budget=DEVICE_SECONDS``): screen, eliminate, re-rank.

A tuner's budget is device time, and an exhaustive ranking spends it alike
on every candidate. A race spends :data:`SCREEN` of it on the first pass
(each candidate's measurement capped at its share: ``--benchmark_max_time``
derived by :func:`screen_cap`; adaptive stopping still ends a precise one
earlier), then keeps the **finalists**: every candidate not clearly slower
than the leader, i.e. whose ratio to the baseline, lowered by its
margin, is not above the leader's raised by the leader's
(:func:`finalists`; a margin is the half-width of the median's interval at
``--confidence`` plus the spread of the baseline's measurements on the
candidate's device, so a candidate is eliminated wrongly only when both
intervals miss, well under 1 - confidence), at most
:func:`most_finalists` of them, best first. The rest of the budget goes to their
paired re-rank, as successive halving (:func:`stages`): each stage as many
rounds as its share pays for (:func:`rounds`), the better half going on. The error
rate and the device time it saves are measured by benchmarks/race_rates.py
(docs/performance.md, "Racing under a budget").
"""

from __future__ import annotations

import math

from .results import CandidateResult, State

SCREEN = 1 / 3  # of the budget, for the first pass
MIN_ROUNDS, MAX_ROUNDS = 5, 200
SECONDS_PER_REPETITION = 0.01  # --benchmark_min_time's default in a ranking
# A round costs more than its repetitions' timed seconds (each repetition's
# setup, the order's shuffle, the worker's replies): measured on 2-CPU machines.
ROUND_OVERHEAD = 1.6


def screen_cap(budget: float, candidates: int) -> float:
    """Seconds one candidate's first-pass measurement may take (with the baseline's
    measurements, about one per eight candidates, in the same share)."""
    return budget * SCREEN / (candidates * 9 / 8 + 1)


def most_finalists(candidates: int, rerank_top: int) -> int:
    """How many finalists a race keeps at most: ``--rerank_top``, or 1.5 x the square
    root of the candidates when that is more (a brief first pass of many candidates
    orders them roughly: the winner is near the top, not always in its top 5)."""
    return max(rerank_top, math.ceil(1.5 * math.sqrt(candidates)))


def finalists(results: list[CandidateResult], metric: str, most: int,
              drift) -> list[CandidateResult]:
    """The candidates not clearly slower than the leader, best first (see the module):
    each ratio's margin is its precision plus ``drift(result)``, how far apart the
    baseline's measurements on its device are (a ratio is only as good as the
    baseline it is interpolated between)."""
    ranked = sorted((result for result in results
                     if result.state is State.OK and result.first_pass_ratio is not None
                     and not result.same_as), key=lambda result: result.first_pass_ratio)
    if not ranked:
        return []

    def margin(result: CandidateResult) -> float:
        value = result.measurement.precision_of(metric) if result.measurement else None
        return (value if value is not None else 0.0) + drift(result)

    leader = ranked[0]
    ceiling = leader.first_pass_ratio * (1 + margin(leader))
    return [result for result in ranked
            if result.first_pass_ratio * (1 - margin(result)) <= ceiling][:most]


def stages(budget: float, spent: float, members: int, repetition: float) -> list[tuple[int, int]]:
    """The re-rank as successive halving: ``(members, rounds)`` per stage, the better
    half of each stage's members (by their paired ratios over all the rounds they ran)
    going on to the next, down to two. The rest of the budget is split evenly among
    the stages, so the last pair, whose order is the answer, runs the most rounds:
    over the stages they are paired in about twice the rounds one stage of every
    finalist would give them (benchmarks/race_rates.py measures what it buys)."""
    counts = [members]
    while counts[-1] > 2:
        counts.append(math.ceil(counts[-1] / 2))
    share = max(0.0, budget - spent) / len(counts)
    return [(count, rounds(share, 0.0, count, repetition)) for count in counts]


def repetition_seconds(min_time) -> float:
    """``--benchmark_min_time``'s seconds (``0.01s``); 0 for an iteration count (``5x``)."""
    text = str(min_time or "")
    try:
        return float(text[:-1]) if text.endswith("s") else 0.0
    except ValueError:
        return 0.0


def rounds(budget: float, spent: float, members: int, repetition: float) -> int:
    """Re-rank rounds the rest of the budget pays for: each round one repetition of
    every member and the baseline (``repetition`` seconds each)."""
    left = max(0.0, budget - spent)
    per_round = (members + 1) * max(repetition, SECONDS_PER_REPETITION) * ROUND_OVERHEAD
    return max(MIN_ROUNDS, min(MAX_ROUNDS, int(left / per_round)))
