"""``ireebench compare OLD.json NEW.json``: the subcommand, its hook and its reporters.

A built-in plugin that owns everything of the subcommand:

* :mod:`.command`: its command line (its own options; usage errors exit 2),
  imported only when ``ireebench compare`` runs (a
  :class:`~ireebench.commands.DeferredCommand`), so that the comparison
  engine costs no other command anything;
* :mod:`.run`: the run: reports read (through
  :func:`ireebench.comparison.inputs.load_reports`, so a results store's
  ``stored:...`` references work) and compared, two reports or a run against
  a history (:mod:`ireebench.comparison.history`), reporters from
  ``ireebench_compare_reporters`` (declared here, ``ireebench_addhooks``, as
  ``ireebench_compare_addoption``, the options other plugins add), the
  display and the ``--out`` file;
* :mod:`.paired`: two modules (``ireebench compare A.vmfb B.vmfb [run
  flags]``) measured in one process, interleaved round by round, and paired
  by round for :mod:`ireebench.comparison.paired`;
* :mod:`.reporters`: the ``console``, ``markdown`` and ``json`` reporters.

The statistics, the verdicts and the reading of Google Benchmark JSON are
the core's mechanism (:mod:`ireebench.comparison`), so other plugins (a
results store, a report) judge with the same engine.
"""

from __future__ import annotations

from ireebench import hookimpl, hookspec
from ireebench.commands import DeferredCommand
from ireebench.errors import EXIT_COMPARE_USAGE
from ireebench.hookspecs import named_objects, per_plugin


class CompareHooks:
    """Declared through ``ireebench_addhooks``: only ``ireebench compare`` calls it."""

    @staticmethod
    @hookspec
    @named_objects("compare reporter")
    def ireebench_compare_reporters(config):
        """Return the comparison reporters this plugin provides.

        Called once per ``ireebench compare`` run (never by a benchmark run),
        after its command line is parsed and before the two files are read. A
        name defined twice is an error naming both plugins. ``--reporter NAME``
        picks the display (stdout, default ``console``), ``--out_format NAME``
        the format of the ``--out`` file (default ``json``); the built-in
        ``compare_reporters`` plugin provides ``console``, ``markdown`` and
        ``json``.

        :param config: the compare run's :class:`Config` (``config.stdout``,
            ``config.getoption("threshold")``...). A compare run has its own
            options; the options plugins add with ``ireebench_addoption`` belong
            to benchmark runs and are not set.
        :return: a dict of reporter name to factory. A factory is called as
            ``factory(stream, config)`` and returns an object whose
            ``report(comparison)`` writes the
            :class:`ireebench.comparison.Comparison` to ``stream`` (see
            :class:`ireebench.comparison.CompareReporter`).
        """

    @staticmethod
    @hookspec
    @per_plugin
    def ireebench_compare_addoption(parser):
        """Register options of ``ireebench compare``.

        Called once per plugin while ``ireebench compare``'s command line is
        built (never for a benchmark run, whose options come from
        ``ireebench_addoption``), after the comparison's own options. For a
        plugin that resolves references for the comparison (a results
        store's ``--benchmark_storage``, ``--where``, ``--window``), read in
        its ``ireebench_load_reports`` as ``config.getoption(NAME)``. An
        option defined twice is an error naming both plugins. Implement it
        with ``@hookimpl(optionalhook=True)``: with ``-p no:compare`` nobody
        declares it.

        :param parser: an :class:`ireebench.commands.OptionParser`
            (``parser.addoption("--my_flag", help=..., group=...)``).
        """


@hookimpl
def ireebench_addhooks(pluginmanager):
    """Declares ``ireebench_compare_reporters`` and ``ireebench_compare_addoption``."""
    pluginmanager.add_hookspecs(CompareHooks)


@hookimpl
def ireebench_register_commands(cli):
    """Registers ``ireebench compare``."""
    cli.add_command(DeferredCommand("compare", "ireebench.plugins.compare.command:COMMAND",
                                    short_help="Compare two benchmark reports: verdicts, "
                                               "exit 1 on a regression.",
                                    usage_exit_code=EXIT_COMPARE_USAGE))


@hookimpl
def ireebench_compare_reporters():
    """Registers ``console``, ``markdown`` and ``json`` for ``ireebench compare``."""
    from .reporters import ConsoleCompareReporter, JSONCompareReporter, MarkdownCompareReporter
    return {"console": ConsoleCompareReporter, "markdown": MarkdownCompareReporter,
            "json": JSONCompareReporter}
