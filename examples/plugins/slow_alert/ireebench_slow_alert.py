"""Example streaming plugin: warns on stderr when a benchmark is slower than a budget.

    ireebench --module=model.vmfb --slow_alert_ms=5

Install it (``pip install examples/plugins/slow_alert``: entry point
``slow_alert``) or load it with
``--plugin examples/plugins/slow_alert/ireebench_slow_alert.py``.

Shows a plugin option (ireebench_addoption), checking it and keeping per-run
state in ``config.stash`` (ireebench_configure), and the streaming hook that
sees every run as it finishes.
"""

from ireebench import StashKey, UsageError, hookimpl

BUDGET_MS = StashKey[float]()


@hookimpl
def ireebench_addoption(parser):
    parser.addoption("--slow_alert_ms", "slow_alert_ms", type=float, default=None,
                     group="slow_alert plugin", help="Warn when a run's real time exceeds this.")


@hookimpl
def ireebench_configure(config):
    budget = config.getoption("slow_alert_ms")
    if budget is None:
        return
    if budget <= 0:
        raise UsageError(f"--slow_alert_ms={budget}: must be positive")
    config.stash[BUDGET_MS] = budget


@hookimpl
def ireebench_benchmark_result(config, run):
    budget = config.stash.get(BUDGET_MS, None)
    if budget is None or run.error_occurred or run.run_type != "iteration":
        return
    milliseconds = run.real_seconds * 1e3
    if milliseconds > budget:
        config.stderr.write(f"slow_alert: {run.benchmark_name} took {milliseconds:.3f} ms "
                            f"(budget {budget} ms)\n")
