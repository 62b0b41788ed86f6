"""``ireebench report INPUTS... -o report.html``: the command line of a report.

A command of its own, as ``ireebench compare``: the plugin manager is
built as for a benchmark run (``--plugin``, ``-p``, entry points, flag
files), so that a plugin answering ``ireebench_load_reports`` (a results
store's ``stored:...``) resolves the inputs; the comparison flags are
those of ``ireebench compare`` (the same verdicts). Everything is read
and checked before anything is written; usage errors exit 1.
"""

from __future__ import annotations

import contextlib
import gc
from pathlib import Path

from ireebench.commands import (
    ArgvCommand,
    GroupedCommand,
    GroupedOption,
    OptionParser,
    add_plugin_options,
    make_context,
)
from ireebench.comparison import COMPARE_OPTIONS, compare_options
from ireebench.comparison.inputs import METRICS, ReportHistory, load_reports
from ireebench.comparison.model import DEFAULT_ALPHA
from ireebench.config import Config
from ireebench.errors import UsageError, flag_error
from ireebench.outfiles import register_inputs, register_output
from ireebench.results import RunResult

from .data import read_report
from .render import CHART_FORMATS, check_output_dir, load_renderer, readable_reports

REPORT_GROUP = "Report"
COMPARE_GROUP = "Comparison (as ireebench compare)"
PLUGIN_GROUP = "Plugins"

HELP = """Draw benchmark reports as one self-contained HTML page (inline SVG charts,
no script, nothing from the network: it opens offline from file://).

INPUTS are Google Benchmark JSON reports (ireebench's --benchmark_out or
iree-benchmark-module's) or references a plugin resolves (a results store's
stored:...), oldest first: the last input is the latest, and a stored
history is put oldest first. The page opens with the verdict of the latest
against the reports before it, as ireebench compare judges it (compare OLD
NEW for two reports, compare stored:history NEW for more), by name, with
its size and confidence; then the change points of a history. Then,
where the data allows: the comparison, the trend, sweeps (each metric
against each axis), every benchmark's repetitions on one axis, dispatch
statistics, device time, memory and counters, and the inputs' provenance.
Plugins add sections (ireebench_report_sections). Prints the path it wrote.

Needs matplotlib: pip install "ireebench[report]". See docs/report.md.
"""


def _options() -> list:
    g, c = REPORT_GROUP, COMPARE_GROUP
    return [
        GroupedOption(("-o", "--output", "output"), default="", group=g, metavar="FILE.html",
                      help="Write the HTML report to FILE (atomically)."),
        GroupedOption(("--output_dir", "output_dir"), default="", group=g, metavar="DIR",
                      help="Also write each chart as a file of its own in DIR (created "
                           "if missing), for pull request comments and papers."),
        GroupedOption(("--format", "chart_format"), default=None, group=g,
                      metavar="|".join(CHART_FORMATS),
                      help="The format of the --output_dir files (svg)."),
        GroupedOption(("--threshold", "threshold"), multiple=True, group=c,
                      metavar="[PATTERN=]PERCENT",
                      help="A significant slowdown beyond PERCENT is a regression "
                           "(marked in the comparison); repeatable."),
        GroupedOption(("--alpha", "alpha"), type=float, default=DEFAULT_ALPHA, group=c,
                      help="Significance level of the U test (0.05)."),
        GroupedOption(("--confidence", "confidence"), type=float, default=None, group=c,
                      help="Level of the change's interval (default 1 - alpha)."),
        GroupedOption(("--metric", "metric"), default="auto", group=c,
                      metavar="|".join((*METRICS, "auto")),
                      help="The time compared: auto (default, as ireebench compare: "
                           "cpu_time on local-sync, real_time elsewhere), or one of them."),
        GroupedOption(("--plugin", "plugin"), multiple=True, group=PLUGIN_GROUP,
                      metavar="MODULE|FILE.py", help="Load a plugin module or file; "
                                                    "repeatable."),
        GroupedOption(("-p", "block"), multiple=True, group=PLUGIN_GROUP,
                      metavar="NAME|no:NAME",
                      help="-p NAME loads a plugin; -p no:NAME blocks one; repeatable."),
    ]


class ReportCommand(GroupedCommand):
    show_runtime_flags = False


def parse_report_args(argv: list[str], invocation) -> Config | None:
    """The :class:`Config` of an ``ireebench report`` run, or None when --help was printed."""
    # And the options plugins give commands that read reports, as compare has them
    # (a results store's --benchmark_storage, --where, --window, --any_machine).
    reading = OptionParser()
    add_plugin_options(invocation.pm, reading, "ireebench_compare_addoption")
    command = ReportCommand("ireebench report", params=_options() + reading.options, help=HELP,
                            context_settings={"help_option_names": ["--help", "-h"],
                                              "allow_extra_args": True},
                            pm=invocation.pm)
    command.options_metavar = "INPUTS... -o FILE.html [OPTIONS]"
    ctx = make_context(command, "ireebench report", argv, invocation)
    if ctx is None:
        return None
    options = dict(ctx.params)
    inputs = list(ctx.args)
    if not inputs:
        raise UsageError("report: expected one or more inputs: ireebench report "
                         "INPUTS... -o FILE.html (JSON reports or stored:... references)")
    chart_format = options["chart_format"]
    if chart_format is not None and chart_format not in CHART_FORMATS:
        raise flag_error("format", chart_format, f"one of {', '.join(CHART_FORMATS)}")
    if chart_format is not None and not options["output_dir"]:
        raise flag_error("format", chart_format, "needs --output_dir=DIR (the charts' files)")
    if not options["output"] and not options["output_dir"]:
        raise UsageError("report: nothing to write: give -o FILE.html and/or --output_dir=DIR")
    check_output_dir(options["output_dir"])
    options["chart_format"] = chart_format or CHART_FORMATS[0]
    options["inputs"] = inputs
    settings = compare_options(options)
    config = Config(invocation.pm, options, [], list(argv), invocation.stdout,
                    invocation.stderr)
    register_inputs(config, inputs)
    register_output(config, "output", options["output"])  # never over an input, the store
    config.stash[COMPARE_OPTIONS] = settings
    return config


def read_inputs(config, references: list[str]) -> tuple[list[tuple[str, dict]], bool]:
    """Every input's ``(label, report)``, **oldest first**, and whether one was a history.

    The report's one ordering: the command line's order, the last input
    the latest; a reference that names a history
    (:class:`~ireebench.comparison.inputs.ReportHistory`, a store's
    ``stored:history``) comes newest first and is put oldest first here,
    once, so that everything after reads the reports the same way.
    """
    loaded, history = [], False
    for reference in references:
        found = load_reports(config, reference, command="report")
        if isinstance(found, ReportHistory):
            history = True
            found = found.oldest_first()
        loaded += found
    return loaded, history


@contextlib.contextmanager
def long_lived():
    """Reading makes millions of objects that live to the end of the report (10,000
    benchmarks in 5 reports: a fifth of the time went to the cycle collector
    scanning them again and again): no cycle collection meanwhile."""
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def run_report(config) -> RunResult:
    """Reads every input, then draws and writes the report; says what it wrote."""
    try:
        renderer = load_renderer()
        with long_lived():
            loaded, history = read_inputs(config, config.getoption("inputs"))
            read = []
            while loaded:  # each parsed report let go once read (10,000 benchmarks: 250 MB)
                label, report = loaded.pop(0)
                read.append(read_report(label, report))
        reports = readable_reports(config, read)
        output, output_dir = config.getoption("output"), config.getoption("output_dir")
        document = renderer.write(reports, config.stash[COMPARE_OPTIONS], config,
                                  html_path=output, output_dir=output_dir,
                                  chart_format=config.getoption("chart_format"),
                                  flag="output", as_history=history)
        _say_written(config, output, output_dir, document)
        renderer.raise_failures(document, config)
    finally:
        config.release()
    return RunResult(0, [])


def _say_written(config, output: str, output_dir: str, document) -> None:
    """``wrote /abs/report.html``: where the page is (a path to open or to attach)."""
    if output:
        config.stdout.write(f"wrote {Path(output).resolve()}\n")
    if output_dir:
        config.stdout.write(f"wrote {len(document.files)} chart file(s) to "
                            f"{Path(output_dir).resolve()}\n")


def report_main(argv: list[str], invocation) -> RunResult:
    config = parse_report_args(argv, invocation)
    if config is None:
        return RunResult(0, [])
    return run_report(config)


# What the plugin registers as ``ireebench report`` (a DeferredCommand names it).
COMMAND = ArgvCommand("report", report_main, help=HELP,
                      short_help="Draw benchmark reports as one self-contained HTML page "
                                 "(charts, comparison, trend).")
