"""The statistics of ``ireebench compare`` against scipy and simulation.

* the U test equals ``scipy.stats.mannwhitneyu(x, y, alternative="two-sided")``
  (statistic and p-value; ``auto``, ``exact`` and ``asymptotic``) on fixed
  samples, on ties and on random samples of every small size;
* the exact distribution of U is a distribution (sums to C(m+n, m)) and
  matches scipy's exact p-values;
* the ratio's interval covers the true factor at least as often as its
  level says, and excludes 1 exactly when the test rejects (no ties);
* scipy is for the tests only: the product does not import it.
"""

from __future__ import annotations

import ast
import math

import numpy as np
import pytest
from conftest import ROOT
from ireebench.comparison import utest
from scipy import stats

FIXED = [
    # (x, y): separated, overlapping, ties across and within, constant, one value
    ([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]),
    ([1.1, 2.2, 3.3, 4.4, 5.5], [3.0, 3.5, 6.1, 7.2]),
    ([1, 2, 2, 3, 3, 3, 4], [2, 3, 3, 4, 5, 5]),
    ([5.0] * 10, [5.0] * 9),
    ([1.0], [2.0]),
    ([0.52, 0.49, 0.50, 0.51, 0.53, 0.50, 0.48, 0.55, 0.51],
     [0.50, 0.52, 0.51, 0.54, 0.49, 0.56, 0.52, 0.53, 0.50]),
    (list(range(20)), list(range(10, 40))),
]


def _close(ours, theirs):
    assert ours.statistic == pytest.approx(float(theirs.statistic), abs=1e-9)
    assert ours.pvalue == pytest.approx(float(theirs.pvalue), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("x, y", FIXED)
@pytest.mark.parametrize("method", ["auto", "asymptotic"])
def test_u_test_matches_scipy_on_fixed_samples(x, y, method):
    _close(utest.mann_whitney_u(x, y, method=method),
           stats.mannwhitneyu(x, y, alternative="two-sided", method=method))


@pytest.mark.parametrize("x, y", [(x, y) for x, y in FIXED if len(set(x + y)) == len(x + y)])
def test_exact_u_test_matches_scipy(x, y):
    _close(utest.mann_whitney_u(x, y, method="exact"),
           stats.mannwhitneyu(x, y, alternative="two-sided", method="exact"))


def test_continuity_correction_can_be_turned_off():
    x, y = FIXED[5]
    for continuity in (True, False):
        _close(utest.mann_whitney_u(x, y, method="asymptotic", continuity=continuity),
               stats.mannwhitneyu(x, y, alternative="two-sided", method="asymptotic",
                                  use_continuity=continuity))


def test_u_test_matches_scipy_on_random_samples():
    rng = np.random.default_rng(20240613)
    for _ in range(600):
        m, n = (int(v) for v in rng.integers(1, 30, size=2))
        shift = rng.uniform(-1.0, 1.0)
        x, y = rng.lognormal(0.0, 0.3, m), rng.lognormal(shift, 0.3, n)
        if rng.random() < 0.3:  # timer resolution: ties
            x, y = np.round(x, 1), np.round(y, 1)
        methods = ["auto", "asymptotic"]
        if np.unique(np.concatenate((x, y))).size == m + n:
            methods.append("exact")
        for method in methods:
            _close(utest.mann_whitney_u(x, y, method=method),
                   stats.mannwhitneyu(x, y, alternative="two-sided", method=method))


def test_auto_chooses_as_scipy():
    assert utest.choose_method(8, 50, False) == "exact"
    assert utest.choose_method(9, 9, False) == "asymptotic"
    assert utest.choose_method(3, 3, True) == "asymptotic"


@pytest.mark.parametrize("m, n", [(1, 1), (2, 5), (7, 3), (9, 9), (12, 20)])
def test_u_distribution_counts_every_ordering(m, n):
    counts = utest.u_counts(m, n)
    assert len(counts) == m * n + 1
    assert sum(counts) == math.comb(m + n, m)
    assert counts == counts[::-1]  # symmetric
    assert min(counts) >= 1


def test_u_test_refuses_bad_samples():
    with pytest.raises(ValueError, match="empty"):
        utest.mann_whitney_u([], [1.0])
    with pytest.raises(ValueError, match="finite"):
        utest.mann_whitney_u([1.0, math.nan], [1.0])
    with pytest.raises(ValueError, match="method"):
        utest.mann_whitney_u([1.0], [2.0], method="permutation")


def test_interval_rank_matches_published_critical_values():
    # Two-sided 5% critical values of U (reject when U <= c): c = 17 for 9/9,
    # 23 for 10/10, 2 for 5/5; the interval's lower rank is c + 1.
    assert utest.interval_rank(9, 9, 0.95, "exact") == 18
    assert utest.interval_rank(10, 10, 0.95, "exact") == 24
    assert utest.interval_rank(5, 5, 0.95, "exact") == 3
    assert utest.interval_rank(3, 3, 0.95, "exact") == 0  # too few: unbounded


def test_hodges_lehmann_ratio_of_a_pure_factor():
    old = [1.0, 1.1, 1.3, 0.9, 1.2, 1.05, 0.95, 1.15, 1.25]
    interval = utest.ratio_interval(old, [2.0 * v for v in old], 0.95)
    assert interval.ratio == pytest.approx(2.0)
    assert interval.low <= 2.0 <= interval.high


def test_interval_is_unbounded_when_too_small_for_its_level():
    interval = utest.ratio_interval([1.0, 1.1], [2.0, 2.2], 0.95)
    assert interval.ratio == pytest.approx(2.0, rel=0.06)
    assert interval.low is None and interval.high is None


def test_interval_refuses_non_positive_times_and_bad_levels():
    with pytest.raises(ValueError, match="positive"):
        utest.ratio_interval([0.0, 1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="confidence"):
        utest.ratio_interval([1.0], [1.0], confidence=1.0)


def test_interval_coverage_and_agreement_with_the_test():
    """On simulated run times (log-normal noise, a true factor), the 90% interval
    covers the factor at least ~90% of the time, and excludes 1 exactly when
    the U test rejects at alpha = 0.10."""
    rng = np.random.default_rng(7)
    covered = trials = 0
    for _ in range(800):
        m, n = (int(v) for v in rng.integers(5, 16, size=2))
        factor = float(np.exp(rng.uniform(-0.2, 0.2)))
        old = rng.lognormal(0.0, 0.1, m)
        new = factor * rng.lognormal(0.0, 0.1, n)
        interval = utest.ratio_interval(old, new, 0.90)
        trials += 1
        covered += interval.low <= factor <= interval.high
        rejects = utest.mann_whitney_u(old, new).pvalue < 0.10
        assert (not interval.low <= 1.0 <= interval.high) == rejects
    assert covered / trials >= 0.88


def test_geometric_mean():
    assert utest.geometric_mean([1.0, 4.0]) == pytest.approx(2.0)
    assert utest.geometric_mean([0.5, 2.0, 1.0]) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        utest.geometric_mean([1.0, -1.0])


def test_the_product_does_not_use_scipy():
    for directory in ("core", "plugins"):
        for path in (ROOT / directory).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                names = []
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom):
                    names = [node.module or ""]
                assert not any(name.split(".")[0] == "scipy" for name in names), path


# --- the correction over a suite, the shift, the detectable change ----------------


@pytest.mark.parametrize("seed", range(6))
def test_benjamini_hochberg_is_scipys(seed):
    pvalues = list(np.random.default_rng(seed).uniform(0, 0.2, size=int(3 + seed * 4)))
    ours = utest.adjusted_pvalues(pvalues, "bh")
    assert ours == pytest.approx(list(stats.false_discovery_control(pvalues, method="bh")))


def test_holm_steps_down_and_none_keeps_them():
    pvalues = [0.01, 0.04, 0.03, 0.5, 0.001]
    # Sorted 0.001, 0.01, 0.03, 0.04, 0.5 times 5, 4, 3, 2, 1, made monotone, capped.
    assert utest.adjusted_pvalues(pvalues, "holm") == pytest.approx([0.04, 0.09, 0.09, 0.5,
                                                                     0.005])
    assert utest.adjusted_pvalues(pvalues, "none") == pvalues
    assert utest.adjusted_pvalues([0.2], "bh") == [0.2]
    with pytest.raises(ValueError, match="unknown correction"):
        utest.adjusted_pvalues(pvalues, "bonferroni")


def test_the_correction_keeps_the_family_wise_rate_of_identical_suites():
    """On identical builds every null is true: the chance that any of 20 benchmarks is
    significant is about 1 - 0.95**20 = 64 % uncorrected, at most 5 % corrected."""
    rng = np.random.default_rng(7)
    trials, any_false = 400, {"none": 0, "bh": 0, "holm": 0}
    for _ in range(trials):
        pvalues = [utest.mann_whitney_u(rng.normal(1, 0.02, 9), rng.normal(1, 0.02, 9)).pvalue
                   for _ in range(20)]
        for correction in any_false:
            if min(utest.adjusted_pvalues(pvalues, correction)) < 0.05:
                any_false[correction] += 1
    assert any_false["none"] / trials > 0.4
    assert any_false["bh"] / trials <= 0.07 and any_false["holm"] / trials <= 0.07


def test_the_shift_interval_is_the_additive_hodges_lehmann():
    old, new = [0, 1, 0, 2, 0, 1, 0, 0, 1], [5, 6, 5, 7, 6, 5, 6, 7, 5]
    interval = utest.shift_interval(old, new, 0.95)
    assert interval.ratio == float(np.median(np.subtract.outer(new, old)))
    assert interval.low <= interval.ratio <= interval.high and interval.low > 0
    # The same ranks as the ratio's interval: on the logarithms they are one interval.
    x, y = [1.0, 1.2, 1.1, 1.3, 1.25], [1.4, 1.5, 1.45, 1.6, 1.55]
    shift = utest.shift_interval(np.log(x), np.log(y), 0.9)
    ratio = utest.ratio_interval(x, y, 0.9)
    assert math.exp(shift.low) == pytest.approx(ratio.low)
    assert math.exp(shift.high) == pytest.approx(ratio.high)


def test_the_detectable_change_is_half_the_interval():
    old = [1 + i / 100 for i in range(9)]
    interval = utest.ratio_interval(old, old, 0.95)
    assert utest.detectable_ratio(old, old, 0.05) == pytest.approx(
        math.sqrt(interval.high / interval.low))
    # A change by more than it is significant, by less is not.
    factor = utest.detectable_ratio(old, old, 0.05)
    assert utest.mann_whitney_u(old, [v * factor * 1.01 for v in old]).pvalue < 0.05
    assert utest.mann_whitney_u(old, [v * (1 + (factor - 1) / 2) for v in old]).pvalue > 0.05
    assert utest.detectable_ratio(old[:3], old[:3], 0.05) is None  # 3 vs 3: never significant
