"""Example plugin: a reporter that prints one Markdown table.

    ireebench --module=model.vmfb --reporter=markdown

Install it (``pip install examples/plugins/markdown_reporter``: entry point
``markdown``, so it loads in every run) or load it once with
``--plugin examples/plugins/markdown_reporter/ireebench_markdown.py``.
``--reporter=markdown`` shows it; ``--benchmark_out=r.md
--benchmark_out_format=markdown`` writes it to a file.

It also adds a subcommand (``ireebench_register_commands``) that prints a
report written earlier (``--benchmark_out=run.json``, ireebench's or the
native tool's) as the same table::

    ireebench markdown run.json
"""

import json

import click
from ireebench import Reporter, UsageError, hookimpl
from ireebench.backend import runs_from_benchmark_json
from tabulate import tabulate


class MarkdownReporter(Reporter):
    """Collects the rows and prints one Markdown table at the end."""

    def __init__(self, stream, config, err_stream=None):
        super().__init__(stream, config, err_stream)
        self.rows = []

    def report_runs(self, runs):
        for run in runs:
            if run.error_occurred:
                self.rows.append([run.benchmark_name, "ERROR", "", "", run.error_message])
                continue
            time = f"{run.real_time:.4f} {run.time_unit}"
            if run.run_type == "aggregate" and run.aggregate_unit == "percentage":
                time = f"{100 * run.real_time:.2f} %"
            self.rows.append([run.benchmark_name, time, run.iterations,
                              f"{run.counters['items_per_second'].value:.1f}"
                              if "items_per_second" in run.counters else "", ""])

    def finalize(self):
        headers = ["benchmark", "real time", "iterations", "items/s", "error"]
        self.stream.write(tabulate(self.rows, headers=headers, tablefmt="github") + "\n")
        self.stream.flush()


@hookimpl
def ireebench_reporters():
    return {"markdown": MarkdownReporter}


@hookimpl
def ireebench_register_commands(cli):
    @cli.command(name="markdown")
    @click.argument("report", type=click.Path(dir_okay=False))
    @click.pass_obj
    def markdown(config, report):
        """Print a Google Benchmark JSON report as a Markdown table."""
        try:
            with open(report, encoding="utf-8") as handle:
                data = json.load(handle)
        except (OSError, ValueError) as exc:
            raise UsageError(f"markdown: {report}: not a readable JSON report ({exc})") from None
        reporter = MarkdownReporter(config.stdout, None)
        for runs in runs_from_benchmark_json(data):
            reporter.report_runs(runs)
        reporter.finalize()
