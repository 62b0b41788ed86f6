"""The statistics of a paired comparison (``ireebench compare A.vmfb B.vmfb``).

* the signed-rank test equals ``scipy.stats.wilcoxon(d)`` (the exact
  distribution without ties or zeros, the normal approximation with them or
  beyond 50 pairs);
* its null distribution is a distribution (sums to 2**n);
* Tukey's interval of the Walsh averages excludes 0 exactly when the test
  rejects (no ties), and covers the true shift as often as its level says;
* the verdicts: significant slower beyond the threshold is a regression, a
  narrow interval is no change, a wide one "cannot judge" with the rounds
  that would decide it;
* scipy is for the tests only: the product does not import it.
"""

from __future__ import annotations

import ast
import math
import random

import pytest
from conftest import ROOT
from ireebench.comparison import paired
from ireebench.comparison.model import CompareOptions, Comparison, parse_threshold
from scipy import stats

FIXED = [
    [0.1, -0.2, 0.3, 0.4, 0.5, -0.05, 0.25],
    [0.01 * k for k in range(1, 16)],
    [0.02, -0.02, 0.03, 0.0, 0.05, 0.02, -0.01, 0.04],  # a zero and a tie
    [0.1] * 6 + [-0.1] * 4,  # ties only
    [math.sin(k) for k in range(60)],  # beyond the exact limit
]


@pytest.mark.parametrize("differences", FIXED)
def test_signed_rank_test_matches_scipy(differences):
    ours = paired.signed_rank_test(differences)
    has_ties = ours.method == "asymptotic"
    theirs = stats.wilcoxon(differences, zero_method="wilcox",
                            method="approx" if has_ties else "auto")
    assert ours.pvalue == pytest.approx(float(theirs.pvalue), rel=1e-9, abs=1e-12)


def test_random_samples_match_scipy():
    rng = random.Random(7)
    for n in (3, 6, 10, 25, 50, 51, 120):
        for _ in range(10):
            differences = [rng.gauss(0.02, 0.05) for _ in range(n)]
            ours = paired.signed_rank_test(differences)
            theirs = stats.wilcoxon(differences)
            assert ours.pvalue == pytest.approx(float(theirs.pvalue), rel=1e-9, abs=1e-12)
            assert ours.method == ("exact" if n <= paired.EXACT_LIMIT else "asymptotic")


@pytest.mark.parametrize("n", [1, 2, 5, 12, 30])
def test_null_distribution_sums_to_two_to_the_n(n):
    counts = paired.signed_rank_counts(n)
    assert sum(counts) == 2 ** n and len(counts) == n * (n + 1) // 2 + 1
    assert counts == counts[::-1]


def test_all_zero_differences_are_no_evidence():
    result = paired.signed_rank_test([0.0] * 10)
    assert result.pvalue == 1.0 and result.n == 0


def test_the_interval_excludes_zero_exactly_when_the_test_rejects():
    rng = random.Random(3)
    for n in (6, 10, 30):
        for _ in range(200):
            differences = [rng.gauss(0.01, 0.05) for _ in range(n)]
            test = paired.signed_rank_test(differences)
            interval = paired.pseudomedian_interval(differences, 0.95)
            assert (interval.low > 0 or interval.high < 0) == (test.pvalue <= 0.05)


def test_the_estimate_is_the_median_of_the_walsh_averages():
    values = [0.3, -0.1, 0.2, 0.5]
    averages = sorted((values[i] + values[j]) / 2 for i in range(4) for j in range(i, 4))
    assert paired.walsh_averages(values) == averages
    assert paired.pseudomedian_interval(values).estimate == pytest.approx(
        (averages[4] + averages[5]) / 2)


def test_coverage_at_least_the_level():
    rng = random.Random(11)
    covered = 0
    trials = 400
    for _ in range(trials):
        differences = [0.05 + rng.gauss(0, 0.03) for _ in range(20)]
        interval = paired.pseudomedian_interval(differences, 0.9)
        covered += interval.low <= 0.05 <= interval.high
    assert covered / trials >= 0.86  # 0.9 nominal, less the binomial error of 400 trials


def test_too_few_rounds_have_no_interval():
    # 5 pairs: the smallest two-sided p-value is 2/32 > 0.05.
    assert paired.pseudomedian_interval([0.1, 0.2, 0.3, 0.4, 0.5], 0.95).low is None


def _judge(old, new, **options):
    options = CompareOptions(**{"detectable": 0.10, **options})
    item = paired.compare_paired("BM_f", old, new, options, "ms", "cpu_time")
    comparison = Comparison("a.vmfb", "b.vmfb", options, [], paired=len(old))
    return paired.judge_paired(comparison, [item], options)


def _noisy(rng, factor, rounds=30, noise=0.01):
    old = [1e-3 * (1 + rng.uniform(-0.5, 0.5)) for _ in range(rounds)]  # drift between rounds
    new = [value * factor * math.exp(rng.gauss(0, noise)) for value in old]
    return old, new


def test_a_significant_slowdown_beyond_the_threshold_is_a_regression():
    comparison = _judge(*_noisy(random.Random(1), 1.10), thresholds=(parse_threshold("5%"),))
    benchmark = comparison.benchmarks[0]
    assert benchmark.verdict == "slower" and benchmark.regression
    assert benchmark.change == pytest.approx(0.10, abs=0.01)
    assert benchmark.low < 0.10 < benchmark.high
    assert comparison.exit_status == 1 and comparison.to_dict()["paired_rounds"] == 30


def test_pairing_cancels_the_drift_between_rounds():
    # The rounds' times vary by ±50 %: unpaired, a 2 % change would drown.
    benchmark = _judge(*_noisy(random.Random(2), 1.02, noise=0.002)).benchmarks[0]
    assert benchmark.verdict == "slower" and benchmark.pvalue < 1e-4


def test_a_narrow_interval_without_significance_is_no_change():
    comparison = _judge(*_noisy(random.Random(3), 1.0, noise=0.01))
    benchmark = comparison.benchmarks[0]
    assert benchmark.verdict == "no significant change" and benchmark.pvalue > 0.05
    assert -0.10 < benchmark.low < benchmark.high < 0.10
    assert comparison.exit_status == 0


def test_a_wide_interval_cannot_be_judged_and_says_what_would_decide_it():
    comparison = _judge(*_noisy(random.Random(4), 1.0, rounds=10, noise=0.3))
    benchmark = comparison.benchmarks[0]
    assert benchmark.verdict == "cannot judge" and comparison.exit_status == 4
    assert "beyond ±10%" in benchmark.reason
    rounds = int(benchmark.advice.split("--benchmark_repetitions=")[1].split()[0])
    assert rounds >= 20


def test_too_few_rounds_cannot_be_judged():
    comparison = _judge(*_noisy(random.Random(5), 2.0, rounds=5))
    benchmark = comparison.benchmarks[0]
    assert benchmark.verdict == "cannot judge"
    assert "--benchmark_repetitions=10 (now 5)" in benchmark.advice


def test_identical_values_compare_exactly():
    old = [1e-3, 2e-3, 3e-3]
    comparison = _judge(old, list(old))
    benchmark = comparison.benchmarks[0]
    assert benchmark.verdict == "no significant change" and benchmark.change == 0.0
    assert comparison.exit_status == 0


@pytest.mark.parametrize("low, high, rounds, needed", [
    (-0.2, 0.2, 10, 74), (-0.05, 0.15, 30, 105), (None, None, 5, 10),
])
def test_rounds_needed(low, high, rounds, needed):
    assert paired.rounds_needed(rounds, low, high, 0.10) == needed


def test_the_product_does_not_import_scipy():
    tree = ast.parse((ROOT / "core" / "comparison" / "paired.py").read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree)
                if isinstance(node, ast.Import) for alias in node.names}
    imported |= {(node.module or "").split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom)}
    assert not imported & {"scipy", "numpy"}
