"""``ireebench rank``: rank candidate modules of one function against a baseline.

What a tuner (sharktuner's libtuner, TVM's runners, Kernel Tuner) needs
from a benchmark tool, in one command and one Python call:

* many modules, many devices, one warm worker per device: the runtime,
  the device and the inputs set up once, each candidate loaded into it
  (:mod:`.worker`, :mod:`.measure`, :mod:`.devices`);
* a ranking that holds: adaptive repetitions to the precision asked, the
  baseline again every K candidates to correct drift per device, a paired,
  interleaved re-rank of the best, Kendall's tau between the passes
  (:mod:`.schedule`, :mod:`.ordering`);
* failures as states (``compile_failed``, ``load_failed``,
  ``runtime_error``, ``wrong_output``, ``timeout``, ``crashed``), a
  timeout counted from the candidate's start on its device, a budget
  (:mod:`.results`, :mod:`.candidates`);
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

Loading the plugin (what every ``ireebench`` process does) imports the
command line and the typed results only; the modules that measure (the
coordinator, the workers, :func:`benchmark_module`: the IREE runtime and
numpy) are imported when a ranking runs (:func:`.command.main`) or a name of
:data:`MEASURING_NAMES` is first read (PEP 562).
"""

from __future__ import annotations

from ireebench import hookimpl
from ireebench.cli.commands import ArgvCommand
from ireebench.plugins.statistics import continue_until_precise

from . import command
from .results import CandidateResult, Measurement, Ranking, Rerank, State
from .settings import RANKED_METRIC

# The public names of :mod:`.api`, imported on first use (they bring the runtime).
MEASURING_NAMES = ("WarmBenchmark", "benchmark_module", "close_workers", "warm_workers")


@hookimpl
def ireebench_register_commands(cli):
    """Registers ``ireebench rank``."""
    cli.add_command(ArgvCommand("rank", command.main, help=command.HELP,
                                short_help="Rank candidate modules against a baseline."))


@hookimpl(tryfirst=True)
def ireebench_continue_repetitions(config, workload, runs):
    """In a ranking by CPU time (``--rank_by=cpu_time``), adaptive stopping judges
    the CPU time's precision, the time it ranks; otherwise nothing (None)."""
    if config.stash.get(RANKED_METRIC, None) != "cpu_time":
        return None
    return continue_until_precise(config, workload, [run.cpu_seconds for run in runs],
                                  "CPU time ")


def __getattr__(name: str):
    """:data:`MEASURING_NAMES` from :mod:`.api`, imported when first read."""
    if name not in MEASURING_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import api
    value = globals()[name] = getattr(api, name)
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *MEASURING_NAMES})


__all__ = ["CandidateResult", "Measurement", "Ranking", "Rerank", "State", "WarmBenchmark",
           "benchmark_module", "close_workers", "warm_workers"]
