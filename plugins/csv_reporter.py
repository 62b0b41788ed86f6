"""The CSV reporter: Google Benchmark's CSV (src/csv_reporter.cc).

Header ``name,iterations,real_time,cpu_time,time_unit,bytes_per_second,
items_per_second,label,error_occurred,error_message`` followed by one quoted
column per user counter (sorted). ``bytes_per_second`` and
``items_per_second`` are counters too but have their own columns, as in
Google Benchmark. Names, labels and error messages are always quoted
(``"`` doubled); numbers are written like ``std::ostream << double``.
A failed run leaves every cell empty except ``error_occurred`` (``true``)
and ``error_message``. A percentage aggregate (``_cv``) has no time unit.

The machine context goes to the error stream (stderr for the display, the
file itself for ``--benchmark_out``), as Google Benchmark's CSVReporter does.

With ``--device_time`` a ``device_time`` column follows ``cpu_time``
(per iteration in ``time_unit``; empty for rows without one), when the
first benchmark has it; without the flag the CSV is Google Benchmark's.

The header is written with the first benchmark, so the user-counter columns
(and the ``device_time`` column) are those of the first benchmark's rows. Google Benchmark aborts when a
later row brings a new counter; ireebench leaves such a counter out of the
CSV (it stays in JSON and in the Python API).
"""

from __future__ import annotations

from ireebench import hookimpl
from ireebench.reporting import Reporter, print_basic_context
from ireebench.reporting.humanize import cpp_stream

COLUMNS = ["name", "iterations", "real_time", "cpu_time", "time_unit", "bytes_per_second",
           "items_per_second", "label", "error_occurred", "error_message"]
# Counters with a column of their own instead of a user-counter column.
NAMED_COUNTERS = ("bytes_per_second", "items_per_second")


def csv_quote(text: str) -> str:
    """Google Benchmark's CsvEscape: always quoted, ``"`` doubled."""
    return '"' + str(text).replace('"', '""') + '"'


def _device_time(run):
    return getattr(run, "device_time", None)


def _value(counter) -> float:
    return float(getattr(counter, "value", counter))


class CSVReporter(Reporter):
    """Google Benchmark's CSVReporter; streams one benchmark at a time."""

    def __init__(self, stream, config, err_stream=None):
        super().__init__(stream, config, err_stream)
        self.user_counter_names: list[str] | None = None
        self.columns = list(COLUMNS)

    def report_context(self, context) -> bool:
        print_basic_context(self.err_stream or self.stream, context)
        return True

    def report_runs(self, runs) -> None:
        lines = []
        if self.user_counter_names is None:
            names = {name for run in runs for name in run.counters}
            self.user_counter_names = sorted(names - set(NAMED_COUNTERS))
            if any(_device_time(run) is not None for run in runs):
                self.columns.insert(self.columns.index("cpu_time") + 1, "device_time")
            header = ",".join(self.columns) + "".join(
                "," + csv_quote(name) for name in self.user_counter_names
            )
            lines.append(header)
        lines.extend(self.format_run(run) for run in runs)
        if lines:
            # One write per benchmark: the hub holds signals back around it.
            self.stream.write("\n".join(lines) + "\n")
            self.stream.flush()

    def format_run(self, run) -> str:
        """One CSV line (without the newline)."""
        name = csv_quote(run.benchmark_name)
        if run.error_occurred:
            return f"{name}{',' * (len(self.columns) - 2)}true,{csv_quote(run.error_message)}"
        percentage = run.run_type == "aggregate" and run.aggregate_unit == "percentage"
        cells = [
            name,
            str(int(run.iterations)),
            cpp_stream(run.real_time),
            cpp_stream(run.cpu_time),
        ]
        if "device_time" in self.columns:
            device = _device_time(run)
            cells.append("" if device is None else cpp_stream(device))
        cells.append("" if percentage else run.time_unit)
        for counter_name in NAMED_COUNTERS:
            counter = run.counters.get(counter_name)
            cells.append("" if counter is None else cpp_stream(_value(counter)))
        cells.append(csv_quote(run.label) if run.label else "")
        cells += ["", ""]  # error_occurred, error_message
        for counter_name in self.user_counter_names or ():
            counter = run.counters.get(counter_name)
            cells.append("" if counter is None else cpp_stream(_value(counter)))
        return ",".join(cells)


@hookimpl
def ireebench_reporters():
    """Registers the ``csv`` reporter (--benchmark_format=csv, --reporter=csv)."""
    return {"csv": CSVReporter}
