"""The console reporter: Google Benchmark's table (console_reporter.cc).

The machine context goes to stderr, the table to stdout, with the same
column widths, time precision and counter formatting, so tools that parse
iree-benchmark-module's console output (``iree.runtime.benchmark_module``)
keep working. Colors are never emitted.
"""

from __future__ import annotations

from ireebench import hookimpl
from ireebench.humanize import cpp_stream, format_time, human_readable
from ireebench.reporting import Reporter


def print_basic_context(stream, context) -> None:
    """Google Benchmark's PrintBasicContext."""
    stream.write(f"{context.date}\n")
    stream.write(f"Running {context.executable}\n")
    plural = "s" if context.num_cpus > 1 else ""
    mhz = cpp_stream(context.cycles_per_second / 1e6)
    stream.write(f"Run on ({context.num_cpus} X {mhz} MHz CPU {plural})\n")
    if context.caches:
        stream.write("CPU Caches:\n")
        for cache in context.caches:
            line = f"  L{cache.level} {cache.type} {cache.size // 1024} KiB"
            if cache.num_sharing:
                line += f" (x{context.num_cpus // cache.num_sharing})"
            stream.write(line + "\n")
    if context.load_avg:
        stream.write("Load Average: " + ", ".join(f"{v:.2f}" for v in context.load_avg) + "\n")
    for key, value in context.global_context.items():
        stream.write(f"{key}: {value}\n")
    if context.cpu_scaling_enabled:
        stream.write("***WARNING*** CPU scaling is enabled, the benchmark real time "
                     "measurements may be noisy and will incur extra overhead.\n")
    if context.aslr_enabled:
        stream.write("***WARNING*** ASLR is enabled, the results may have unreproducible "
                     "noise in them.\n")
    stream.flush()


class ConsoleReporter(Reporter):
    def __init__(self, stream, config, err_stream=None):
        super().__init__(stream, config, err_stream)
        self.tabular = bool(config.getoption("benchmark_counters_tabular"))
        self.name_field_width = 10
        self._printed_header = False
        self._previous_counters: list[str] | None = None

    def report_context(self, context) -> bool:
        self.name_field_width = context.name_field_width
        self._printed_header = False
        print_basic_context(self.err_stream or self.stream, context)
        return True

    def _header(self, run) -> None:
        text = f"{'Benchmark':<{self.name_field_width}} {'Time':>13} {'CPU':>15} {'Iterations':>12}"
        if run.counters:
            if self.tabular:
                text += "".join(f" {name:>10}" for name in sorted(run.counters))
            else:
                text += " UserCounters..."
        line = "-" * len(text)
        self.stream.write(f"{line}\n{text}\n{line}\n")

    def report_runs(self, runs) -> None:
        for run in runs:
            names = sorted(run.counters)
            if not self._printed_header or (self.tabular and names != self._previous_counters):
                self._printed_header = True
                self._previous_counters = names
                self._header(run)
            self.stream.write(self.format_run(run) + "\n")
        self.stream.flush()

    def format_run(self, run) -> str:
        text = f"{run.benchmark_name:<{self.name_field_width}} "
        if run.error_occurred:
            return text + f"ERROR OCCURRED: '{run.error_message}'"
        if run.run_type != "aggregate" or run.aggregate_unit == "time":
            unit = run.time_unit
            text += f"{format_time(run.real_time)} {unit:<4} {format_time(run.cpu_time)} {unit:<4} "
        else:
            text += f"{100 * run.real_time:10.2f} {'%':<4} {100 * run.cpu_time:10.2f} {'%':<4} "
        text += f"{run.iterations:10d}"
        percentage = run.run_type == "aggregate" and run.aggregate_unit == "percentage"
        for name, counter in sorted(run.counters.items()):
            if percentage:
                value, unit = f"{100 * counter.value:.2f}", "%"
            else:
                value = human_readable(counter.value, counter.one_k)
                unit = "/s" if counter.is_rate else ""
            if self.tabular:
                width = max(10, len(name))
                text += f" {value:>{width - len(unit)}}{unit}"
            else:
                text += f" {name}={value}{unit}"
        if run.label:
            text += f" {run.label}"
        return text


@hookimpl
def ireebench_reporters():
    return {"console": ConsoleReporter}
