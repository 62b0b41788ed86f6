"""What the run reported so far, and which reporters plugins provide.

Read by plugins that need the whole run at its end (a results store, a
report drawn from the run: :func:`reported`) or every reporter
(:func:`reporter_factories`), without the hub's machinery
(:mod:`.hub`, which the run imports when it starts).
"""

from __future__ import annotations

from ..hookcall import collect_named
from ..results import Run
from ..stash import StashKey

# The run's hub (``config.stash``, set by :func:`.hub.build_hub`): what
# :func:`reported` reads.
REPORT_HUB = StashKey["ireebench.reporting.hub.ReportHub"]()


def reported(config) -> tuple[object, list[Run]]:
    """``(context, rows)``: what the run has reported so far (the context once
    reported, else None; every row in report order, extra rows included).

    For a plugin that needs the whole run at its end (a results store, a
    report drawn from the run) rather than each row as it streams: it is
    complete also in a worker resumed after a crash (:mod:`ireebench._worker`),
    whose rows before the crash are replayed into the hub but not streamed
    to ``ireebench_benchmark_result`` again. Copies: changing them changes
    nothing the reporters see.
    """
    hub = config.stash.get(REPORT_HUB, None)
    if hub is None:
        return None, []
    return hub.context, [run.copy() for run in hub.runs]


def reporter_factories(config, owners: dict | None = None) -> dict:
    """Reporter name -> factory, from every plugin (a name defined twice is an
    error); ``owners`` receives name -> plugin."""
    return collect_named(config.pm, "ireebench_reporters", "reporter", owners=owners,
                         config=config)
