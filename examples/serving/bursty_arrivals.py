"""Bursty on/off arrivals for ``--scenario=server``: a plugin of the scenarios' hook.

Queries come in bursts of ON_S seconds at a Poisson rate high enough that the
run's mean is still ``--target_qps``, then OFF_S seconds of silence, as a
serving front end sees when clients send in waves. Use it with
``--plugin examples/serving/bursty_arrivals.py``.
"""

from ireebench import hookimpl

ON_S, OFF_S = 0.05, 0.05  # 50 ms of queries, 50 ms of none


@hookimpl
def ireebench_server_arrivals(target_qps, min_duration, min_queries, seed):
    import random  # here, not at import: every command loads the plugin

    draw = random.Random(seed)
    period = ON_S + OFF_S
    rate = target_qps * period / ON_S  # the burst's rate: the same mean over a period
    times, burst = [], 0
    while not times or times[-1] < min_duration or len(times) < min_queries:
        start = now = burst * period  # each burst: Poisson arrivals for ON_S seconds
        while now < start + ON_S:
            times.append(now)
            now += draw.expovariate(rate)
        burst += 1
    return times
