"""Baselines and drift: the baseline on every device, its measurements, each ratio to it.

A worker's first job is always the baseline (its time on that device
derives the candidates' timeouts, :meth:`Baselines.timeout`; its outputs are
the reference of ``--check_outputs``); the baseline is measured again after
every ``--baseline_every`` candidates on a device, and once more after its
last (so every candidate has a baseline before and after it on its device).
A candidate's ratio is its time over the baseline's on the same device,
interpolated between the baseline measurements before and after it there
(:func:`.ordering.interpolate`): drift on a device, and the difference
between devices, cancel. The ranked time is ``--rank_by``'s: the device
time with ``--device_time``, else the wall clock's (or the worker's CPU
time). On a cluster a lost node's baselines are its own.
"""

from __future__ import annotations

from ireebench import UsageError

from .candidates import Candidate
from .measure import Job
from .ordering import interpolate
from .results import BaselineMeasurement, Measurement, State, metric_of
from .settings import TIMEOUT_SLACK, RankSettings

BASELINE_ID = "baseline"


class Baselines:
    """The baseline's measurements on each device, and the drift they correct."""

    def __init__(self, settings: RankSettings, baseline: Candidate, stream):
        self.settings = settings
        self.baseline = baseline
        self.stream = stream
        # candidate id -> (its place in its device's order of measurements, its node)
        self.placed: dict[str, tuple[int, str]] = {}

    def job(self, device=None, **params) -> Job:
        """The baseline's job: a device's next round (``device``), else ``params``'."""
        if device is not None:
            device.rounds += 1
            params = {"device": device.spec.label, "round": device.rounds}
        return Job(BASELINE_ID, self.baseline.module, self.baseline.sha256,
                   {"candidate": BASELINE_ID, **params}, baseline=not params.get("pass"))

    @staticmethod
    def due(device) -> bool:
        """Candidates ran on ``device`` since its last baseline measurement."""
        return bool(device.candidates and device.baselines
                    and device.baselines[-1].sequence < device.sequence)

    def measured(self, device, sequence: int, measurement: Measurement, node: str) -> None:
        if measurement.state is not State.OK:
            raise UsageError(f"--baseline={self.settings.baseline}: {measurement.state} on "
                             f"{device.spec.label}: {measurement.message}")
        device.first = device.first or measurement
        device.fresh = False
        entry = BaselineMeasurement(device.spec.label, measurement.seconds,
                                    measurement.device_seconds, sequence,
                                    measurement.elapsed, measurement.cpu_seconds, node)
        device.baselines.append(entry)
        self.stream.write("baseline", entry.to_dict())

    def timeout(self, device) -> float | None:
        """A candidate's seconds on ``device``, from the moment its worker starts it:
        ``--candidate_timeout``, else ``F x`` the baseline's time there (with adaptive
        stopping at least ``--benchmark_max_time`` plus ``F x`` its load and one
        repetition) plus :data:`~.settings.TIMEOUT_SLACK`."""
        settings, first = self.settings, device.first
        if settings.candidate_timeout is not None:
            return settings.candidate_timeout
        if first is None:
            return None
        factor = settings.timeout_factor
        planned = factor * first.elapsed
        if settings.adaptive and settings.max_time is not None and first.samples:
            iterations = next((row.iterations for row in first.rows if row.iterations
                               and row.run_type == "iteration" and not row.extra_row), 1)
            repetition = max(first.samples) * iterations
            planned = max(planned, settings.max_time + factor * (first.load_seconds
                                                                 + repetition))
        return planned + TIMEOUT_SLACK

    def ratio(self, result, device) -> float | None:
        """The ranked time over the baseline's on the same device, at its moment
        (the baselines known so far: the last one corrects it at the end)."""
        if result.state is not State.OK or result.measurement is None:
            return None
        metric = self.settings.metric
        value = result.measurement.metric(metric)
        sequence, node = self.placed.get(result.id, (0, ""))
        points = [(entry.sequence, metric_of(entry, metric)) for entry in device.baselines
                  if entry.node == node]
        base = interpolate([(at, seconds) for at, seconds in points if seconds], sequence)
        if value is None or not base:
            return None
        return value / base
