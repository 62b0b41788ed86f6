"""The hook the report declares (``ireebench_addhooks``): the sections of its page."""

from __future__ import annotations

from ireebench import hookspec
from ireebench.hookspecs import per_plugin


class ReportHooks:
    """Declared through ``ireebench_addhooks``: only a report being drawn calls it."""

    @staticmethod
    @hookspec
    @per_plugin
    def ireebench_report_sections(config, report):
        """Return the sections this plugin adds to an HTML report.

        Called once per report drawn (``ireebench report``, and a run's
        ``--benchmark_report`` when it ends), after every input is read and
        compared, before anything is drawn. The report's own sections
        (summary, comparison, trend, sweeps, benchmarks, dispatches,
        metrics, inputs) come through this hook too, from the built-in
        ``report.sections``, registered when a report is drawn. Sections are
        placed by their ``order``, the built-in ones first among equals, then
        in plugin registration order.

        A section whose ``render`` raises, and a plugin whose implementation
        raises, is that plugin's error: the section says so on the page, the
        rest of the page is drawn and written, then the command ends with the
        error naming the plugin (exit status 3).

        :param config: the :class:`Config` of the report (``ireebench
            report``'s, or the run's for ``--benchmark_report``).
        :param report: the report's data, a
            :class:`ireebench.plugins.report.model.ReportData`: ``reports``
            (every input, oldest first; ``latest``), ``comparisons`` (the
            latest against the reports before it, as ``ireebench compare``
            judges it: :class:`ireebench.comparison.Comparison` objects),
            ``trends`` (each benchmark over a history, with its change
            points), ``findings`` (what changed), ``headline`` (the gate's
            verdict in one line), ``units``.
        :return: a :class:`ireebench.plugins.report.sections.ReportSection`
            (``title``, ``render(report, out)``, ``order``, ``anchor``), a
            list of them, or ``None`` (nothing to add for this report).
        """
