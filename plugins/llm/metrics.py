"""What the measured generations show: TTFT, TPOT, ITL, tokens/s, step time against context.

The definitions are vLLM ``bench serve``'s (``calculate_metrics``): TTFT,
TPOT ``(E2E - TTFT) / S``, ITL (every decode step's own time, pooled), output
tokens/s; only generations of measured repetitions count. The distributions
are reported with LoadGen's early-stopping estimates
(:mod:`ireebench.lib.early_stopping`), and the step time against the context
length is a least-squares line of each step's median time (slope, intercept,
R²). The rows: docs/serving.md, "LLM prefill and decode".
"""

from __future__ import annotations

import itertools
import math

from ireebench.lib import early_stopping, slo
from ireebench.names import row_name
from ireebench.results import Counter, Run

# The extra rows, in order: (row, what its samples are).
ROWS = ("ttft", "tpot", "itl", "decode_context")


def _ms(seconds: float) -> Counter:
    return Counter(seconds * 1e3)


def ttfts(generations) -> list[float]:
    return [generation.first_token - generation.start for generation in generations]


def tpots(generations) -> list[float]:
    return [(generation.steps[-1] - generation.first_token) / len(generation.steps)
            for generation in generations if generation.steps]


def step_times(generation) -> list[float]:
    """Each decode step's time: from the previous token to this one."""
    stamps = [generation.first_token, *generation.steps]
    return [after - before for before, after in itertools.pairwise(stamps)]


def request_times(generation) -> dict[str, float]:
    """A generation as a request, for ``--goodput``: its TTFT, TPOT and end-to-end time."""
    end = generation.steps[-1] if generation.steps else generation.first_token
    times = {"ttft": generation.first_token - generation.start, "e2e": end - generation.start}
    if generation.steps:
        times["tpot"] = (end - generation.first_token) / len(generation.steps)
    return times


def repetition_counters(generations, batch: int, slos=None) -> dict[str, Counter]:
    """The counters of a repetition's row: mean TTFT and TPOT, output tokens/s, decode
    calls; with ``slos`` (``--goodput``) the goodput, requests per second that met every
    one (each generation is ``batch`` requests, one after the other)."""
    import statistics  # here: every command loads this plugin

    if not generations:
        return {}
    total = math.fsum(generation.steps[-1] - generation.start if generation.steps
                      else generation.first_token - generation.start
                      for generation in generations)
    tokens = sum(batch * (len(generation.steps) + 1) for generation in generations)
    counters = {"ttft_ms": _ms(statistics.fmean(ttfts(generations))),
                "output_tokens_per_second": Counter(tokens / total if total else 0.0,
                                                    is_rate=True),
                "decode_calls": Counter(float(sum(len(g.steps) for g in generations)))}
    values = tpots(generations)
    if values:
        counters["tpot_ms"] = _ms(statistics.fmean(values))
    if slos:
        good = sum(slo.met(request_times(generation), slos) for generation in generations)
        counters["goodput"] = Counter(batch * good / total if total else 0.0, is_rate=True)
        counters["good_requests"] = Counter(float(batch * good))
    return counters


def _distribution_row(workload, row: str, values: list[float], what: str, label: str) -> Run:
    ordered = sorted(values)
    run = Run(name=row_name(workload.name, row), run_name=row_name(workload.name, row),
              function=workload.function.name, params=dict(workload.params),
              time_unit=workload.time_unit, batch_size=workload.batch_size, extra_row=True,
              iterations=len(ordered), real_accumulated_time=math.fsum(ordered))
    run.samples = [run.real_accumulated_time / len(ordered)] if ordered else []
    found = early_stopping.estimates(ordered)
    for p, value in found.items():
        if value is not None:
            run.counters[f"{early_stopping.percentile_name(p)}_ms"] = _ms(value)
    if ordered:
        run.counters["max_ms"] = _ms(ordered[-1])
    note = early_stopping.missing_note(found, len(ordered), what)
    run.label = "; ".join(part for part in (label, note) if part)
    return run


def fit(contexts: list[int], times: list[float]) -> tuple[float, float, float]:
    """Least squares ``time = intercept + slope * context``: (slope, intercept, R²)."""
    import statistics  # here: every command loads this plugin

    count = len(contexts)
    mean_x = statistics.fmean(contexts)
    mean_y = statistics.fmean(times)
    sxx = math.fsum((x - mean_x) ** 2 for x in contexts)
    sxy = math.fsum((x - mean_x) * (y - mean_y) for x, y in zip(contexts, times))
    slope = sxy / sxx if sxx else 0.0
    intercept = mean_y - slope * mean_x
    total = math.fsum((y - mean_y) ** 2 for y in times)
    residual = math.fsum((y - intercept - slope * x) ** 2 for x, y in zip(contexts, times))
    r_squared = 1.0 - residual / total if total and count > 2 else 0.0
    return slope, intercept, r_squared


def context_row(workload, generations, contexts: list[int], label: str) -> Run:
    """The median step time of each position, fitted against its context length."""
    import statistics  # here: every command loads this plugin

    per_step = list(zip(*[step_times(generation) for generation in generations]))
    medians = [statistics.median(times) for times in per_step]
    used = contexts[:len(medians)]
    slope, intercept, r_squared = fit(used, medians)
    name = row_name(workload.name, "decode_context")
    run = Run(name=name, run_name=name, function=workload.function.name,
              params=dict(workload.params), time_unit=workload.time_unit,
              batch_size=workload.batch_size, extra_row=True, iterations=len(medians),
              real_accumulated_time=math.fsum(medians))
    run.samples = [run.real_accumulated_time / len(medians)] if medians else []
    run.counters = {"slope_us_per_token": Counter(slope * 1e6),
                    "intercept_ms": _ms(intercept), "r_squared": Counter(r_squared),
                    "context_min": Counter(float(used[0]) if used else 0.0),
                    "context_max": Counter(float(used[-1]) if used else 0.0)}
    run.label = f"{label}; each position's median over {len(generations)} generations"
    return run


def extra_rows(workload, inputs) -> list[Run]:
    """TTFT, TPOT, ITL and the step time against context, over the measured generations."""
    generations = [generation for index in sorted(inputs.measured)
                   for generation in inputs.measured[index]]
    if not generations:
        return []
    label = inputs.settings.describe()
    steps = [time for generation in generations for time in step_times(generation)]
    rows = [_distribution_row(workload, "ttft", ttfts(generations), "generations", label)]
    if steps:
        rows.append(_distribution_row(workload, "tpot", tpots(generations), "generations",
                                      label))
        rows.append(_distribution_row(workload, "itl", steps, "decode steps", label))
        rows.append(context_row(workload, generations, inputs.context_lengths(), label))
    return rows
