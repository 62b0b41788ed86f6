"""``ireebench rank``: rank candidate modules of one function against a baseline.

What a tuner (sharktuner's libtuner, TVM's runners, Kernel Tuner) needs
from a benchmark tool, in one command and one Python call:

* many modules, many devices, one warm worker per device: the runtime,
  the device and the inputs set up once, each candidate loaded into it
  (:mod:`.worker`, :mod:`.measure`, :mod:`.devices`);
* a ranking that holds (:mod:`.schedule`): adaptive repetitions to the
  precision asked, the baseline again every K candidates to correct drift
  per device (:mod:`.drift`), a paired, interleaved re-rank of the best,
  Kendall's tau between the passes (:mod:`.rerank`, :mod:`.ordering`);
* failures as states (``compile_failed``, ``load_failed``,
  ``runtime_error``, ``wrong_output``, ``timeout``, ``crashed``), a
  timeout counted from the candidate's start on its device, a budget
  (:mod:`.results`, :mod:`.candidates`, :mod:`.losses`);
* a cache and a stream: a rerun measures nothing twice, an interrupted
  ranking resumes (:mod:`.cache`);
* a ranking as JSON, a console table, Google Benchmark rows per
  measurement in the run's reports and the store (:mod:`.report`,
  :mod:`.command`);
* ``ireebench.rank(...)`` (the command from Python: a :class:`Ranking`)
  and :func:`benchmark_module`, ``iree.runtime.benchmark_module`` through a
  warm worker (:mod:`.api`).

Hooks: ``ireebench_register_commands`` (``rank``), ``ireebench_continue_repetitions``
(``tryfirst``: with ``--rank_by=cpu_time``, the adaptive rule on the CPU time). The measurement in a
worker calls the run's hooks as a run does (``sessionstart``,
``discovery_finish``, ``workload_start``, ``measure_cold_start``,
``measure_repetition``, ``continue_repetitions``, ``workload_finish``,
``report_extra_rows``), so ``--benchmark_min_rel_accuracy``,
``--device_time`` and a plugin's counters work per candidate.

Loading the plugin (what every ``ireebench`` process does) imports none of
its modules but :mod:`.stash`: ``ireebench rank`` is a
:class:`~ireebench.commands.DeferredCommand` (its command line,
:mod:`.command`, imported when it runs, ``--help`` included), the typed
results (:mod:`.results`) and the modules that measure (the coordinator, the
workers, :func:`benchmark_module`: the IREE runtime and numpy) when a
ranking runs or one of their public names is first read (PEP 562,
:data:`LAZY_NAMES`).
"""

from __future__ import annotations

from ireebench import hookimpl, lazy_names
from ireebench.commands import DeferredCommand
from ireebench.lib.statistics import continue_until_precise

from .stash import RANKED_METRIC

# The public names and the module that defines each, imported on first use:
# :mod:`.api`'s bring the runtime, :mod:`.results`' the command's machinery.
LAZY_NAMES = {
    "CandidateResult": ".results", "Measurement": ".results", "Ranking": ".results",
    "Rerank": ".results", "State": ".results",
    "WarmBenchmark": ".api", "benchmark_module": ".api", "close_workers": ".api",
    "warm_workers": ".api",
}


@hookimpl
def ireebench_register_commands(cli):
    """Registers ``ireebench rank`` (:data:`.command.COMMAND`, imported when it runs)."""
    cli.add_command(DeferredCommand("rank", "ireebench.plugins.rank.command:COMMAND",
                                    short_help="Rank candidate modules against a baseline."))


@hookimpl(tryfirst=True)
def ireebench_continue_repetitions(config, workload, runs):
    """In a ranking by CPU time (``--rank_by=cpu_time``), adaptive stopping judges
    the CPU time's precision, the time it ranks; otherwise nothing (None)."""
    if config.stash.get(RANKED_METRIC, None) != "cpu_time":
        return None
    return continue_until_precise(config, workload, [run.cpu_seconds for run in runs],
                                  "CPU time ")


# A name of LAZY_NAMES, from its module, imported when first read (PEP 562).
__getattr__, __dir__ = lazy_names(__name__, LAZY_NAMES)

__all__ = ["CandidateResult", "Measurement", "Ranking", "Rerank", "State", "WarmBenchmark",
           "benchmark_module", "close_workers", "warm_workers"]
