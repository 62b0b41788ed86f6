"""Losses and budget: what a ranking loses, and what stops it.

At its deadline a candidate's worker is killed (its group: a native pass
too), the candidate is ``timeout`` and a new worker takes the device; a
worker that dies makes its candidate ``crashed``. Either costs at most the
timeout; the others go on. A worker lost with its node (a cluster's) is
not its candidate's fault: the candidate (or the re-rank) is measured
again, first, within ``--ray_retries``.

``--rank_budget`` stops the ranking when it is spent (workers killed, what
finished kept); Ctrl-C or SIGTERM too. Either way the ranking of what was
measured is written (``--rank_out``), every finished measurement is in the
cache, and a rerun resumes.
"""

from __future__ import annotations

import time

from ireebench import UsageError

from .drift import BASELINE_ID
from .results import Measurement, State

# How long a worker may take to open its device and upload the inputs.
START_SECONDS = 300.0


class Losses:
    """A ranker's lost workers and its budget (``stopped``: why it stopped early)."""

    def __init__(self, ranker):
        self.ranker = ranker
        self.started = time.monotonic()
        self.stopped = ""  # "", "budget", "interrupted" or "error"
        self.attempts: dict[str, int] = {}  # candidate id -> times lost with a node

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def budget_left(self) -> float | None:
        budget = self.ranker.settings.budget
        return None if budget is None else budget - self.elapsed()

    def retired(self, device) -> bool:
        """It lost more workers with their nodes than --ray_retries: none is started."""
        return device.losses > self.ranker.pool.retries

    def _say(self, line: str) -> None:
        self.ranker.config.stderr.write(line + "\n")

    def died(self, device) -> None:
        worker = device.worker
        if worker.lost:
            return self.relocate(device)
        how = worker.death()
        held = device.release()
        if not worker.ready:
            raise UsageError(f"--devices={device.spec.uri}: the worker of {device.spec.label} "
                             f"{how} while opening the device")
        if worker.busy is None:
            raise UsageError(f"rank: the worker of {device.spec.label} {how} between "
                             "candidates")
        self.lost(device, worker.busy, State.CRASHED,
                  f"the worker process {how} while running it", held, worker.where)

    def relocate(self, device) -> None:
        """A worker lost with its node (see the module docstring); the device gets a
        new worker, wherever Ray finds it room."""
        ranker, task, how = self.ranker, device.worker.busy, device.worker.death()
        device.release()
        device.relocated = True
        device.losses += 1
        retries = ranker.pool.retries
        said = f"ireebench: ray: rank: the worker of {device.spec.label} {how}"
        if task is not None and task.kind in ("candidate", "rerank"):
            lost_id = task.candidate.id if task.kind == "candidate" else BASELINE_ID
            lost = self.attempts[lost_id] = self.attempts.get(lost_id, 0) + 1
            if task.kind == "rerank" and lost > retries:
                ranker.rerank.message = f"the re-rank's worker {how}"
            elif task.kind == "rerank":
                ranker.pending_rerank = task
                said += f"; the re-rank starts again ({lost} of {retries})"
            elif lost > retries:
                task.candidate.message = (f"lost with its node {lost} time"
                                          f"{'s' if lost > 1 else ''} "
                                          f"(--ray_retries={retries}): {how}")
                said += f"; candidate {lost_id} is not measured (--ray_retries={retries})"
            else:
                ranker.queue.insert(0, task.candidate)
                said += f"; candidate {lost_id} is measured again ({lost} of {retries})"
        self._say(said)
        if self.retired(device):
            self._say(f"ireebench: ray: rank: {device.spec.label} lost {device.losses} "
                      "workers: no more are started for it")
        elif ranker.queue or ranker.pending_rerank is not None:
            ranker.start(device)

    def timed_out(self, device) -> None:
        worker = device.worker
        task = worker.busy
        if task is None:
            worker.close(stop=False)
            device.worker = None
            if device.relocated:  # no node took the lost worker's place
                self._say(f"ireebench: ray: rank: no node took the place of "
                          f"{device.spec.label}'s lost worker within {START_SECONDS:g} s; "
                          "the other devices go on")
                return
            raise UsageError(f"--devices={device.spec.uri}: the worker of {device.spec.label} "
                             f"did not open the device within {START_SECONDS:g} s")
        held = device.held()
        worker.close(stop=False)
        if worker.lost:  # killing it found its node gone: it was not the candidate that hung
            return self.relocate(device)
        device.release()
        self.lost(device, task, State.TIMEOUT,
                  f"still running after {held:.2f} s (its timeout: {task.timeout:.2f} s); "
                  "the worker was killed", held, worker.where)

    def lost(self, device, task, state: State, message: str, held: float,
             where: dict) -> None:
        """A candidate that took its worker with it; a new worker takes the device."""
        ranker = self.ranker
        if task.kind == "baseline":
            raise UsageError(f"--baseline={ranker.settings.baseline}: {state} on "
                             f"{device.spec.label}: {message}")
        if task.kind == "rerank":
            ranker.rerank.message = f"the re-rank's worker: {message}"
            return
        device.candidates += 1
        result = task.candidate
        ranker.rows.where_of[result.id] = where
        ranker.apply(result, Measurement(state, message, elapsed=held), device.spec.label,
                     task.timeout)
        ranker.baselines.placed[result.id] = (task.sequence, "")
        ranker.record(result, device)
        if ranker.queue or ranker.baselines.due(device):
            ranker.start(device)

    def out_of_budget(self) -> None:
        ranker = self.ranker
        self.stopped = "budget"
        for device in ranker.devices:
            task = device.worker.busy if device.worker is not None else None
            if task is not None and task.candidate is not None:
                task.candidate.message = "the --rank_budget ran out while it was being measured"
                ranker.queue.insert(0, task.candidate)
        self._say(f"ireebench: warning: rank: --rank_budget={ranker.settings.budget:g}s "
                  f"spent: {len(ranker.queue)} candidate(s) not measured; rerun the same "
                  "command to resume")
        self.stop_workers()

    def stop_workers(self) -> None:
        for device in self.ranker.devices:
            if device.worker is not None:
                device.worker.close(stop=device.worker.busy is None and device.worker.ready)
                device.worker = None

    def abandon_relocated(self) -> None:
        """Nothing is left to measure: a worker still starting in place of one lost with
        its node (Ray may have no node to put it on) is not waited for."""
        for device in self.ranker.devices:
            worker = device.worker
            if worker is not None and device.relocated and not worker.ready:
                worker.close(stop=False)
                device.worker = None
