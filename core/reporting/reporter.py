"""The reporter interface (Google Benchmark's BenchmarkReporter) and its context block."""

from __future__ import annotations

from ..results import Run
from .humanize import cpp_stream


class Reporter:
    """Base class of reporters (Google Benchmark's BenchmarkReporter).

    A reporter plugin returns ``{"name": factory}`` from
    ``ireebench_reporters``; the factory is called as
    ``factory(stream, config, err_stream)`` (a subclass of this class is
    such a factory).

    ``stream`` is where the report goes (the run's stdout for the display
    reporter, the ``--benchmark_out`` file otherwise); ``err_stream`` is
    where Google Benchmark's console and CSV reporters print the machine
    context (the run's stderr for the display reporter, the same file for
    ``--benchmark_out``).
    """

    def __init__(self, stream, config, err_stream=None):
        self.stream = stream
        self.config = config
        self.err_stream = err_stream

    def report_context(self, context) -> bool:
        """Called once before any run. Return False to receive no runs."""
        return True

    def report_runs(self, runs: list[Run]) -> None:
        """Called once per benchmark with its rows (repetitions, aggregates, extras)."""

    def finalize(self) -> None:
        """Called once at the end, also after an error or an interrupt."""


def print_basic_context(stream, context) -> None:
    """Google Benchmark's PrintBasicContext (reporter.cc), used by console and CSV.

    Date, executable, CPUs and caches, load average, --benchmark_context
    entries (sorted by key) and the CPU-scaling / ASLR warnings, written in
    one call.
    """
    lines = [context.date, f"Running {context.executable}"]
    plural = "s" if context.num_cpus > 1 else ""
    mhz = cpp_stream(context.cycles_per_second / 1e6)
    lines.append(f"Run on ({context.num_cpus} X {mhz} MHz CPU {plural})")
    if context.caches:
        lines.append("CPU Caches:")
        for cache in context.caches:
            line = f"  L{cache.level} {cache.type} {cache.size // 1024} KiB"
            if cache.num_sharing:
                line += f" (x{context.num_cpus // cache.num_sharing})"
            lines.append(line)
    if context.load_avg:
        lines.append("Load Average: " + ", ".join(f"{v:.2f}" for v in context.load_avg))
    for key, value in context.sorted_global_context():
        lines.append(f"{key}: {value}")
    if context.cpu_scaling_enabled:
        lines.append("***WARNING*** CPU scaling is enabled, the benchmark real time "
                     "measurements may be noisy and will incur extra overhead.")
    if context.aslr_enabled:
        lines.append("***WARNING*** ASLR is enabled, the results may have unreproducible "
                     "noise in them.")
    if context.library_build_type == "debug":
        lines.append("***WARNING*** Library was built as DEBUG. Timings may be affected.")
    stream.write("\n".join(lines) + "\n")
    stream.flush()
