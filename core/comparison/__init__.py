"""``ireebench compare OLD.json NEW.json``: the mechanism (statistics, reading, verdicts).

* :mod:`.utest`: the Mann-Whitney U test, the ratio's interval, the geometric mean;
* :mod:`.inputs`: Google Benchmark JSON files (ireebench's or the native tool's);
* :mod:`.model`: thresholds, verdicts, :class:`Comparison`, one benchmark compared;
* :mod:`.judgement`: a whole comparison judged (:func:`compare`): the metric
  of each benchmark, the correction over the suite, the detectable change
  and ``cannot judge``, disturbed runs;
* :mod:`.disturbance`: what a report says of its machine (load, busy
  processes, multimodal repetitions, CPU share);
* :mod:`.history`: a run against its stored history (the gate);
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
from .judgement import compare
from .machine import row_context
from .model import (
    CANNOT_JUDGE,
    COMPARE_OPTIONS,
    EXIT_CANNOT_JUDGE,
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
    parse_threshold,
)
from .reporter import CompareReporter
from .utest import (
    RatioInterval,
    UTestResult,
    adjusted_pvalues,
    geometric_mean,
    mann_whitney_u,
    ratio_interval,
)

__all__ = [
    "CANNOT_JUDGE",
    "COMPARE_OPTIONS",
    "EXIT_CANNOT_JUDGE",
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
    "adjusted_pvalues",
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
