"""``ireebench compare OLD.json NEW.json``: the command line of a comparison.

Two modules (``ireebench compare A.vmfb B.vmfb [run flags]``) are told apart
from two reports by a first reading that keeps the options it does not know
(:func:`.paired.split_arguments`): those are then the run's flags.

A run of its own kind: the plugin manager is built as for a benchmark run
(``--plugin``, ``-p``, entry points, flag files), but the command has its
own options (below) and calls only ``ireebench_compare_reporters``, the
hook this plugin declares; the run is :func:`.run.run_compare`.

Exit status, as diff(1) and cmp(1): 0 no regression, 1 a significant
regression beyond its threshold, 2 bad input (a usage error: a missing or
unreadable file, a file that is not a benchmark report, a bad flag; one
``ireebench: error:`` line), 3 a plugin or internal error, 4 a benchmark
that cannot be judged (its detectable change is wider than
``--detectable``, or the drop of its CPU share explains its slowdown in
real time, or too few repetitions for a verdict: ``inconclusive``;
``--accept_cannot_judge`` makes that 0), 130/143 on a signal. A benchmark run's usage errors exit 1; here 1 is taken by the
regression, so that CI can tell the two apart.
"""

from __future__ import annotations

import click
from ireebench.commands import (
    CORE,
    ArgvCommand,
    GroupedCommand,
    OptionParser,
    add_plugin_options,
    known_names,
    make_context,
    option_specs,
)
from ireebench.comparison import COMPARE_OPTIONS, compare_options
from ireebench.comparison.model import (
    AUTO_METRIC,
    DEFAULT_ALPHA,
    DEFAULT_CORRECTION,
    DEFAULT_DETECTABLE,
)
from ireebench.comparison.utest import CORRECTIONS
from ireebench.config import Config
from ireebench.errors import EXIT_COMPARE_USAGE, UsageError
from ireebench.outfiles import register_inputs, register_output
from ireebench.results import RunResult

from .paired import split_arguments
from .run import DEFAULT_OUT_FORMAT, DEFAULT_REPORTER, run_compare

COMPARE_GROUP = "Comparison"
PLUGIN_NAME = "compare"  # this plugin's registration name
PLUGIN_GROUP = "Plugins"

HELP = """Compare two Google Benchmark JSON reports: ireebench's (--benchmark_out,
--benchmark_format=json) or iree-benchmark-module's; or runs a results store
keeps (stored:latest, stored:RUN_ID; stored:history as OLD: the gate against
the recent stored runs, see docs/store.md).

Per benchmark (matched by name), on --metric (auto by default: cpu_time on
local-sync, real_time elsewhere): the
medians, the change new/old with its confidence interval, a two-sided
Mann-Whitney U test of the repetitions (9 or more a side for a verdict) and
a verdict: faster, slower or no significant change (better, worse for a
metric that is not a time). Then the geometric mean of the changes.

Benchmarks that could not show a change of --detectable (10%) are "cannot
judge", as is a slowdown in real time that the drop of the new run's CPU
share explains; runs whose reports say their machine was busy are named,
and left out of a history's baseline.

Two IREE modules (A.vmfb B.vmfb, or .mlir) are measured here, in one
process, interleaved in random order round by round (by default 30 rounds of
0.05s a module: --benchmark_repetitions, --benchmark_min_time; --malloc_trim=on),
and judged on the rounds' paired ratios B/A: a Wilcoxon signed-rank test, on
cpu_time on local-sync, real_time elsewhere; "cannot judge" where the change's
interval reaches beyond --detectable. Every flag compare does not know is the
run's (--device=..., --function=..., --input=...).

Exit status: 0 no regression; 1 a significant slowdown beyond its threshold;
2 bad input or usage; 3 a plugin error; 4 a benchmark cannot be judged, or
has fewer than 9 repetitions a side (--accept_cannot_judge: 0). See
docs/compare.md.
"""


class CompareCommand(GroupedCommand):
    """The help lists the comparison reporters of the loaded plugins."""

    show_runtime_flags = False

    def _list_plugin_objects(self) -> None:
        if self.pm is None:
            return
        names = known_names(self.pm, "ireebench_compare_reporters", "compare reporter")
        for option in self.params:
            if option.name in ("reporter", "out_format") and names:
                option.metavar = names.replace(", ", "|")


def add_compare_options(parser: OptionParser) -> None:
    """The options of ``ireebench compare`` itself (owned by this plugin)."""
    g = COMPARE_GROUP
    parser.addoption("--threshold", "threshold", multiple=True, group=g,
                     metavar="[PATTERN=]PERCENT",
                     help="Fail (exit 1) on a significant slowdown larger than PERCENT "
                          "(5%); PATTERN=PERCENT for the benchmarks the regex PATTERN "
                          "finds, winning over a plain PERCENT (the last matching pattern "
                          "wins); repeatable. Default 0%: any significant slowdown.")
    parser.addoption("--alpha", "alpha", type=float, default=DEFAULT_ALPHA, group=g,
                     help="Significance level of the U test (0.05).")
    parser.addoption("--confidence", "confidence", type=float, default=None, group=g,
                     help="Level of the change's interval (default 1 - alpha: the "
                          "interval excludes 0 exactly when the test is significant).")
    parser.addoption("--metric", "metric", default=AUTO_METRIC, group=g, metavar="NAME",
                     help="What is compared: auto (default: cpu_time for a benchmark on "
                          "local-sync, whose calling thread does the work and whose real time "
                          "counts waits for a CPU; real_time elsewhere), real_time, cpu_time, "
                          "device_time, max_bytes_used, total_allocated_bytes, or any counter. "
                          "A metric that does not vary between repetitions (memory) is "
                          "compared exactly: a change beyond the threshold is the verdict.")
    parser.addoption("--detectable", "detectable", default=f"{DEFAULT_DETECTABLE * 100:g}%",
                     group=g, metavar="PERCENT",
                     help="A benchmark without a significant change that could not have "
                          "shown one of PERCENT (or of its --threshold, if larger) is "
                          "'cannot judge', exit 4: too few repetitions, too much noise, or "
                          "a history's band too wide. Default 10%.")
    parser.addoption("--accept_cannot_judge", "accept_cannot_judge", is_flag=True,
                     default=False, group=g,
                     help="Exit 0, not 4, when benchmarks cannot be judged or are "
                          "inconclusive (the verdicts still say so).")
    parser.addoption("--correction", "correction", default=DEFAULT_CORRECTION, group=g,
                     metavar="|".join(CORRECTIONS),
                     help="Multiple-comparison correction of the p-values over the "
                          "benchmarks: bh (Benjamini-Hochberg, default), holm, none.")
    parser.addoption("--higher_is_better", "higher_is_better", is_flag=True, default=None,
                     group=g,
                     help="A larger value of --metric is better (a regression is a decrease). "
                          "Default: only for rates (a counter *_per_second, or one the report "
                          "lists in rate_counters, as --counter does).")
    parser.addoption("--reporter", "reporter", default=DEFAULT_REPORTER, group=g,
                     metavar="NAME", help="Display reporter: console, markdown, json, or "
                                          "one a plugin adds.")
    parser.addoption("--out", "out", default="", group=g, metavar="FILE",
                     help="Also write the comparison to FILE (atomically).")
    parser.addoption("--out_format", "out_format", default=DEFAULT_OUT_FORMAT, group=g,
                     metavar="NAME", help="Reporter of --out (json).")


def _plugin_options(parser: OptionParser) -> None:
    parser.addoption("--plugin", "plugin", multiple=True, group=PLUGIN_GROUP,
                     metavar="MODULE|FILE.py", help="Load a plugin module or file; repeatable.")
    parser.addoption("-p", "block", multiple=True, group=PLUGIN_GROUP, metavar="NAME|no:NAME",
                     help="-p NAME loads a plugin; -p no:NAME blocks one; repeatable.")


def _options(pm) -> list:
    """This plugin's options, the plugin flags, then those of ``ireebench_compare_addoption``
    (a results store's ``--benchmark_storage``...): a flag defined twice names both."""
    parser = OptionParser()
    parser.plugin = PLUGIN_NAME
    add_compare_options(parser)
    parser.plugin = CORE
    _plugin_options(parser)
    add_plugin_options(pm, parser, "ireebench_compare_addoption")
    return parser.options


def _command(pm, paired: bool) -> CompareCommand:
    """The command line; ``paired``: options it does not know are left over (the run's
    flags of two modules, see :mod:`.paired`) instead of refused."""
    settings = {"help_option_names": ["--help", "-h"], "allow_extra_args": True}
    if paired:
        settings["ignore_unknown_options"] = True
    command = CompareCommand("ireebench compare", params=_options(pm), help=HELP,
                             context_settings=settings, pm=pm)
    command.options_metavar = "OLD.json NEW.json [OPTIONS] | A.vmfb B.vmfb [OPTIONS] [RUN FLAGS]"
    return command


def parse_compare_args(argv: list[str], invocation) -> Config | None:
    """The :class:`Config` of an ``ireebench compare`` run, or None when --help was printed.

    The leftovers of a first reading that keeps unknown options say which comparison
    it is: two modules (:func:`.paired.split_arguments`: the other leftovers are
    the run's flags), else two reports, read again as before (an unknown option is
    an error)."""
    pm = invocation.pm
    command = _command(pm, paired=True)
    ctx = make_context(command, "ireebench compare", argv, invocation)
    if ctx is None:
        return None
    split = split_arguments(list(ctx.args))
    if split is None:
        # The two files are the positional arguments (click's leftovers); an
        # unknown option is still an error.
        command = _command(pm, paired=False)
        ctx = make_context(command, "ireebench compare", argv, invocation)
        if ctx is None:
            return None
    options = dict(ctx.params)
    if split is not None:
        files, options["run_flags"] = split
        options["paired"] = True
        options["metric_chosen"] = (ctx.get_parameter_source("metric")
                                    != click.core.ParameterSource.DEFAULT)
        options["paired_selection"] = invocation.selection
        options["paired_plugins"] = tuple(invocation.plugins or ())
    else:
        files = list(ctx.args)
    if len(files) != 2:
        raise UsageError("compare: expected two files: ireebench compare OLD.json NEW.json "
                         f"[flags] (got {len(files)}: {' '.join(files) or 'none'})")
    options["old"], options["new"] = files
    settings = compare_options(options)
    config = Config(pm, options, [], list(argv), invocation.stdout, invocation.stderr,
                    option_specs(command))
    register_inputs(config, files)
    register_output(config, "out", options["out"])  # never over OLD, NEW or the store
    config.stash[COMPARE_OPTIONS] = settings
    return config


def compare_main(argv: list[str], invocation) -> RunResult:
    """Parses and runs ``ireebench compare``; a usage error exits 2 (see the module doc)."""
    try:
        config = parse_compare_args(argv, invocation)
        if config is None:
            return RunResult(0, [])
        return run_compare(config)
    except UsageError as exc:
        exc.exit_code = EXIT_COMPARE_USAGE
        raise


# What the plugin registers as ``ireebench compare`` (a DeferredCommand names it).
COMMAND = ArgvCommand("compare", compare_main, help=HELP,
                      short_help="Compare two benchmark reports: verdicts, exit 1 on a "
                                 "regression.",
                      usage_exit_code=EXIT_COMPARE_USAGE)
