"""The console reporter: Google Benchmark's table (console_reporter.cc).

The machine context goes to the error stream (stderr for the display; the
file itself for ``--benchmark_out_format=console``), the table to the output
stream, with Google Benchmark's column widths, time precision (FormatTime),
counter formatting (HumanReadableNumber: ``152.154k/s``) and, with
``--benchmark_counters_tabular``, one right-aligned column per counter and a
new header whenever the counter set changes. Colors are never emitted.

With ``--device_time`` a ``Device`` column follows ``CPU`` (the device's
busy time per iteration, formatted as the other times), from the first
benchmark that has one (a new header then); rows without one (extra rows)
leave it blank. Without it the table is Google Benchmark's.
"""

from __future__ import annotations

from ireebench import hookimpl
from ireebench.reporting import Reporter, print_basic_context
from ireebench.reporting.humanize import format_time, human_readable


def _is_percentage(run) -> bool:
    return run.run_type == "aggregate" and run.aggregate_unit == "percentage"


def _device_time(run):
    return getattr(run, "device_time", None)


def _time_cell(value: float, unit: str, percentage: bool) -> str:
    """A time and its unit, then a space (a fraction as a percentage)."""
    if percentage:
        return f"{100 * value:10.2f} {'%':<4} "
    return f"{format_time(value)} {unit:<4} "


class ConsoleReporter(Reporter):
    """Google Benchmark's ConsoleReporter without colors."""

    def __init__(self, stream, config, err_stream=None):
        super().__init__(stream, config, err_stream)
        self.tabular = bool(config.getoption("benchmark_counters_tabular"))
        self.name_field_width = 10
        self._printed_header = False
        self._previous_counters: list[str] | None = None
        self.device_column = False  # a Device column, once a row has a device time

    def report_context(self, context) -> bool:
        self.name_field_width = context.name_field_width
        self._printed_header = False
        self._previous_counters = None
        print_basic_context(self.err_stream or self.stream, context)
        return True

    def header(self, run) -> str:
        """The three header lines (PrintHeader), for the counters of ``run``."""
        device = f" {'Device':>15}" if self.device_column else ""
        text = (f"{'Benchmark':<{self.name_field_width}} {'Time':>13} {'CPU':>15}{device} "
                f"{'Iterations':>12}")
        if run.counters:
            if self.tabular:
                text += "".join(f" {name:>10}" for name in sorted(run.counters))
            else:
                text += " UserCounters..."
        line = "-" * len(text)
        return f"{line}\n{text}\n{line}\n"

    def report_runs(self, runs) -> None:
        chunks = []
        if not self.device_column and any(_device_time(run) is not None for run in runs):
            self.device_column = True
            self._printed_header = False  # the header gains the column
        for run in runs:
            names = sorted(run.counters)
            if not self._printed_header or (self.tabular and names != self._previous_counters):
                self._printed_header = True
                self._previous_counters = names
                chunks.append(self.header(run))
            chunks.append(self.format_run(run) + "\n")
        # One write per benchmark: the hub holds signals back around it.
        self.stream.write("".join(chunks))
        self.stream.flush()

    def format_run(self, run) -> str:
        """One table row (PrintRunData), without the newline."""
        text = f"{run.benchmark_name:<{self.name_field_width}} "
        if run.error_occurred:
            return text + f"ERROR OCCURRED: '{run.error_message}'"
        percentage = _is_percentage(run)
        text += _time_cell(run.real_time, run.time_unit, percentage)
        text += _time_cell(run.cpu_time, run.time_unit, percentage)
        if self.device_column:
            device = _device_time(run)
            text += " " * 16 if device is None else _time_cell(device, run.time_unit, percentage)
        text += f"{int(run.iterations):10d}"
        for name, counter in sorted(run.counters.items()):
            value = float(getattr(counter, "value", counter))
            if _is_percentage(run):
                shown, unit = f"{100 * value:.2f}", "%"
            else:
                shown = human_readable(value, getattr(counter, "one_k", 1000))
                unit = "/s" if getattr(counter, "is_rate", False) else ""
            if self.tabular:
                width = max(10, len(name)) - len(unit)
                text += f" {shown:>{width}}{unit}"
            else:
                text += f" {name}={shown}{unit}"
        if run.label:
            text += f" {run.label}"
        return text


@hookimpl
def ireebench_reporters():
    """Registers the ``console`` reporter (the default display)."""
    return {"console": ConsoleReporter}
