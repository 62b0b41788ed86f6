"""``--search``: the highest load that meets ``--latency_bound``, each tried load a row.

LoadGen's peak-performance mode and vLLM's ``bench sweep serve_sla``: the load
(the Server's ``--target_qps``, MultiStream's ``--samples_per_query``) is
doubled while its run is VALID (:mod:`.summary`), halved while it is not (at
most :data:`MAX_HALVINGS` times; without a ``--target_qps`` a probe of
:data:`PROBE_QUERIES` queries picks the start), then bisected to
``--search_tolerance``, rates rounded to four significant digits so the rows'
names are the rates tried. With ``--search_state=FILE`` every tried load is
written there (atomically) as soon as it is measured, and a later run with
the same settings takes it from the file (its row says ``resumed``). See
docs/serving.md.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass

from ireebench.commands import read_json_file
from ireebench.errors import UsageError
from ireebench.names import format_value
from ireebench.outfiles import write_to
from ireebench.results import Counter, Run

from .settings import SERVER, Settings, format_seconds

PROBE_QUERIES = 32
MAX_QPS = 1e7
# A failing start is halved at most this often: a run lasts its queries over
# its rate, so lower rates would take ever longer.
MAX_HALVINGS = 6
MAX_SAMPLES = 1 << 16
STATE_VERSION = 1
# A state holds each tried load and its row: a search tries tens.
MAX_STATE_BYTES = 64 << 20


def value_name(settings: Settings) -> str:
    """The parameter a tried load adds to its row's name: ``qps`` or ``samples``."""
    return "qps" if settings.scenario == SERVER else "samples"


def round_rate(value: float) -> float | int:
    """Four significant digits; an integral rate as an int (``qps:200``, not ``qps:200.0``)."""
    if value <= 0:
        return value
    digits = 3 - math.floor(math.log10(value))
    rounded = round(value, digits)
    return int(rounded) if float(rounded).is_integer() else rounded


@dataclass
class Trial:
    value: float | int
    passed: bool
    row: Run
    resumed: bool = False


def search_key(settings: Settings, module: str) -> dict:
    """What a stored trial was measured with: a trial is reused only with the same."""
    return {"module": module, "scenario": settings.scenario,
            "bound": settings.bound.text if settings.bound else None,
            "min_duration": settings.min_duration, "min_queries": settings.min_queries,
            "seed": settings.seed, "burstiness": settings.arrivals.burstiness,
            "lanes": settings.lanes,
            "samples_per_query": settings.samples_per_query if settings.scenario == SERVER
            else None}


class SearchState:
    """``--search_state=FILE``: the tried loads of every benchmark's search."""

    def __init__(self, path: str | None):
        self.path = path
        self.searches: dict = {}
        if path and os.path.exists(path):
            self.searches = _read_state(path)

    def stored(self, benchmark: str, key: dict) -> dict:
        entry = self.searches.get(benchmark)
        if not entry or entry.get("key") != key:
            return {}
        return {_value_key(item["value"]): item for item in entry.get("trials", [])}

    def stored_start(self, benchmark: str, key: dict) -> tuple[float, str] | None:
        """The first load (and how it was found) of a stored search with these settings."""
        entry = self.searches.get(benchmark)
        if not entry or entry.get("key") != key or "start" not in entry:
            return None
        return entry["start"], str(entry.get("start_note", ""))

    def begin(self, benchmark: str, key: dict, start, note: str) -> None:
        """Keeps the search's first load (a probe's result is not measured again)."""
        entry = self.searches.get(benchmark)
        if not entry or entry.get("key") != key:
            self.searches[benchmark] = {"key": key, "start": start, "start_note": note,
                                        "trials": []}
            self._write()

    def record(self, benchmark: str, key: dict, trial: Trial) -> None:
        self.searches[benchmark]["trials"].append({"value": trial.value, "passed": trial.passed,
                                                   "row": _row_data(trial.row)})
        self._write()

    def _write(self) -> None:
        if not self.path:
            return
        document = {"version": STATE_VERSION, "searches": self.searches}
        write_to(self.path, "search_state", json.dumps(document, indent=1) + "\n")


def _value_key(value) -> str:
    return format_value(value)


def _read_state(path: str) -> dict:
    flag = f"--search_state={path}"
    document = read_json_file(path, flag, MAX_STATE_BYTES, "a search state ireebench wrote")
    if not isinstance(document, dict) or document.get("version") != STATE_VERSION \
            or not isinstance(document.get("searches"), dict):
        raise UsageError(f"{flag}: not a search state ireebench wrote (version "
                         f"{STATE_VERSION})")
    # An edited file: a text or zero start would fail mid-search (a division by it).
    for benchmark, entry in document["searches"].items():
        trials = entry.get("trials", []) if isinstance(entry, dict) else None
        numbers = [("start", entry.get("start", 1))] if isinstance(entry, dict) else []
        numbers += [(f"trials[{i}].value", t.get("value") if isinstance(t, dict) else t)
                    for i, t in enumerate(trials if isinstance(trials, list) else [])]
        for name, value in numbers:
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not 0 < value < math.inf:
                raise UsageError(f"{flag}: {benchmark}: {name} is {value!r}, not a positive "
                                 "number")
        if not isinstance(entry, dict) or not isinstance(trials, list):
            raise UsageError(f"{flag}: {benchmark}: not a search ireebench wrote")
    return document["searches"]


def _row_data(row: Run) -> dict:
    return {"iterations": row.iterations, "real": row.real_accumulated_time,
            "cpu": row.cpu_accumulated_time, "label": row.label,
            "counters": {name: [counter.value, counter.is_rate]
                         for name, counter in row.counters.items()}}


def _row_from(data: dict, like: Run) -> Run:
    row = Run(name=like.name, run_name=like.run_name, function=like.function,
              params=dict(like.params), time_unit=like.time_unit, batch_size=like.batch_size,
              iterations=int(data["iterations"]), real_accumulated_time=float(data["real"]),
              cpu_accumulated_time=float(data["cpu"]), label=str(data.get("label", "")))
    row.counters = {name: Counter(float(value), bool(rate))
                    for name, (value, rate) in data.get("counters", {}).items()}
    row.samples = [row.real_accumulated_time / row.iterations] if row.iterations else []
    return row


class Search:
    """One benchmark's search (see the module docstring).

    ``measure(settings) -> (row, passed)`` measures one load;
    ``template`` is the benchmark's row, whose names the trial rows extend.
    """

    def __init__(self, settings: Settings, measure, template: Run, state: SearchState,
                 key: dict, tolerance: float):
        self.settings = settings
        self.measure = measure
        self.template = template
        self.state = state
        self.key = key
        self.tolerance = tolerance
        self.stored = state.stored(template.run_name, key)
        self.trials: dict = {}  # value key -> Trial, in the order tried
        self.integer = settings.scenario != SERVER

    def trial(self, value) -> Trial:
        key = _value_key(value)
        if key in self.trials:
            return self.trials[key]
        row_name = f"{self.template.name}/{value_name(self.settings)}:{key}"
        like = Run(name=row_name, run_name=row_name, function=self.template.function,
                   params={**self.template.params, value_name(self.settings): value},
                   time_unit=self.template.time_unit, batch_size=self.template.batch_size)
        if key in self.stored:
            item = self.stored[key]
            row = _row_from(item["row"], like)
            row.label = f"{row.label} (resumed)"
            trial = Trial(value, bool(item["passed"]), row, resumed=True)
        else:
            measured, passed = self.measure(self.settings.with_value(value))
            measured.name, measured.run_name = like.name, like.run_name
            measured.params = like.params
            trial = Trial(value, passed, measured)
            self.state.record(self.template.run_name, self.key, trial)
        trial.row.extra_row = True
        self.trials[key] = trial
        return trial

    def _double(self, value):
        return value * 2 if self.integer else round_rate(value * 2)

    def _halve(self, value):
        return max(value // 2, 1) if self.integer else round_rate(value / 2)

    def _middle(self, low, high):
        if self.integer:
            return (low + high) // 2
        return round_rate((low + high) / 2)

    def _finished(self, low, high) -> bool:
        if self.integer:
            return high - low <= 1
        return high <= low * (1 + self.tolerance)

    def run(self, start) -> tuple[Trial | None, Trial | None]:
        """(the highest passing trial, the lowest failing one); either may be None."""
        value = start
        passing = failing = None
        if self.trial(value).passed:
            passing = self.trials[_value_key(value)]
            while True:
                value = self._double(value)
                if value > (MAX_SAMPLES if self.integer else MAX_QPS):
                    return passing, None
                trial = self.trial(value)
                if not trial.passed:
                    failing = trial
                    break
                passing = trial
        else:
            failing = self.trials[_value_key(value)]
            for _ in range(MAX_HALVINGS):
                lower = self._halve(value)
                if lower == value:
                    break
                value = lower
                trial = self.trial(value)
                if trial.passed:
                    passing = trial
                    break
                failing = trial
            if passing is None:
                return None, failing
        while not self._finished(passing.value, failing.value):
            middle = self._middle(passing.value, failing.value)
            if middle in (passing.value, failing.value):
                break
            trial = self.trial(middle)
            if trial.passed:
                passing = trial
            else:
                failing = trial
        return passing, failing

    def rows(self) -> list[Run]:
        """Every tried load's row, by load."""
        return [trial.row for trial in sorted(self.trials.values(), key=lambda t: t.value)]


def result_row(search: Search, passing: Trial | None, failing: Trial | None,
               template: Run, start_note: str) -> Run:
    """The benchmark's row: the numbers of the highest passing load, and what was found."""
    settings = search.settings
    name = value_name(settings)
    shown = "qps" if name == "qps" else "samples per query"
    bound = settings.bound.describe()
    chosen = passing or min(search.trials.values(), key=lambda trial: trial.value)
    row = Run(name=template.name, run_name=template.run_name, function=template.function,
              params=dict(template.params), time_unit=template.time_unit,
              batch_size=template.batch_size, repetitions=template.repetitions,
              repetition_index=template.repetition_index,
              iterations=chosen.row.iterations,
              real_accumulated_time=chosen.row.real_accumulated_time,
              cpu_accumulated_time=chosen.row.cpu_accumulated_time)
    row.samples = list(chosen.row.samples)
    row.counters = dict(chosen.row.counters)
    counter = "max_target_qps" if name == "qps" else "max_samples_per_query"
    tried = len(search.trials)
    resumed = sum(trial.resumed for trial in search.trials.values())
    trials = f"{tried} loads tried" + (f", {resumed} of them resumed" if resumed else "")
    if passing is None:
        row.counters["valid"] = Counter(0.0)
        row.label = (f"no load meets {bound}: the lowest tried, {chosen.value} {shown}, "
                     f"failed ({trials}{start_note})")
        return row
    row.counters[counter] = Counter(float(passing.value))
    above = (f"; {failing.value} failed" if failing is not None
             else "; the search stopped at the largest load it tries")
    row.label = f"highest {shown} meeting {bound}: {passing.value}{above} ({trials}{start_note})"
    return row


def probe_note(rate: float, service: float, lanes: int) -> str:
    lanes_text = f" on {lanes} lanes" if lanes > 1 else ""
    return (f"; started at {rate} qps, half of {round_rate(lanes / service)} qps: "
            f"{PROBE_QUERIES} closed-loop queries took {format_seconds(service)} each"
            f"{lanes_text}")
