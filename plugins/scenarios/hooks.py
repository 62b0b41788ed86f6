"""The hook the scenarios plugin declares (``ireebench_addhooks``): a Server's arrivals."""

from __future__ import annotations

from ireebench import hookspec


class ServingHooks:
    """Declared through ``ireebench_addhooks``: called when a Server run is measured."""

    @staticmethod
    @hookspec(firstresult=True)
    def ireebench_server_arrivals(config, workload, target_qps, min_duration, min_queries,
                                  seed):
        """Return the arrival times of a ``--scenario=server`` run, or ``None``.

        Called once per Server run (each repetition, each load a ``--search``
        tries), before anything is issued; the first plugin that returns
        offsets gives the schedule, instead of ``--target_qps``'s Poisson (or
        ``--burstiness`` gamma) process. Not called with ``--arrival_trace``,
        whose file is the schedule.

        :param config: the run's :class:`Config`.
        :param workload: the benchmark being measured.
        :param target_qps: the rate asked for (``--target_qps``, or the load
            ``--search`` tries): the mean rate the offsets should keep, which the
            row reports beside what the run completed.
        :param min_duration: ``--min_duration`` in seconds, and
        :param min_queries: ``--min_query_count`` (or what the latency bound's
            percentile needs): LoadGen's rules, which the built-in schedule
            meets and a plugin's should.
        :param seed: ``--scenario_seed``: draw from it so that a run repeats.
        :return: each query's scheduled time in seconds from the start: a
            sequence of finite numbers, ascending, from 0 or later, at most
            ``MAX_QUERIES`` of them and spanning at most the longest schedule
            (1 h, or ``--min_duration`` if longer); anything else is the
            plugin's error (exit 3), named before the run starts.
        """
