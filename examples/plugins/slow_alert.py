"""Example streaming plugin: warns on stderr when a benchmark is slower than a budget.

    ireebench --module=model.vmfb --plugin=examples/plugins/slow_alert.py --slow_alert_ms=5

Shows a plugin option (ireebench_addoption), reading it (ireebench_configure)
and the streaming hook that sees every run as it finishes.
"""

import sys

from ireebench import hookimpl
from ireebench.errors import UsageError

_budget_ms = None


@hookimpl
def ireebench_addoption(parser):
    parser.addoption("--slow_alert_ms", "slow_alert_ms", type=float, default=None,
                     group="slow_alert plugin", help="Warn when a run's real time exceeds this.")


@hookimpl
def ireebench_configure(config):
    global _budget_ms
    _budget_ms = config.getoption("slow_alert_ms")
    if _budget_ms is not None and _budget_ms <= 0:
        raise UsageError(f"--slow_alert_ms={_budget_ms}: must be positive")


@hookimpl
def ireebench_benchmark_result(run):
    if _budget_ms is None or run.error_occurred or run.run_type != "iteration":
        return
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0}[run.time_unit]
    if run.real_time * scale > _budget_ms:
        print(f"slow_alert: {run.benchmark_name} took {run.real_time * scale:.3f} ms "
              f"(budget {_budget_ms} ms)", file=sys.stderr)
