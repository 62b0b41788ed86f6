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
* :mod:`.paired`: two modules measured round by round, judged on the rounds'
  ratios (the Wilcoxon signed-rank test, the Hodges-Lehmann change);
* :mod:`.reporter`: the :class:`CompareReporter` interface;
* :mod:`.verdicts`: the verdicts' names and exit statuses;
* :mod:`.changes`: change points of a series of runs (``ireebench history``);
* :mod:`.pairs`: the sorted pairwise differences of large samples (numpy).

The subcommand, its run and its console, Markdown and JSON reporters are
the built-in plugin ``compare`` (:mod:`ireebench.plugins.compare`); other
plugins judge with this same engine.
"""

from .._public import lazy_names

# Each public name -> the module of this package that defines it, imported
# when the name is first read (PEP 562): importing a submodule
# (``ireebench.comparison.inputs``) or the package loads no more than that.
NAMES = {
    "BenchmarkFile": ".inputs",
    "BenchmarkRows": ".inputs",
    "ReportHistory": ".inputs",
    "benchmark_file": ".inputs",
    "load_benchmark_file": ".inputs",
    "load_reports": ".inputs",
    "read_benchmark_file": ".inputs",
    "compare": ".judgement",
    "row_context": ".machine",
    "COMPARE_OPTIONS": ".model",
    "MIN_REPETITIONS": ".model",
    "BenchmarkComparison": ".model",
    "CompareOptions": ".model",
    "Comparison": ".model",
    "Threshold": ".model",
    "compare_options": ".model",
    "parse_threshold": ".model",
    "CANNOT_JUDGE": ".verdicts",
    "EXIT_CANNOT_JUDGE": ".verdicts",
    "EXIT_NO_REGRESSION": ".verdicts",
    "EXIT_REGRESSION": ".verdicts",
    "FASTER": ".verdicts",
    "INCONCLUSIVE": ".verdicts",
    "NO_CHANGE": ".verdicts",
    "NOT_COMPARED": ".verdicts",
    "SLOWER": ".verdicts",
    "VERDICTS": ".verdicts",
    "CompareReporter": ".reporter",
    "RatioInterval": ".utest",
    "UTestResult": ".utest",
    "adjusted_pvalues": ".utest",
    "geometric_mean": ".utest",
    "mann_whitney_u": ".utest",
    "ratio_interval": ".utest",
}
__getattr__, __dir__ = lazy_names(__name__, NAMES)

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
    "compare_options",
    "geometric_mean",
    "load_benchmark_file",
    "load_reports",
    "mann_whitney_u",
    "parse_threshold",
    "ratio_interval",
    "read_benchmark_file",
    "row_context",
]
