"""The gate against a history (``comparison.history``), disturbances
(``comparison.disturbance``), the suite's verdicts (``comparison.judgement``)
and change points (``comparison.changes``) on fixed data; PELT against
ruptures'."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from ireebench.comparison import (
    CANNOT_JUDGE,
    EXIT_CANNOT_JUDGE,
    CompareOptions,
    benchmark_file,
    compare,
    parse_threshold,
)
from ireebench.comparison.changes import (
    PENALTY,
    RunValues,
    change_points,
    noise_sigma,
    on_their_level,
    pelt,
)
from ireebench.comparison.disturbance import (
    benchmark_disturbances,
    cpu_share,
    run_disturbances,
)
from ireebench.comparison.history import compare_history, run_spread
from ireebench.comparison.machine import describe_machine, machine_fingerprint
from ireebench.comparison.model import FASTER, INCONCLUSIVE, NO_CHANGE, SLOWER

NAME = "BM_f/process_time/real_time"


def report(label: str, times_ms, name: str = NAME, context=None):
    rows = [{"name": name, "run_name": name, "run_type": "iteration", "iterations": 1,
             "real_time": t, "cpu_time": t, "time_unit": "ms"} for t in times_ms]
    return benchmark_file(label, {"context": context or {}, "benchmarks": rows})


def spread(center: float, width: float, n: int = 9) -> list[float]:
    return list(np.linspace(center - width, center + width, n))


OPTIONS = CompareOptions(thresholds=(parse_threshold("5%"),))


def test_a_new_median_inside_the_band_is_no_change_even_when_the_test_rejects():
    """Four runs that drifted between 1.0 and 1.2 ms: a new run at 1.19 ms is
    significant against the pooled runs but inside their band."""
    history = [report(f"stored:{i}", spread(c, 0.01)) for i, c in
               enumerate((1.0, 1.0, 1.0, 1.2))]
    new = report("new.json", spread(1.19, 0.005))
    comparison = compare_history(history, new, OPTIONS, "stored:history")
    [bench] = comparison.benchmarks
    assert bench.pvalue < 0.05 and bench.change > 0.05  # the U test alone would fail it
    assert bench.verdict == NO_CHANGE and not bench.regression
    # Said beside the verdict, not in a note: the run-level test does not reject
    # (1.19 is within what four runs from 1.0 to 1.2 have done).
    assert "within the runs' own spread" in bench.reason and bench.run_pvalue > 0.05
    # One stored run (no run-level test): the band alone demotes it.
    skewed = [1.0 + 0.001 * i for i in range(9)] + [1.2, 1.21, 1.22]  # interval [1.002, 1.2]
    [one] = compare_history([report("stored:0", skewed)],
                            report("new.json", spread(1.1, 0.002, 20)), OPTIONS).benchmarks
    assert one.pvalue < 0.05 and one.run_pvalue is None and one.verdict == NO_CHANGE
    assert "but within the band: the stored runs drifted as much" in one.reason
    assert bench.band_low == pytest.approx(0.9925e-3)
    assert bench.band_high == pytest.approx(1.2075e-3)
    assert bench.baseline_runs == ["stored:0", "stored:1", "stored:2", "stored:3"]
    assert comparison.exit_status == 0 and comparison.history == bench.baseline_runs


def test_above_the_band_significant_and_beyond_the_threshold_is_a_regression():
    history = [report(f"stored:{i}", spread(c, 0.01)) for i, c in enumerate((1.0, 1.02))]
    comparison = compare_history(history, report("new.json", spread(1.5, 0.01)), OPTIONS)
    [bench] = comparison.benchmarks
    assert bench.verdict == SLOWER and bench.regression and comparison.exit_status == 1
    assert bench.n_old == 18 and bench.n_new == 9
    within = compare_history(history, report("new.json", spread(1.5, 0.01)),
                             CompareOptions(thresholds=(parse_threshold("60%"),)))
    assert within.benchmarks[0].verdict == SLOWER and within.exit_status == 0
    faster = compare_history(history, report("new.json", spread(0.5, 0.01)), OPTIONS)
    assert faster.benchmarks[0].verdict == FASTER and faster.exit_status == 0


def test_too_few_new_repetitions_is_inconclusive():
    history = [report("stored:a", spread(1.0, 0.01))]
    comparison = compare_history(history, report("new.json", [3.0, 3.1, 3.2]), OPTIONS)
    assert comparison.benchmarks[0].verdict == INCONCLUSIVE
    # 3x slower but unseen: never a pass (exit 4), unless accepted.
    assert comparison.exit_status == 4
    accepted = compare_history(history, report("new.json", [3.0, 3.1, 3.2]),
                               replace(OPTIONS, accept_cannot_judge=True))
    assert accepted.exit_status == 0


def test_an_empty_history_compares_nothing_and_passes():
    comparison = compare_history([], report("new.json", spread(1.0, 0.01)), OPTIONS,
                                 "stored:history", ["stored:history: no stored run here"])
    assert comparison.benchmarks == [] and comparison.only_new == [NAME]
    assert comparison.exit_status == 0
    assert comparison.notes == ["stored:history: no stored run here",
                                "nothing compared: no baseline yet"]


def test_a_benchmark_uses_the_runs_that_measured_it():
    history = [report("stored:a", spread(1.0, 0.01)),
               report("stored:b", spread(2.0, 0.01), name="BM_other")]
    comparison = compare_history(history, report("new.json", spread(1.0, 0.01)), OPTIONS)
    assert comparison.benchmarks[0].baseline_runs == ["stored:a"]


def test_run_spread_is_the_median_interval_or_the_range():
    nine = run_spread("r", [float(v) for v in range(1, 10)], 0.95)
    assert (nine.median, nine.low, nine.high) == (5.0, 2.0, 8.0)  # order statistics 2 and 8
    three = run_spread("r", [1.0, 2.0, 9.0], 0.95)
    assert (three.low, three.high) == (1.0, 9.0)


def test_the_fingerprint_is_the_machine_not_the_moment():
    context = {"host_name": "a", "num_cpus": 2, "iree_devices": ["local-task"],
               "date": "2026-01-01", "load_avg": [1.0]}
    later = dict(context, date="2026-02-02", load_avg=[3.0], mhz_per_cpu=1)
    assert machine_fingerprint(context) == machine_fingerprint(later)
    assert machine_fingerprint(context) != machine_fingerprint(dict(context, host_name="b"))
    assert machine_fingerprint(context) != machine_fingerprint(
        dict(context, iree_devices=["cuda"]))
    pool = dict(context, machine="pool-a")
    assert machine_fingerprint(pool) == machine_fingerprint(dict(pool, host_name="other"))
    assert describe_machine(context) == "a (2 CPUs, local-task)"


@pytest.mark.parametrize("seed", range(8))
def test_pelt_finds_what_ruptures_finds(seed):
    ruptures = pytest.importorskip("ruptures")
    rng = np.random.default_rng(seed)
    levels = rng.choice([0.0, 1.0, 3.0], size=4)
    signal = np.concatenate([rng.normal(level, 0.3, rng.integers(3, 12)) for level in levels])
    for penalty in (0.5, 2.0, 8.0):
        expected = ruptures.Pelt(model="l1", min_size=2, jump=1).fit(signal).predict(
            pen=penalty)
        assert pelt(signal, penalty) + [len(signal)] == expected


def test_change_points_find_a_step_and_no_step_in_noise():
    rng = np.random.default_rng(1)

    def run(level):
        return RunValues("r", list(level * (1 + rng.normal(0, 0.02, 9))))

    flat = [run(1.0) for _ in range(12)]
    assert change_points(flat) == []
    step = [run(1.0) for _ in range(5)] + [run(1.5) for _ in range(5)]
    [change] = change_points(step)
    assert change.index == 5 and change.runs_before == 5 and change.runs_after == 5
    assert 0.4 < change.change < 0.6 and change.pvalue < 1e-4
    # One outlying run is not a level.
    spike = [run(1.0) for _ in range(5)] + [run(3.0)] + [run(1.0) for _ in range(5)]
    assert change_points(spike) == []
    assert math.isfinite(noise_sigma(step))


def test_a_level_starts_with_a_run_on_that_level():
    """PELT's levels are two runs or more: five runs alike, one a little slower, then
    the latest far slower, come out as a level of the last two. The little slower run
    is the old level's, so that is no level yet (the report's headline then names the
    latest, not the run before it); a second far slower run makes it one, from the
    first far slower run."""
    rng = np.random.default_rng(2)

    def run(level):
        return RunValues("r", list(level * (1 + rng.normal(0, 0.01, 9))))

    history = [run(1.0) for _ in range(4)] + [run(1.13)]
    latest = [*history, run(1.87)]
    logs = [math.log(np.median(each.values)) for each in latest]
    penalty = PENALTY * noise_sigma(latest) * math.sqrt(2 / math.pi) * math.log(len(latest))
    assert pelt(logs, penalty) == [4]  # PELT alone: a level of the last two
    assert change_points(latest) == []
    [change] = change_points([*history, run(1.87), run(1.87)])
    assert change.index == 5 and change.runs_after == 2
    assert on_their_level([0.0] * 4 + [0.1, 0.6, 0.6], [4]) == [5]


# --- disturbances: what a report says of its machine ------------------------------

LOADED = {"ireebench_version": "0", "environment_warnings": {
    "load_average": "load average 3.03 is above the 2 CPUs: other work competes for them",
    "aslr": "ASLR is enabled: ..."}}
GATE = CompareOptions(thresholds=(parse_threshold("5%"),), detectable=0.10, correction="bh")
GATE_OPTIONS = GATE


def timed(label, real, cpu=None, context=None, devices=None, findings=None):
    cpu = real if cpu is None else cpu
    rows = [{"name": NAME, "run_name": NAME, "run_type": "iteration", "iterations": 1,
             "real_time": r, "cpu_time": c, "time_unit": "ms",
             **({"iree_devices": devices} if devices else {})} for r, c in zip(real, cpu)]
    report = {"context": context or {}, "benchmarks": rows}
    if findings:
        report["findings"] = findings
    return benchmark_file(label, report)


def test_what_disturbs_a_run():
    assert [str(d) for d in run_disturbances(timed("r", [1.0], context=LOADED))] == [
        "load average 3.03 is above the 2 CPUs"]  # ASLR is the machine, not the moment
    native = {"load_avg": [3.5, 1.0, 1.0], "num_cpus": 2}
    assert [d.what for d in run_disturbances(timed("n", [1.0], context=native))] == [
        "load_average"]
    # ireebench with its checks off says nothing of the load: nothing is assumed.
    assert run_disturbances(timed("i", [1.0], context={**native, "ireebench_version": "0"})) \
        == []


def test_what_disturbs_a_benchmark():
    real = [1.0] * 5
    preempted = timed("p", real, [0.5] * 5, devices=["local-sync"])
    assert cpu_share(preempted.benchmarks[NAME]) == 0.5
    [share] = benchmark_disturbances(preempted, preempted.benchmarks[NAME])
    assert share.what == "cpu_share" and "CPU share 0.50" in str(share)
    # local-task runs on a pool of threads: its CPU share says nothing of preemption.
    pool = timed("t", real, [0.5] * 5, devices=["local-task"])
    assert benchmark_disturbances(pool, pool.benchmarks[NAME]) == []
    context_devices = timed("c", real, [0.5] * 5, context={"iree_devices": ["local-sync"]})
    assert benchmark_disturbances(context_devices, context_devices.benchmarks[NAME])
    bimodal = timed("b", real, findings={"multimodal_repetitions": {NAME: {
        "metric": "cpu_time", "groups": [{"repetitions": 3}, {"repetitions": 2}]}}})
    [regimes] = benchmark_disturbances(bimodal, bimodal.benchmarks[NAME])
    assert str(regimes) == "repetitions form 2 separate groups in CPU time (3 + 2 repetitions)"


def test_a_disturbed_stored_run_is_left_out_and_when_all_are_they_are_kept():
    quiet = [report(f"stored:{i}", spread(1.0, 0.01)) for i in range(2)]
    loaded = timed("stored:bad", spread(3.0, 0.01), context=LOADED)
    new = report("new.json", spread(1.5, 0.01))
    [bench] = compare_history([loaded, *quiet], new, GATE).benchmarks
    assert bench.baseline_runs == ["stored:0", "stored:1"] and bench.regression
    assert bench.left_out == ["stored:bad (load average 3.03 is above the 2 CPUs)"]
    # Every run disturbed: all kept (the band is theirs), and a note says so.
    [bench] = compare_history([loaded], new, GATE).benchmarks
    assert bench.baseline_runs == ["stored:bad"] and bench.left_out == []
    assert any("every stored run was disturbed (load above the CPUs): the baseline is" in note
               for note in bench.notes)


def test_a_slowdown_that_the_drop_of_the_cpu_share_explains_cannot_be_judged():
    """Against quiet runs, a slowdown in real time no larger than the drop of the CPU
    share cannot be judged; like with like (stored runs with the same share) it
    stands. (--metric=auto, the default, compares the CPU time on local-sync.)"""
    GATE = replace(GATE_OPTIONS, metric="real_time")
    sync = {"iree_devices": ["local-sync"]}
    new = timed("new.json", spread(2.0, 0.01), spread(1.0, 0.005), context={**LOADED, **sync})
    quiet = [timed(f"stored:{i}", spread(1.0, 0.01), context=sync) for i in range(3)]
    [bench] = compare_history(quiet, new, GATE).benchmarks
    assert bench.verdict == CANNOT_JUDGE and bench.advice == "re-run advised"
    assert "slower in real time, but its CPU share fell 2.00x" in bench.reason
    loaded = [timed(f"stored:{i}", spread(1.0, 0.01), spread(0.5, 0.005),
                    context={**LOADED, **sync}) for i in range(3)]
    [bench] = compare_history(loaded, new, GATE).benchmarks
    assert bench.verdict == SLOWER and bench.regression and bench.advice == "re-run advised"
    # Four times slower where the share fell 2x: beyond what the share explains.
    slower = timed("new.json", spread(4.0, 0.01), spread(2.0, 0.005), context={**LOADED, **sync})
    [bench] = compare_history(quiet, slower, GATE).benchmarks
    assert bench.verdict == SLOWER and bench.regression


def test_two_reports_the_detectable_change_and_the_exit_status():
    noisy_old = report("old.json", [1.0, 1.3, 0.8, 1.2, 0.9, 1.1, 1.25, 0.85, 1.05])
    noisy_new = report("new.json", [1.02, 1.28, 0.82, 1.18, 0.92, 1.12, 1.2, 0.88, 1.0])
    comparison = compare(noisy_old, noisy_new, GATE)
    [bench] = comparison.benchmarks
    assert bench.verdict == CANNOT_JUDGE and bench.detectable > 0.10
    assert comparison.exit_status == EXIT_CANNOT_JUDGE
    accepted = compare(noisy_old, noisy_new, CompareOptions(detectable=0.10,
                                                            accept_cannot_judge=True))
    assert accepted.exit_status == 0 and accepted.benchmarks[0].verdict == CANNOT_JUDGE
    # The engine's default (detectable None) never says "cannot judge".
    assert compare(noisy_old, noisy_new, CompareOptions()).benchmarks[0].verdict == NO_CHANGE
    tight = compare(report("old.json", spread(1.0, 0.01)), report("new.json", spread(1.0, 0.01)),
                    GATE)
    assert tight.benchmarks[0].verdict == NO_CHANGE and tight.benchmarks[0].detectable < 0.10


# --- issue 37: verdicts a history of any size can give -----------------------------


def test_a_change_beyond_every_stored_run_is_judged_from_two_runs():
    """Two stored runs leave the run-level test one degree of freedom (it could see
    only changes of hundreds of percent): a new run whose median interval lies
    beyond every stored repetition is judged by the U test all the same."""
    history = [report("stored:1", spread(1.0, 0.05)), report("stored:0", spread(1.04, 0.05))]
    [bench] = compare_history(history, report("new.json", spread(4.0, 0.05)), GATE).benchmarks
    assert bench.verdict == SLOWER and bench.regression and bench.run_pvalue is None
    assert any("2 stored run(s): judged by the repetitions' U test" in n for n in bench.notes)
    [bench] = compare_history(history, report("new.json", spread(0.25, 0.01)), GATE).benchmarks
    assert bench.verdict == FASTER and not bench.regression
    # Beyond the envelope by less than the threshold (5 %): not a verdict of its own.
    [bench] = compare_history(history, report("new.json", spread(1.12, 0.001)),
                              replace(GATE, thresholds=(parse_threshold("20%"),))).benchmarks
    assert not bench.regression
    # Three runs that drifted 2x: the run-level test cannot see 2.3x, the envelope can.
    history = [report(f"stored:{i}", spread(level, 0.05)) for i, level in
               enumerate((1.0, 1.5, 0.7))]
    [bench] = compare_history(history, report("new.json", spread(3.5, 0.05)), GATE).benchmarks
    assert bench.run_pvalue > 0.05 and bench.verdict == SLOWER and bench.regression
    assert "beyond every stored run: its median's interval" in bench.reason
    assert "lies more than 5% above the highest repetition of the 3 stored run(s)" in \
        bench.reason


def test_a_new_run_within_a_noisy_history_passes_and_says_what_it_could_see():
    """Five stored runs that drifted ±8 % and a sixth of the same code: no
    significant change, exit 0 (not 'cannot judge'), and a note of the smallest
    change this history could have shown."""
    levels = [1.0, 1.08, 0.93, 1.05, 0.96]
    history = [report(f"stored:{i}", spread(level, 0.02)) for i, level in enumerate(levels)]
    comparison = compare_history(history, report("new.json", spread(1.01, 0.02)), GATE)
    [bench] = comparison.benchmarks
    assert bench.verdict == NO_CHANGE and comparison.exit_status == 0
    assert bench.detectable > GATE.detectable
    assert any("within the 5 stored run(s)' band: passes; only a change of" in note
               for note in bench.notes)


def test_a_disturbed_run_that_measured_like_the_quiet_ones_is_kept():
    """A stored run measured under load whose median lies within the quiet runs' band
    is kept (the disturbance did not show); one far outside it is left out; with a
    single quiet run every run is kept (a baseline of one run cannot learn the drift)."""
    quiet = [report(f"stored:{i}", spread(1.0 + 0.01 * i, 0.02)) for i in range(2)]
    alike = timed("stored:alike", spread(1.005, 0.02), context=LOADED)
    apart = timed("stored:apart", spread(2.0, 0.02), context=LOADED)
    new = report("new.json", spread(1.0, 0.02))
    [bench] = compare_history([alike, apart, *quiet], new, GATE).benchmarks
    assert bench.baseline_runs == ["stored:alike", "stored:0", "stored:1"]
    assert bench.left_out == ["stored:apart (load average 3.03 is above the 2 CPUs)"]
    [bench] = compare_history([alike, apart, quiet[0]], new, GATE).benchmarks
    assert bench.baseline_runs == ["stored:alike", "stored:apart", "stored:0"]
    assert any("1 quiet stored run(s), fewer than 2: the disturbed ones are kept too" in note
               for note in bench.notes)


def test_auto_compares_the_cpu_time_on_local_sync_and_the_load_does_not_disturb_it():
    """--metric=auto (the default): on local-sync the CPU time, and a stored run's load
    does not leave it out of a CPU-time baseline; elsewhere the real time."""
    sync = ["local-sync"]
    history = [timed(f"stored:{i}", spread(3.0, 0.02), spread(1.0 + 0.01 * i, 0.01),
                     context=LOADED, devices=sync) for i in range(3)]
    new = timed("new.json", spread(1.0, 0.01), spread(1.0, 0.01), devices=sync)
    [bench] = compare_history(history, new, GATE).benchmarks
    assert bench.metric == "cpu_time" and bench.verdict == NO_CHANGE
    assert len(bench.baseline_runs) == 3 and bench.left_out == []
    assert "compared on cpu_time (--metric=auto" in bench.notes[0]
    task = ["local-task"]
    history = [timed(f"stored:{i}", spread(1.0, 0.02), devices=task) for i in range(3)]
    [bench] = compare_history(history, timed("new.json", spread(1.0, 0.02), devices=task),
                              GATE).benchmarks
    assert bench.metric == "real_time"
