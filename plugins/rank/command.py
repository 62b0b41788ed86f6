"""``ireebench rank CANDIDATES... --baseline=BASE [flags]``: the command line.

The command takes every option of a run (the core's and the plugins',
listed in its ``--help``), the rank plugin's own (:mod:`.settings`), and
the candidates as its arguments. It is parsed into an ordinary run
:class:`~ireebench.Config` (checked and configured as a run is: every
plugin's ``ireebench_configure``), whose ``--module`` is the baseline and
whose devices are the ranking's, and the ranking runs as that run's
backend (``ireebench.backend.run_here``): the reports, ``--benchmark_out``,
``--benchmark_save`` and ``ireebench_sessionfinish`` work as in any run.
"""

from __future__ import annotations

from click.core import ParameterSource
from ireebench import backend
from ireebench.backend import EXECUTORS, Backend
from ireebench.commands import (
    CORE,
    ArgvCommand,
    GroupedCommand,
    OptionParser,
    add_core_options,
    add_plugin_options,
    configure,
    make_context,
    option_specs,
)
from ireebench.config import Config
from ireebench.errors import UsageError
from ireebench.outfiles import register_input, register_output, run_files
from ireebench.points import POINTS

from . import candidates as candidate_files
from . import race
from .results import Ranking
from .settings import ADAPTIVE_MAX_TIME, RUN_DEFAULTS, add_options, derived, settings

PLUGIN = "rank"
HELP = """Rank candidate modules of one function against a baseline, for tuners.

CANDIDATES are .vmfb or .mlir files (compiled; one that does not compile is
compile_failed), globs, or manifests (JSON, or ID PATH lines). One warm worker
per device (--devices=hip://0,hip://1; a CPU device gives --cpu_workers pinned
workers) loads each candidate and measures it to the precision asked
(--benchmark_min_rel_accuracy), the baseline again every --baseline_every
candidates (drift), then the best --rerank_top are re-ranked paired and
interleaved. Every candidate ends ok or in a failure state (load_failed,
runtime_error, wrong_output with --check_outputs, timeout, crashed); results are
cached (--rank_cache) and a rerun measures only what is missing. With
--executor=ray each device's worker is a Ray actor on a node that holds the
device (docs/fleet.md). With --replay=CAPTURE --executable=ID the candidates are
executable payloads, each ranked by the whole capture replayed with it substituted
(iree-benchmark-replay), the baseline the capture unchanged. See docs/tuning.md.
"""

# Options a ranking sets itself, or that make no sense for one.
REFUSED = {
    "module": "the candidates are the arguments, the baseline --baseline",
    "sweep": "a ranking's points are its candidates",
    "enable_output_processing": "use --check_outputs to compare outputs with the baseline's",
    "benchmark_list_tests": "there is nothing to list before the candidates compile",
    "benchmark_enable_random_interleaving": "the re-rank interleaves the best candidates",
    "point_index": "a ranking is one process",
    "process_index": "a ranking is one process",
    "benchmark_processes": "a ranking measures each candidate in its device's warm worker",
    "ray_point_timeout": "a candidate's timeout is --candidate_timeout (else derived from the "
                         "baseline's time on its device), also on a Ray cluster",
}
# Options a ranking refuses unless they have one of these values.
REFUSED_VALUES = {
    "executor": (("local", "ray"), ("a ranking's warm workers, one per --devices device, run "
                                    "on this machine (local) or on a Ray cluster (ray)")),
}


def build_command(pm) -> GroupedCommand:
    """The run's options, then the rank plugin's."""
    parser = OptionParser()
    add_core_options(parser)
    add_plugin_options(pm, parser)
    parser.plugin = PLUGIN
    add_options(parser)
    parser.plugin = CORE
    for option in parser.options:
        option.hidden = option.name in REFUSED  # refused, so not offered by --help
    return GroupedCommand(
        "ireebench rank", params=parser.options, help=HELP,
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True,
                          "help_option_names": ["--help", "-h"]},
        add_help_option=True, pm=pm, options_metavar="CANDIDATES... --baseline=BASE [flags]")


def _defaults(ctx, params: dict) -> None:
    """A ranking's defaults where the command line leaves a run's option alone."""
    given = {name for name in params
             if ctx.get_parameter_source(name) in (ParameterSource.COMMANDLINE,
                                                   ParameterSource.ENVIRONMENT)}
    for name, value in RUN_DEFAULTS.items():
        if name in params and name not in given:
            params[name] = value
    if "benchmark_max_time" in params and "benchmark_max_time" not in given \
            and params.get("benchmark_min_rel_accuracy") == RUN_DEFAULTS.get(
                "benchmark_min_rel_accuracy"):
        params["benchmark_max_time"] = ADAPTIVE_MAX_TIME


def _refuse(ctx, params: dict) -> None:
    for name, reason in REFUSED.items():
        if name in params and ctx.get_parameter_source(name) in (
                ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT):
            raise UsageError(f"rank: --{name} is not a ranking's option: {reason}")
    for name, (allowed, reason) in REFUSED_VALUES.items():
        if params.get(name) not in (None, "", *allowed):
            raise UsageError(f"rank: --{name}={params[name]}: {reason}")
    if params.get("backend") not in (None, "runtime"):
        raise UsageError(f"rank: --backend={params['backend']}: a ranking measures in its "
                         "warm workers (the runtime backend)")


def parse(argv: list[str], invocation) -> tuple[Config, list[str]] | None:
    """The run's configuration and the candidate arguments (None after --help)."""
    command = build_command(invocation.pm)
    ctx = make_context(command, "ireebench rank", argv, invocation)
    if ctx is None:
        return None
    params = dict(ctx.params)
    _refuse(ctx, params)
    _defaults(ctx, params)
    arguments = [arg for arg in ctx.args if not arg.startswith("-") or arg == "-"]
    runtime_flags = [arg for arg in ctx.args if arg.startswith("-") and arg != "-"]
    config = Config(invocation.pm, params, runtime_flags, list(argv), invocation.stdout,
                    invocation.stderr, option_specs(command))
    config.command_line = ["rank", *argv]
    return config, arguments


def register_files(config, options, found) -> None:
    """The ranking's files in the run's :class:`~ireebench.outfiles.RunFiles`: the
    baseline and the candidates are read, ``--rank_out``, ``--rank_stream`` and the
    cache written, so none of those outputs can be an input or another output."""
    register_input(config, f"--baseline={options.baseline}", options.baseline)
    for candidate in found:
        register_input(config, f"candidate {candidate.id} ({candidate.path})", candidate.path)
    register_output(config, "rank_out", options.rank_out)
    register_output(config, "rank_stream", options.rank_stream)
    if options.cache:  # its folder is made when it is opened
        run_files(config).add_output(f"--rank_cache={options.cache}", options.cache)


def main(argv: list[str], invocation) -> Ranking:
    """``ireebench rank``: parse, configure, rank (the run's backend)."""
    parsed = parse(argv, invocation)
    if parsed is None:
        return Ranking(0, [])
    config, arguments = parsed
    if config.getoption("rank_serve"):  # a warm worker on a cluster's node
        from .serve import serve

        return serve(config, invocation)
    options = settings(config)
    found = candidate_files.collect(arguments, payloads=bool(options.replay))
    # Reported as the run's module and devices (provenance, the store's fingerprint).
    config = derived(config, module=(options.baseline,),
                     device=tuple(dict.fromkeys(options.devices)))
    if options.race_budget is not None and found \
            and config.getoption("benchmark_max_time") in (ADAPTIVE_MAX_TIME, "", None):
        # A race's first pass: each candidate's share of a third of the budget.
        cap = race.screen_cap(options.race_budget, len(found))
        config = derived(config, benchmark_max_time=f"{cap:.6g}s")
    register_files(config, options, found)
    config = configure(config, invocation.selection)
    if POINTS in config.stash:
        config.release()
        raise UsageError("rank: a plugin made points of this run; a ranking measures its "
                         "candidates")
    # The coordinator and its workers measure (the runtime), in a run (the core's
    # machinery: the worker, the report hub, read through ireebench.backend's
    # run_here): imported when a ranking runs.
    from .schedule import Ranker
    ranker = Ranker(config, options, found)
    # A worker on a cluster's node loads the plugins this command line loaded.
    ranker.selection = [*(f"--plugin={spec}" for spec in invocation.selection.specs),
                        *(f"-pno:{name}" for name in invocation.selection.blocked)]
    # EXECUTORS: the workers run where --executor says (this machine, a Ray cluster).
    result = backend.run_here(config, Backend("rank", ranker.run, capabilities={EXECUTORS}))
    ranking = ranker.ranking
    ranking.exit_code, ranking.runs, ranking.context = (result.exit_code, result.runs,
                                                        result.context)
    return ranking


# What the plugin registers as ``ireebench rank`` (a DeferredCommand names it).
COMMAND = ArgvCommand("rank", main, help=HELP,
                      short_help="Rank candidate modules against a baseline.")
