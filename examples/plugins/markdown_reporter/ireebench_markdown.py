"""Example plugin: a reporter that prints one Markdown table.

    ireebench --module=model.vmfb --reporter=markdown

Install it (``pip install examples/plugins/markdown_reporter``: entry point
``markdown``, so it loads in every run) or load it once with
``--plugin examples/plugins/markdown_reporter/ireebench_markdown.py``.
``--reporter=markdown`` shows it; ``--benchmark_out=r.md
--benchmark_out_format=markdown`` writes it to a file.
"""

from ireebench import Reporter, hookimpl
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
