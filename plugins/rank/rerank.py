"""The re-rank: the best ``--rerank_top`` and the baseline, paired and interleaved.

They are re-ranked on the first device: ``--rerank_rounds`` rounds, one
repetition of each per round in a fresh random order
(:func:`.measure.rerank`); their order is by the median of the per-round
ratios to the baseline (:func:`judge`), each neighbour pair judged by the
Wilcoxon signed-rank test on the paired log differences, and Kendall's tau
between the first pass and the re-rank says how stable the order is. A race's
re-rank (``--race_budget``) runs in stages of successive halving (:mod:`.race`).
"""

from __future__ import annotations

import math

from ireebench.stats import median

from .drift import BASELINE_ID
from .measure import RerankResult
from .ordering import interval, kendall_tau, signed_rank_test
from .results import CandidateResult, Rerank, State
from .settings import TIMEOUT_SLACK, RankSettings

# What a candidate measured as another (the same module bytes) takes from it.
SHARED = ("state", "message", "device", "seconds", "device_seconds", "ratio",
          "first_pass_ratio", "timeout", "measurement", "cached")


def device(devices: list, retired):
    """The first device, unless its worker was lost with its node and its next one
    has not started: then the first device whose worker is free, else the first
    that may start one (None: no device may)."""
    first = devices[0]
    if first.worker is not None and (first.worker.ready or not first.relocated):
        return first
    free = [each for each in devices if each.worker is not None
            and each.worker.ready and each.worker.busy is None]
    startable = [each for each in devices if not retired(each)]
    return (free or startable or [None])[0]


def timeout(settings: RankSettings, members: list[CandidateResult], first,
            rounds: int) -> float:
    """The re-rank's seconds: each member's (``first``: the baseline's first
    measurement on its device) as a candidate's, for its share of the rounds."""
    if settings.candidate_timeout is not None:
        return settings.candidate_timeout * (len(members) + 1)
    total = sum(each.elapsed * (1 + rounds / len(each.samples))
                for each in [*(member.measurement for member in members), first]
                if each is not None and each.samples)
    return settings.timeout_factor * total + TIMEOUT_SLACK * (len(members) + 1)


def round_ratios(rerank: Rerank, member: str) -> list[float]:
    """``member``'s ratio to the baseline in each round both ran."""
    return [s / b for s, b in zip(rerank.round_seconds.get(member, []),
                                  rerank.round_seconds.get(BASELINE_ID, [])) if s and b]


def judge(rerank: Rerank, result: RerankResult, metric: str) -> None:
    """The re-rank's order, ratios, p-values and Kendall's tau, from its rounds (a
    stage of successive halving: added to the earlier stages' rounds, and a member
    that went further ranks before one that did not)."""
    rerank.failed.update(result.failed)
    by_round = result.cpu_seconds if metric == "cpu_time" else result.seconds
    base = by_round.get(BASELINE_ID)
    if base is None or BASELINE_ID in result.failed:
        rerank.message = f"the baseline failed in the re-rank: " \
                         f"{result.failed.get(BASELINE_ID, 'not measured')}"
        return
    # A member's rounds pair with the baseline's first ones: it ran every stage's
    # rounds until it was left out, and the baseline's list grows stage by stage.
    for member in [*rerank.members, BASELINE_ID]:
        if by_round.get(member) is not None:
            rerank.round_seconds[member] = rerank.round_seconds.get(member, []) \
                + by_round[member]
    for member in rerank.failed:
        rerank.round_seconds.pop(member, None)
    ratios = {member: round_ratios(rerank, member) for member in rerank.round_seconds
              if member != BASELINE_ID}
    rerank.ratios = {member: median(values) for member, values in ratios.items() if values}
    reached = {member: max((stage for stage, members in enumerate(rerank.stages)
                            if member in members), default=0) for member in rerank.ratios}
    rerank.order = sorted(rerank.ratios, key=lambda member: (-reached[member],
                                                            rerank.ratios[member]))
    rerank.p_values = [
        signed_rank_test([math.log(a / b) for a, b in zip(rerank.round_seconds[first],
                                                           rerank.round_seconds[second])
                          if a and b])
        for first, second in zip(rerank.order, rerank.order[1:])]
    rerank.kendall_tau = kendall_tau([m for m in rerank.members if m in rerank.ratios],
                                     rerank.order)


def final_order(results: list[CandidateResult], rerank: Rerank | None, metric: str,
                confidence: float | None) -> list[CandidateResult]:
    """The ranked candidates, best first: the re-rank's order, then the others by
    their first-pass ratio; each with its places, its final ratio and that ratio's
    ``confidence`` interval (of its per-round ratios when re-ranked, else of its
    samples). A candidate measured as another takes that one's result."""
    by_id = {result.id: result for result in results}
    for result in results:
        if result.same_as and by_id[result.same_as].measurement is not None:
            for name in SHARED:
                setattr(result, name, getattr(by_id[result.same_as], name))
    first = sorted((result for result in results if result.state is State.OK
                    and result.first_pass_ratio is not None),
                   key=lambda result: result.first_pass_ratio)
    reranked = [by_id[member] for member in rerank.order] if rerank is not None else []
    for position, result in enumerate(first, 1):
        result.first_pass_rank = position
    for position, result in enumerate(reranked, 1):
        result.rerank_position = position
        result.ratio = rerank.ratios.get(result.id, result.ratio)
    order = reranked + [result for result in first if result.rerank_position is None]
    for position, result in enumerate(order, 1):
        result.rank = position
        values = round_ratios(rerank, result.id) if result.rerank_position \
            else result.measurement.samples_of(metric)
        result.interval = interval(result.ratio, values, confidence)
    return order
