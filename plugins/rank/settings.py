"""The options of ``ireebench rank`` and what they mean for a ranking.

The rank command takes every option of a run (``--function``,
``--input``, the measurement flags, ``--device_time``, the reports,
``--benchmark_save``, runtime flags) plus these, which
:func:`add_options` adds to its command line only. :func:`settings`
reads them into :class:`RankSettings`, one line for a bad value;
:func:`derived` makes the configuration of a ranking (or of its worker on a
node) from the command line's, never editing it.

Defaults for a ranking that holds, where the command line says nothing
(:data:`RUN_DEFAULTS`): short repetitions (``--benchmark_min_time=0.01s``)
measured until the median is within 2 % (``--benchmark_min_rel_accuracy=0.02``,
the ``statistics`` plugin's adaptive stopping), at most 1 s a candidate
(``--benchmark_max_time=1s``), only the aggregates in the rows, and no
multimodality warning per measurement.
"""

from __future__ import annotations

import math
import os
import random
from dataclasses import dataclass

from ireebench.config import Config
from ireebench.errors import UsageError

from .cache import default_path
from .candidates import refuse_special
from .devices import parse_device_list
from .results import METRICS

GROUP = "Ranking (ireebench rank)"
DEFAULT_BASELINE_EVERY = 8
DEFAULT_RERANK_TOP = 5
DEFAULT_RERANK_ROUNDS = 10
DEFAULT_TIMEOUT_FACTOR = 3.0
DEFAULT_ROTATE_INPUTS = 3  # the --input values and two redrawn sets
# Added to every derived timeout: a worker's own jitter (a context made, a
# page fault) must not turn a candidate as fast as the baseline into a timeout.
TIMEOUT_SLACK = 0.5
CACHE_OFF = ("off", "none")

# Run options whose default a ranking changes (when the command line leaves them).
RUN_DEFAULTS = {
    "benchmark_min_time": "0.01s",
    "benchmark_min_rel_accuracy": "0.02",
    "benchmark_display_aggregates_only": True,
    # A ranking's answer is its table: a warning per measurement that forms groups
    # (the baseline's, every K candidates) would bury it; --multimodal_warnings=true
    # asks for them.
    "multimodal_warnings": False,
}
ADAPTIVE_MAX_TIME = "1s"  # --benchmark_max_time with the default accuracy


def add_options(parser) -> None:
    """The rank command's own options (owned by the ``rank`` plugin)."""
    add = parser.addoption
    add("--baseline", "baseline", default="", group=GROUP, metavar="FILE",
        help="The module every candidate is compared with (.vmfb, or .mlir compiled): "
             "measured first on every device, again every --baseline_every candidates.")
    add("--devices", "devices", default="", group=GROUP, metavar="URI,...",
        help="Devices to rank on, one warm worker each, as libtuner names them "
             "(hip://0,hip://GPU-UUID, cuda://0, local-sync); default --device, else "
             "local-task.")
    add("--cpu_workers", "cpu_workers", type=int, default=1, group=GROUP, metavar="N",
        help="Workers per CPU device (local-sync, local-task), each pinned to its own CPUs "
             "(this process's CPUs split in order).")
    add("--cpu_sets", "cpu_sets", default="", group=GROUP, metavar="LIST:LIST...",
        help="The CPUs of each CPU worker instead, in taskset -c lists: --cpu_sets=0-1:2-3.")
    add("--baseline_every", "baseline_every", type=int, default=DEFAULT_BASELINE_EVERY,
        group=GROUP, metavar="K",
        help=f"Measure the baseline again on a device after every K candidates there "
             f"(default {DEFAULT_BASELINE_EVERY}); each candidate's ratio uses the baseline "
             "interpolated between the measurements around it (drift).")
    add("--rerank_top", "rerank_top", type=int, default=DEFAULT_RERANK_TOP, group=GROUP,
        metavar="K",
        help=f"Re-rank the best K candidates (default {DEFAULT_RERANK_TOP}; 0: none) and "
             "the baseline on the first device, paired and interleaved round by round.")
    add("--rerank_rounds", "rerank_rounds", type=int, default=DEFAULT_RERANK_ROUNDS,
        group=GROUP, metavar="R",
        help=f"Rounds of the re-rank (default {DEFAULT_RERANK_ROUNDS}): one repetition of "
             "each member per round, in a fresh random order.")
    add("--rank_seed", "rank_seed", type=int, default=None, group=GROUP, metavar="N",
        help="Seed of the re-rank's orders (default: random, recorded in the ranking).")
    add("--rank_by", "rank_by", default="", group=GROUP, metavar="real_time|cpu_time|device_time",
        help="The time the ranking compares: the metric that measured the work by default "
             "(device_time with --device_time, which it needs; cpu_time when every device is "
             "local-sync, whose worker thread does all the work and whose wall clock counts "
             "waits for a CPU on a shared machine; real_time elsewhere), or any of "
             "real_time, cpu_time, device_time.")
    add("--check_outputs", "check_outputs", type=bool, default=True, group=GROUP,
        help="Compare each candidate's outputs with the baseline's (--expected_*_threshold, "
             "--expected_rtol, --equality_mode): a mismatch is wrong_output. Default true: "
             "a tuned kernel that wins by doing less is caught.")
    add("--rotate_inputs", "rotate_inputs", type=int, default=DEFAULT_ROTATE_INPUTS,
        group=GROUP, metavar="N",
        help="With --check_outputs, N distinct input sets: the timed calls take the --input "
             "values, then each candidate runs once, untimed, on each of N-1 others (float "
             "tensors redrawn from a seeded generator; integers and scalars as given), its "
             "outputs compared with the baseline's on the same set: a result kept across "
             "calls, or right for one input only, is wrong_output. 1: the --input values "
             f"only. Default {DEFAULT_ROTATE_INPUTS}.")
    add("--candidate_timeout", "candidate_timeout", default="", group=GROUP,
        metavar="SECONDS",
        help="Seconds a candidate may hold its device, from the moment it starts there; "
             "default derived from the baseline's measurement on that device "
             "(see --timeout_factor).")
    add("--timeout_factor", "timeout_factor", default=str(DEFAULT_TIMEOUT_FACTOR),
        group=GROUP, metavar="F",
        help=f"The derived timeout: F times the baseline's time on the device (with "
             f"adaptive stopping at least --benchmark_max_time plus F times its load and "
             f"one repetition), plus {TIMEOUT_SLACK:g} s (default {DEFAULT_TIMEOUT_FACTOR:g}).")
    add("--rank_budget", "rank_budget", default="", group=GROUP, metavar="SECONDS",
        help="Time budget of the whole ranking: then it stops, keeping what it measured "
             "(rerun the same command to resume from the cache).")
    add("--race_budget", "race_budget", default="", group=GROUP, metavar="DEVICE_SECONDS",
        help="Race the candidates within this much device time: a third on a brief first "
             "pass (each candidate's measurement capped at its share), then every candidate "
             "not clearly slower than the leader (at most --rerank_top) re-ranked paired "
             "with the rest (docs/tuning.md, 'Racing under a budget').")
    add("--rank_out", "rank_out", default="", group=GROUP, metavar="FILE",
        help="Write the ranking as JSON (atomically, also when stopped early).")
    add("--rank_rows", "rank_rows", type=bool, group=GROUP,
        help="Also show every measurement's Google Benchmark rows on the console, before the "
             "ranking (they always go to --benchmark_out and the store).")
    add("--rank_stream", "rank_stream", default="", group=GROUP, metavar="FILE",
        help="Write each result as a JSON line the moment it is known.")
    add("--rank_cache", "rank_cache", default=str(default_path()), group=GROUP,
        metavar="FILE|off",
        help="The cache of measurements (JSON lines): a rerun measures only what it has "
             "not measured, an interrupted ranking resumes; off: no cache.")
    add("--remeasure", "remeasure", type=bool, group=GROUP,
        help="Measure everything again (the cache is still written).")
    add("--replay", "replay", default="", group=GROUP, metavar="FILE.ireereplay",
        help="Rank executable payloads for one executable of this capture "
             "(--device_replay_output) by the whole model's replayed time with each "
             "substituted (iree-benchmark-replay); the baseline is the capture unchanged. "
             "See docs/tuning.md.")
    add("--executable", "executable", default="", group=GROUP, metavar="ID[@FORMAT]",
        help="With --replay: the captured executable the candidates replace "
             "(iree-dump-replay lists them).")
    add("--replay_scope", "replay_scope", default="execute", group=GROUP, metavar="NAME",
        help="With --replay: time the regions inside these scope markers (default execute, "
             "the benchmark's timed work; empty: the whole replay).")
    add("--rank_serve", "rank_serve", default="", group=GROUP, hidden=True,
        help="On a cluster's node: serve as one device's warm worker (plugins/rank/serve.py).")


@dataclass
class RankSettings:
    baseline: str
    devices: list[str]
    cpu_workers: int
    cpu_sets: str
    baseline_every: int
    rerank_top: int
    rerank_rounds: int
    seed: int
    check_outputs: bool
    rotate_inputs: int
    candidate_timeout: float | None
    timeout_factor: float
    budget: float | None
    race_budget: float | None
    rank_out: str
    rank_stream: str
    rank_rows: bool
    cache: str | None
    remeasure: bool
    adaptive: bool  # --benchmark_min_rel_accuracy
    max_time: float | None  # its --benchmark_max_time
    metric: str  # --rank_by
    replay: str = ""  # --replay: the capture, whose unchanged replay is the baseline
    executable: str = ""


def _seconds(flag: str, text: str) -> float | None:
    text = str(text or "").strip()
    if not text:
        return None
    try:
        value = float(text.removesuffix("s"))
    except ValueError:
        value = math.nan
    if not 0 < value < math.inf:
        raise UsageError(f"--{flag}={text}: expected a positive number of seconds")
    return value


def _at_least(config, name: str, low: int) -> int:
    value = config.getoption(name)
    if value < low:
        raise UsageError(f"--{name}={value}: must be at least {low}")
    return value


def device_list(config) -> list[str]:
    """``--devices``, else the ``--device`` value, else local-task."""
    text = config.getoption("devices")
    given = list(config.getoption("device") or [])
    if text and given:
        raise UsageError("rank: give the devices with --devices=A,B (not --device too)")
    if len(given) > 1:
        raise UsageError(f"rank: --device={given[0]} --device={given[1]}: a ranking runs on "
                         "--devices=A,B, one worker each (a repeated --device makes one "
                         "multi-device session)")
    return parse_device_list(text) if text else (given or ["local-task"])


# What a ranking by replay cannot use: the capture holds the module's work.
REPLAY_REFUSED = {
    "baseline": "the baseline is the capture replayed unchanged",
    "function": "the capture holds the function's work",
    "input": "the capture holds the inputs",
    "parameters": "the capture holds or references the parameters",
    "device_time": "a replay has no profiling pass; it is ranked by the replay's time",
}


def _replay(config) -> None:
    """``--replay``'s checks (one line each); ``--executable`` alone is refused too."""
    replay = config.getoption("replay")
    if not replay:
        if config.getoption("executable"):
            raise UsageError("--executable: only with --replay=CAPTURE.ireereplay")
        return
    for name, reason in REPLAY_REFUSED.items():
        if config.getoption(name):
            raise UsageError(f"rank: --{name} cannot be used with --replay: {reason}")
    if config.getoption("executor") == "ray":
        raise UsageError("rank: --replay: the replay's native processes run on this machine "
                         "(--executor=local)")
    refuse_special(replay, f"--replay={replay}")
    if not os.path.isfile(replay):
        raise UsageError(f"--replay={replay}: file not found")


def settings(config) -> RankSettings:
    """The rank options, checked (one line for a bad value)."""
    _replay(config)
    replay = config.getoption("replay")
    baseline = replay or config.getoption("baseline")
    refuse_special(baseline, f"--baseline={baseline}")
    if not baseline:
        raise UsageError("rank: --baseline=BASE.vmfb is required (the module every candidate "
                         "is compared with)")
    factor = _seconds("timeout_factor", config.getoption("timeout_factor"))
    cache = config.getoption("rank_cache")
    seed = config.getoption("rank_seed")
    accuracy = str(config.getoption("benchmark_min_rel_accuracy") or "").strip()
    return RankSettings(
        baseline=baseline,
        devices=device_list(config),
        cpu_workers=_at_least(config, "cpu_workers", 1),
        cpu_sets=config.getoption("cpu_sets"),
        baseline_every=_at_least(config, "baseline_every", 1),
        rerank_top=_at_least(config, "rerank_top", 0),
        rerank_rounds=_at_least(config, "rerank_rounds", 2),
        seed=seed if seed is not None else random.SystemRandom().randrange(2 ** 31),
        check_outputs=bool(config.getoption("check_outputs")) and not replay,
        rotate_inputs=_at_least(config, "rotate_inputs", 1),
        candidate_timeout=_seconds("candidate_timeout", config.getoption("candidate_timeout")),
        timeout_factor=factor if factor is not None else DEFAULT_TIMEOUT_FACTOR,
        budget=_seconds("rank_budget", config.getoption("rank_budget")),
        race_budget=_seconds("race_budget", config.getoption("race_budget")),
        rank_out=config.getoption("rank_out"),
        rank_stream=config.getoption("rank_stream"),
        rank_rows=bool(config.getoption("rank_rows")),
        cache=None if not cache or cache in CACHE_OFF else cache,
        remeasure=bool(config.getoption("remeasure")),
        adaptive=bool(accuracy),
        max_time=_seconds("benchmark_max_time", config.getoption("benchmark_max_time") or
                          "10s") if accuracy else None,
        metric=_metric(config),
        replay=replay,
        executable=config.getoption("executable"),
    )


def _default_metric(config, device_time: bool) -> str:
    """The metric that measured the work (as ``ireebench compare --metric=auto``):
    device time with --device_time, CPU time when every device is ``local-sync``
    (the worker's thread does all the work), else real time."""
    if device_time:
        return "device_time"
    devices = device_list(config)
    if devices and all(device.split("://")[0] == "local-sync" for device in devices):
        return "cpu_time"
    return "real_time"


def _metric(config) -> str:
    """``--rank_by``, else the metric that measured the work (:func:`_default_metric`)."""
    device_time = bool(config.getoption("device_time"))
    # A replay's real time is what its scope markers timed (the model's work); its CPU
    # time is the whole replay iteration's, the replay's own setup of each iteration
    # (executables prepared, buffers allocated) included, which dilutes every ratio
    # (benchmarks/replay_rank.py).
    chosen = config.getoption("rank_by") or ("real_time" if config.getoption("replay")
                                             else _default_metric(config, device_time))
    if chosen not in METRICS:
        raise UsageError(f"--rank_by={chosen}: one of {', '.join(METRICS)}")
    if chosen == "device_time" and not device_time:
        raise UsageError("--rank_by=device_time: needs --device_time (the device's busy time "
                         "is measured by a profiling pass)")
    return chosen


def derived(config: Config, **options) -> Config:
    """The unconfigured ``config`` with ``options`` changed, as a new one (never edited)."""
    new = Config(config.pm, {**config.options, **options}, list(config.runtime_flags),
                 list(config.argv), config.stdout, config.stderr, config.option_specs)
    new.command_line = list(config.command_line)
    return new
