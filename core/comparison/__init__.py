"""``ireebench compare OLD.json NEW.json``: the mechanism (statistics, reading, verdicts).

* :mod:`.utest`: the Mann-Whitney U test, the ratio's interval, the geometric mean;
* :mod:`.inputs`: Google Benchmark JSON files (ireebench's or the native tool's);
* :mod:`.model`: thresholds, verdicts, :class:`Comparison`;
* :mod:`.reporter`: the :class:`CompareReporter` interface.

The subcommand, its run and its console, Markdown and JSON reporters are
the built-in plugin ``compare`` (:mod:`ireebench.plugins.compare`); other
plugins judge with this same engine.
"""

from .inputs import (
    BenchmarkFile,
    BenchmarkRows,
    ReportHistory,
    benchmark_file,
    load_benchmark_file,
    load_reports,
    read_benchmark_file,
)
from .machine import row_context
from .model import (
    COMPARE_OPTIONS,
    EXIT_NO_REGRESSION,
    EXIT_REGRESSION,
    FASTER,
    INCONCLUSIVE,
    MIN_REPETITIONS,
    NO_CHANGE,
    NOT_COMPARED,
    SLOWER,
    VERDICTS,
    BenchmarkComparison,
    CompareOptions,
    Comparison,
    Threshold,
    compare,
    parse_threshold,
)
from .reporter import CompareReporter
from .utest import RatioInterval, UTestResult, geometric_mean, mann_whitney_u, ratio_interval

__all__ = [
    "COMPARE_OPTIONS",
    "EXIT_NO_REGRESSION",
    "EXIT_REGRESSION",
    "FASTER",
    "INCONCLUSIVE",
    "MIN_REPETITIONS",
    "NOT_COMPARED",
    "NO_CHANGE",
    "SLOWER",
    "VERDICTS",
    "BenchmarkComparison",
    "BenchmarkFile",
    "BenchmarkRows",
    "CompareOptions",
    "CompareReporter",
    "Comparison",
    "RatioInterval",
    "ReportHistory",
    "Threshold",
    "UTestResult",
    "benchmark_file",
    "compare",
    "geometric_mean",
    "load_benchmark_file",
    "load_reports",
    "mann_whitney_u",
    "parse_threshold",
    "ratio_interval",
    "read_benchmark_file",
    "row_context",
]
