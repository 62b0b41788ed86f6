"""Fail a serving run on its service-level objectives: ``config.fail_run`` from a plugin.

Each Server row that is INVALID (it did not keep up, or missed its
``--latency_bound``), or whose goodput (``--goodput``) is under
GOODPUT_SHARE of the queries it completed, fails the run: the rows and
every output file are complete, one ``ireebench: run failed: plugin
'slo_gate': ...`` line says why, and the exit status is 5, which a CI job
tells from a crash (3) or a usage error (1). Use it with
``--plugin examples/serving/slo_gate.py``.
"""

from ireebench import hookimpl

GOODPUT_SHARE = 0.99  # of the completed queries, within every SLO
EXIT_SLO = 5


@hookimpl
def ireebench_benchmark_result(config, run):
    if "/scenario:server" not in run.name or run.run_type != "iteration" or run.error_occurred:
        return
    valid, goodput = run.counters.get("valid"), run.counters.get("goodput")
    if valid is not None and not valid.value:
        config.fail_run(f"{run.name}: {run.label.split(';')[0]}", exit_code=EXIT_SLO)
    elif goodput is not None:
        completed = run.counters["items_per_second"].value
        if goodput.value < GOODPUT_SHARE * completed:
            config.fail_run(f"{run.name}: goodput {goodput.value:.4g}/s, under "
                            f"{GOODPUT_SHARE:.0%} of the {completed:.4g}/s completed",
                            exit_code=EXIT_SLO)
