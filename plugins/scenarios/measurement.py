"""One scenario run, measured: the samples prepared, the timed loop, the summary.

The part of the plugin that works with the IREE runtime (the invocations'
argument lists and fences, :mod:`.invocations`) and numpy (the Server's
schedule, :mod:`.schedule`): imported when a run first measures a
scenario (:func:`ireebench.plugins.scenarios.measurement_part`), not when
the plugin is loaded, so that ``--help`` and the subcommands never pay for
it.
"""

from __future__ import annotations

from ireebench.backend import BenchmarkFailure, failure_message
from ireebench.errors import UsageError

from . import driver
from .invocations import Invocations
from .schedule import plugin_schedule, schedule
from .settings import OFFLINE, SERVER, Settings
from .summary import summarize


def measure(workload, session, settings: Settings):
    """One scenario run: ``(summary, timeline)`` (a failure raises BenchmarkFailure)."""
    if settings.scenario == SERVER:  # a plugin's bad schedule is its error, not the row's
        offsets = plugin_schedule(workload, session.config, settings)
    invocations = Invocations(workload, session, settings.lanes)
    try:
        if settings.scenario == SERVER:
            if offsets is None:
                offsets = schedule(settings.arrivals, settings.seed, settings.min_duration,
                                   settings.min_queries)
            timeline = driver.run_server(invocations, offsets)
        elif settings.scenario == OFFLINE:
            timeline = driver.run_offline(invocations, settings)
        else:
            timeline = driver.run_streams(invocations, settings)
    except UsageError:
        raise
    except Exception as exc:
        raise BenchmarkFailure(failure_message(exc)) from exc
    return summarize(timeline, settings), timeline
