"""What a ranking reports: the rows, the console table, the JSON file, the summary.

Every measurement's Google Benchmark rows go to the run's reports as it
finishes (:class:`Rows`): ``BM_fn/candidate:ID/process_time/real_time``; a
baseline's ``BM_fn/candidate:baseline/device:LABEL/round:N/...``; the
re-rank's ``.../pass:rerank/...``. Each row says where it was measured (its
module as given and that module's sha256, its device, on a cluster its
node); a candidate that failed without rows of its own gets an error row,
as a failed benchmark does, so the reports hold every candidate.

The console shows the ranking, not the rows (:func:`quiet_console`; they go
to ``--benchmark_out`` and the store, and to the console too with
``--rank_rows``), with a :func:`progress` line per candidate on stderr while it
runs; the table on stdout when the display is the console's, else on stderr
(a JSON report on stdout stays JSON). Each row's columns come from the pass
that placed it (:func:`_columns`)::

    Ranking of 4 candidates (BM_main, real time) against base.vmfb, 2 devices
    rank  candidate  state    pass     time      vs baseline  +-    device        note
       1  fast       ok       re-rank  8.10 us   0.318        1.0%  local-sync#1
       2  mid        ok       re-rank  25.5 us   1.001        0.8%  local-sync#0
       -  hang       timeout                                        local-sync#0  still ...
    Re-rank of the top 2 on local-sync#0, 10 rounds (seed 7): fast before mid (Wilcoxon
    p=0.002); Kendall tau, first pass vs re-rank: 1.00

``--rank_out=FILE`` writes :meth:`Ranking.to_dict` (atomically, also when the
ranking stopped early, as the table is printed); :func:`summary` is the stream's last line and the
run's ``findings["rank"]`` (the stored ranking a report reads, docs/plugins.md).
"""

from __future__ import annotations

import json
from collections import Counter

from ireebench import Reporter, names
from ireebench.outfiles import OutputFile
from ireebench.results import Run
from ireebench.stats import median
from tabulate import tabulate

from .drift import BASELINE_ID
from .results import METRICS, Ranking, State, metric_of

NOTE_WIDTH = 72


def _time(seconds: float | None) -> str:
    """``8.12 us``: three significant digits in the largest unit that is at least 1."""
    if seconds is None:
        return ""
    for unit, scale in (("s", 1.0), ("ms", 1e3), ("us", 1e6)):
        if seconds * scale >= 1:
            return f"{seconds * scale:#.3g} {unit}".replace(". ", " ")
    return f"{seconds * 1e9:#.3g} ns".replace(". ", " ")


def _ratio(value: float | None) -> str:
    return "" if value is None else f"{value:.3f}"


def summary(ranking: Ranking) -> dict:
    """The short form (the stream's last line, the report's findings)."""
    states = Counter(candidate.state.value for candidate in ranking.candidates)
    winner = ranking.winner
    return {
        "function": ranking.function,
        "metric": ranking.metric,
        "order": [candidate.id for candidate in ranking.ranked],
        # Every candidate, as ranked: its state, place, ratio and the ratio's interval.
        "candidates": [{"id": candidate.id, "state": candidate.state.value,
                        "rank": candidate.rank, "ratio": candidate.ratio,
                        "interval": candidate.interval} for candidate in ranking.candidates],
        "winner": winner.id if winner else None,
        "winner_ratio": winner.ratio if winner else None,
        "states": dict(sorted(states.items())),
        "kendall_tau": ranking.kendall_tau,
        "rerank_p_value": (ranking.rerank.p_values[0] if ranking.rerank is not None
                           and ranking.rerank.p_values else None),
        "complete": ranking.complete,
        "stopped": ranking.stopped,
        "wall_seconds": ranking.wall_seconds,
        "device_seconds": ranking.device_seconds,
        "measured": ranking.measured,
        "from_cache": ranking.from_cache,
    }


def _note(candidate) -> str:
    parts = []
    if candidate.message:
        parts.append(candidate.message)
    if candidate.same_as:
        parts.append(f"same module as {candidate.same_as}")
    if candidate.cached:
        parts.append("cached")
    text = "; ".join(parts)
    return text if len(text) <= NOTE_WIDTH else text[:NOTE_WIDTH - 3] + "..."


def _columns(ranking: Ranking, candidate) -> tuple:
    """Its pass, time, ratio to the baseline and +- (%), all from the pass that placed it
    (the re-rank's for a re-ranked one, else the first pass's). The time is its ratio
    times the baseline's median time in that pass: drift-corrected as the ratio is, so
    a pass's times are in the order of its ranks (the raw times are in --rank_out)."""
    rerank, measurement = ranking.rerank, candidate.measurement
    if candidate.rerank_position is not None and rerank is not None:
        low, high = candidate.interval or (None, None)
        spread = None if low is None or not candidate.ratio else \
            (high - low) / (2 * candidate.ratio)
        return ("re-rank", rerank.round_seconds.get(BASELINE_ID), candidate.ratio, spread)
    return ("first", [metric_of(each, ranking.metric) for each in ranking.baselines],
            candidate.first_pass_ratio,
            measurement and measurement.precision_of(ranking.metric))


def _scaled(ratio: float | None, baseline: list | None) -> float | None:
    baseline = [value for value in baseline or [] if value is not None]
    return None if ratio is None or not baseline else ratio * median(baseline)


def table(ranking: Ranking) -> str:
    """The ranking as the console shows it."""
    rows = []
    for candidate in ranking.candidates:
        passed, baseline, ratio, precision = _columns(ranking, candidate)
        ok = candidate.state is State.OK
        rows.append([
            candidate.rank if candidate.rank is not None else "-",
            candidate.id,
            candidate.state.value,
            passed if ok else "",
            _time(_scaled(ratio, baseline)) if ok else "",
            _ratio(ratio) if ok else "",
            "" if precision is None else f"{100 * precision:.1f}%",
            candidate.device,
            _note(candidate),
        ])
    headers = ["rank", "candidate", "state", "pass", "time", "vs baseline", "+-", "device",
               "note"]
    return tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True,
                    colalign=("right",) + ("left",) * (len(headers) - 1))


def lines(ranking: Ranking) -> list[str]:
    """The title, the table and what the re-rank found."""
    metric = METRICS.get(ranking.metric, ranking.metric)
    devices = len(ranking.devices)
    count = len(ranking.candidates)
    out = [f"Ranking of {count} candidate{'s' if count != 1 else ''} (BM_{ranking.function}, "
           f"{metric}) "
           f"against {ranking.baseline}, {devices} device{'s' if devices != 1 else ''}"
           + ("" if ranking.complete else f" (incomplete: {ranking.stopped or 'not measured'})"),
           table(ranking)]
    rerank = ranking.rerank
    if rerank is not None:
        halving = "" if not rerank.stages else \
            f", halved: {' -> '.join(str(len(stage)) for stage in rerank.stages)} members"
        head = (f"Re-rank of the top {len(rerank.members)} on {rerank.device}, {rerank.rounds} "
                f"rounds{halving} (seed {rerank.seed})" + (", cached" if rerank.cached else ""))
        if rerank.order and len(rerank.order) > 1:
            p = rerank.p_values[0] if rerank.p_values else None
            verdict = (f"{rerank.order[0]} before {rerank.order[1]} (Wilcoxon signed-rank "
                       f"p={'n/a' if p is None else format(p, '.3g')})")
            tau = "n/a" if rerank.kendall_tau is None else f"{rerank.kendall_tau:.2f}"
            out.append(f"{head}: {verdict}; Kendall tau, first pass vs re-rank: {tau}")
        else:
            out.append(f"{head}: no order ({rerank.message or 'too few members measured'})")
        for member, why in rerank.failed.items():
            out.append(f"  {member} left the re-rank: {why}")
    out.append(f"{ranking.measured} measurement(s) in {ranking.wall_seconds:.1f} s "
               f"({ranking.device_seconds:.1f} s on the devices), {ranking.from_cache} "
               "candidate(s) from the cache")
    return out


def _console(config) -> bool:
    return (config.getoption("reporter") or config.getoption("benchmark_format")) == "console"


class _Quiet(Reporter):
    """The console's display of a ranking without --rank_rows: no rows (the ranking
    is the answer; the rows go to --benchmark_out and the store)."""

    def report_context(self, context) -> bool:
        return False  # the hub then sends it no rows


def quiet_console(config, hub, rows: bool) -> None:
    """Without ``--rank_rows``, the console shows the ranking, not the rows."""
    if hub is not None and _console(config) and not rows:
        hub.display = _Quiet(config.stdout, config, config.stderr)


def progress(config, result, done: int, total: int) -> None:
    """A candidate's one line on stderr the moment it is known."""
    ratio = "" if result.first_pass_ratio is None else \
        f" ({_ratio(result.first_pass_ratio)} x baseline)"
    shown = f" {_time(result.seconds)}{ratio}" if result.state is State.OK else ""
    note = f": {_note(result)}" if result.state is not State.OK and result.message else ""
    config.stderr.write(f"rank: [{done}/{total}] {result.id} {result.state.value}{shown}"
                        f"{note}\n")
    config.stderr.flush()


def print_ranking(config, ranking: Ranking) -> None:
    """The table: stdout under a console report (after the rows with --rank_rows),
    else stderr; then one line for the measurements short of the precision asked."""
    console = _console(config)
    stream = config.stdout if console else config.stderr
    rows = console and config.getoption("rank_rows")
    stream.write("\n" * bool(rows) + "\n".join(lines(ranking)) + "\n")
    stream.flush()
    if ranking.imprecise:
        config.stderr.write(
            f"ireebench: warning: --benchmark_min_rel_accuracy="
            f"{config.getoption('benchmark_min_rel_accuracy')} not reached for "
            f"{ranking.imprecise} of {ranking.measured} measurements (--benchmark_max_time="
            f"{config.getoption('benchmark_max_time')} spent first)\n")
        config.stderr.flush()


def write_ranking(path: str, ranking: Ranking) -> None:
    """``--rank_out``: the ranking as JSON, written whole or not at all."""
    handle = OutputFile(path, "rank_out")
    try:
        json.dump(ranking.to_dict(), handle.stream, indent=2, default=str)
        handle.stream.write("\n")
    except BaseException:
        handle.discard()
        raise
    handle.close()


class Rows:
    """The rows of one ranking, through the run's report hub (``None``: nowhere)."""

    def __init__(self, config, devices: list):
        self.config = config
        self.devices = devices
        self.hub = None
        self.family = 0
        self.function = ""
        self.modules: dict[str, tuple[str, str]] = {}  # id -> its path as given, sha256
        self.where_of: dict[str, dict] = {}  # candidate id -> its worker's where
        self.context = None  # (context, run names) until it is reported

    def provenance(self, job_id: str, device, where: dict) -> dict:
        """What a measurement's rows say of themselves: its module (as given) and that
        module's sha256, its device (the run's context names the baseline's module and
        every device), and on a cluster the node (``host_name``, ``ray_node_id``)."""
        path, sha256 = self.modules[job_id]
        entries = {"iree_module": path}
        if sha256:  # not for a candidate that did not compile
            entries["iree_module_sha256"] = sha256
        if device is not None:
            entries["iree_devices"] = [device.spec.uri]
        return {**entries, **where}

    def error_row(self, result) -> Run:
        by_label = {device.spec.label: device for device in self.devices}
        config, function, named = self.config, self.function, {"candidate": result.id}
        return Run(provenance=self.provenance(result.id, by_label.get(result.device),
                                              self.where_of.get(result.id, {})),
                   name=names.family_name(function, named),
                   run_name=names.run_name(function, named), function=function,
                   params=named, error_occurred=True,
                   error_message=f"{result.state}: {result.message}".rstrip(": "),
                   time_unit=config.getoption("time_unit") or "ms",
                   repetitions=config.getoption("benchmark_repetitions"),
                   batch_size=config.getoption("batch_size"))

    def ensure_context(self) -> None:
        if self.context is not None and self.hub is not None:
            (context, run_names), self.context = self.context, None
            self.hub.report_context(context, run_names)

    def report(self, rows: list, job_id: str = "", device=None, where=None) -> None:
        """``rows`` to the reports, stamped with ``job_id``'s :meth:`provenance` if given."""
        entries = self.provenance(job_id, device, where) if job_id else {}
        for row in rows:
            row.provenance = {**row.provenance, **entries}
        if not rows or self.hub is None:
            return
        self.ensure_context()
        for row in rows:
            row.family_index, row.per_family_instance_index = self.family, 0
        self.family += 1
        self.hub.report([row for row in rows if not row.extra_row],
                        [row for row in rows if row.extra_row])
