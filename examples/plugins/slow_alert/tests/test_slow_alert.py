"""slow_alert's tests, through ireebench.testing (pip install the example first)."""

import ireebench_slow_alert
from ireebench.testing import TINY


def test_a_row_over_the_budget_is_named_on_stderr(ireebench_tester):
    result = ireebench_tester.run("--slow_alert_ms=0.0000001", plugins=[ireebench_slow_alert])
    assert result.exit_code == 0, result.stderr
    assert f"slow_alert: {TINY} took" in result.stderr


def test_without_the_flag_it_says_nothing(ireebench_tester):
    result = ireebench_tester.run(plugins=[ireebench_slow_alert])
    assert result.exit_code == 0 and "slow_alert" not in result.stderr


def test_a_budget_that_is_not_positive_is_one_line(ireebench_tester):
    result = ireebench_tester.run("--slow_alert_ms=0", plugins=[ireebench_slow_alert])
    assert (result.exit_code, result.error_lines) == (
        1, ["ireebench: error: --slow_alert_ms=0.0: must be positive"])
