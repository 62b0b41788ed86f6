"""Hook specifications of ireebench, grouped by phase in call order.

Every hook is prefixed ``ireebench_``; plugins implement them with
``@ireebench.hookimpl``. Built-in plugins (``ireebench.plugins.*``) go
through exactly the same plugin manager as third-party plugins.

Every hook called during a run receives ``config`` (the run's
:class:`ireebench.config.Config`); pluggy passes an implementation only the
arguments it names, so ``def ireebench_benchmark_result(run)`` works too.
Per-run state belongs in ``config.stash`` (see :mod:`ireebench.stash`).

Which backend calls what: the in-process backend (``--backend=runtime``,
the default) calls every hook below. ``--backend=native`` and ``ireebench
replay`` run a native tool that discovers and measures by itself: they call
the initialization and reporting hooks, ``ireebench_replay_capture`` (native
backend) and ``ireebench_sessionfinish`` (with ``session=None``), not the
session, discovery or measurement hooks.

``ireebench compare OLD.json NEW.json`` is a run of another kind: it
measures nothing and calls only the hooks of the last phase, "Compare"
(:data:`COMPARE_HOOKS`); a benchmark run never calls those.

A hook implementation that raises stops the run with one line naming its
plugin (``ireebench: plugin error: ...``, exit status 3); raise
:class:`ireebench.UsageError` instead for a mistake the user can fix (exit
status 1; 2 in ``ireebench compare``). Wrappers (``@hookimpl(wrapper=True)``)
work on every hook except the six that collect named objects from each
plugin separately (``addoption``, ``statistics``, ``backends``,
``reporters``, ``invocation_kinds``, ``compare_reporters``): a wrapper there
is refused when the plugin is registered.
"""

import pluggy

hookspec = pluggy.HookspecMarker("ireebench")
hookimpl = pluggy.HookimplMarker("ireebench")

# Hooks whose implementations are called one plugin at a time (to name the
# plugin behind each option or object), so a wrapper could not wrap them.
PER_PLUGIN_HOOKS = (
    "ireebench_addoption",
    "ireebench_backends",
    "ireebench_reporters",
    "ireebench_invocation_kinds",
    "ireebench_statistics",
    "ireebench_compare_reporters",
)

# Hooks of `ireebench compare` only (the "Compare" phase, last below): a
# benchmark run never calls them, and `ireebench compare` calls no other.
COMPARE_HOOKS = ("ireebench_compare_reporters",)


# -------------------------------------------------------------------------
# Initialization: the command line is built and parsed.
# -------------------------------------------------------------------------


@hookspec
def ireebench_addoption(parser):
    """Register command-line options.

    Called once per plugin while the CLI is built, before any argument is
    parsed, for built-in plugins, entry-point plugins and ``--plugin``
    modules alike. An option name or flag already defined (by the core or
    by another plugin) is an error naming both plugins.

    :param parser: an :class:`ireebench.cli.options.OptionParser`; call
        ``parser.addoption("--my_flag", help=..., group="My plugin", ...)``.
        Keyword arguments are those of :class:`click.Option`. The value is
        available later as ``config.getoption("my_flag")``.
    """


@hookspec
def ireebench_configure(config):
    """Validate options, reject conflicts and set up per-run state.

    Called once after the command line is parsed and before anything runs.
    Raise :class:`ireebench.UsageError` to stop the run with a one-line
    message; keep per-run objects in ``config.stash``.

    :param config: the :class:`ireebench.config.Config` of this run.
    """


@hookspec
def ireebench_statistics(config):
    """Return the statistics this plugin provides, selectable by name.

    Called once per run by the built-in ``statistics`` plugin while it
    configures (its ``ireebench_configure`` runs last), when
    ``--benchmark_statistics`` or ``--benchmark_min_rel_accuracy`` is
    given. ``--benchmark_statistics=NAME,...`` selects statistics by these
    names; each selected one adds an aggregate row ``<run_name>_<name>``
    per benchmark after Google Benchmark's ``_mean``, ``_median``,
    ``_stddev`` and ``_cv`` (the shape of Google Benchmark's custom
    statistics, so compare.py and dashboards read them). The built-in
    names (``min``, ``max``, ``ci``, ``outliers``, ``precision``; ``pNN``
    percentiles) come through this hook too. A name defined twice is an
    error naming both plugins.

    :param config: the run's :class:`Config` (``config.getoption("confidence")``
        is the confidence level of the built-in interval).
    :return: a dict of name to an :class:`ireebench.Statistic` (``name``,
        ``compute(values) -> float | None``, ``unit`` ``"time"`` or
        ``"percentage"``), or to a list of them (one name selecting several
        rows, like ``ci``); or a list of ``Statistic`` (named by their
        ``name``); or ``None``.
    """


# -------------------------------------------------------------------------
# Run setup: the backend and the reporters are chosen.
# -------------------------------------------------------------------------


@hookspec
def ireebench_backends(config):
    """Return the measurement backends this plugin provides.

    Called once per run; ``--backend NAME`` picks one (default ``runtime``,
    the in-process IREE runtime). A name defined twice is an error naming
    both plugins.

    :param config: the run's :class:`Config`, or ``None`` when the names
        are only listed (``--help``, ``ireebench plugins``).
    :return: a dict of backend name to a callable
        ``backend(config, hub) -> int`` that measures, reports through
        ``hub`` (an :class:`ireebench.reporting.hub.ReportHub`) and returns
        an exit code. With ``--benchmark_list_tests`` it is called with
        ``hub=None`` and prints the benchmark names to ``config.stdout``.
        The core opens and closes the run around it: the reports, the
        runtime flags, ``ireebench_sessionfinish`` with the real exit
        status, ``config.add_cleanup`` callbacks, the scratch directory.
    """


@hookspec
def ireebench_reporters(config):
    """Return the reporters this plugin provides.

    Called once per run when the display and file reporters are built. A
    name defined twice is an error naming both plugins.

    :param config: the run's :class:`Config`, or ``None`` when the names
        are only listed (``--help``, ``ireebench plugins``).
    :return: a dict of reporter name to factory. A factory is called as
        ``factory(stream, config, err_stream)`` and returns an object with
        ``report_context(context)``, ``report_runs(runs)`` and
        ``finalize()`` (see :class:`ireebench.reporting.Reporter`).
    """


# -------------------------------------------------------------------------
# Session: the modules are resolved, then the in-process runtime session opens.
# -------------------------------------------------------------------------


@hookspec(firstresult=True)
def ireebench_resolve_module(config, spec):
    """Turn a ``--module`` value into the path of a .vmfb file.

    Called once per ``--module`` value when the run's modules are first
    needed (before the session opens, and by the native backends), before
    ireebench makes its private copy. The first non-``None`` result wins;
    ``None`` everywhere means the value is a .vmfb path (or ``-``) as it is.
    The built-in ``mlir_modules`` plugin compiles ``*.mlir`` here.

    :param config: the run's :class:`Config`.
    :param spec: the ``--module`` value, as given.
    :return: the path of a .vmfb file to benchmark instead, or ``None``.
    """


@hookspec
def ireebench_sessionstart(config, session):
    """Called once the VM instance, devices, modules and context are open.

    :param config: the run's :class:`Config`.
    :param session: the :class:`ireebench.session.Session`.
    """


# -------------------------------------------------------------------------
# Discovery: exported functions become workloads.
# -------------------------------------------------------------------------


@hookspec
def ireebench_invocation_kinds(config):
    """Return the invocation kinds this plugin provides.

    Called once per run when workloads are discovered. A kind name defined
    twice is an error naming both plugins.

    :param config: the run's :class:`Config`, or ``None`` when the kinds
        are only listed (``ireebench plugins``).
    :return: a list of :class:`ireebench.InvocationKind` objects.
    """


@hookspec(firstresult=True)
def ireebench_classify_function(config, function, kinds):
    """Return the name of the invocation kind of an exported VM function.

    Called once per exported function of the benchmarked module. The first
    non-``None`` result wins; the built-in classification (``sync``,
    ``async``, ``dispatch``) runs last (``trylast``).

    :param config: the run's :class:`Config`.
    :param function: an :class:`ireebench.FunctionInfo` (name, reflection
        attributes, calling convention, argument count).
    :param kinds: dict of kind name to :class:`InvocationKind`.
    :return: a kind name, or ``None`` to let another plugin decide.
    """


@hookspec(firstresult=True)
def ireebench_select_function(config, function, kind, selected):
    """Decide whether a function is benchmarked.

    Called once per exported function after classification. The first
    non-``None`` result wins; the built-in rules (the native tool's) run
    last.

    :param config: the run's :class:`Config`.
    :param function: the :class:`ireebench.FunctionInfo`.
    :param kind: the :class:`InvocationKind` it was classified as.
    :param selected: ``True`` when the user named it with ``--function``.
    :return: ``True`` to benchmark it, ``False`` to skip it, ``None`` to
        defer.
    """


@hookspec
def ireebench_discovery_finish(config, session, workloads):
    """Check or prepare the discovered workloads before anything is measured.

    Called once after discovery (inputs parsed, checked and uploaded), also
    with ``--benchmark_list_tests``. Raise :class:`UsageError` to refuse the
    run before the first measurement (output processing checks its flags
    against the function's results here; dispatch statistics probe the
    profiling session).

    :param config: the run's :class:`Config`.
    :param session: the :class:`Session`.
    :param workloads: the list of :class:`ireebench.Workload` to measure,
        in order (may be empty).
    """


# -------------------------------------------------------------------------
# Profiling sinks: asked for once discovery finishes.
# -------------------------------------------------------------------------


@hookspec
def ireebench_profiling_sinks(config):
    """Return profiling sinks that receive the rows of profiling passes.

    Called once per run, when discovery finishes (so that a workload a
    profiling pass could not rerun is refused before anything is measured).
    Several sinks can be active at once; a profiling pass runs for each
    measured workload only when at least one sink is returned.

    :param config: the run's :class:`Config`.
    :return: a list of :class:`ireebench.ProfilingSink` (``begin_pass``,
        ``receive_rows``, ``end_pass``, ``close``, ``modes``), or ``None``.
    """


# -------------------------------------------------------------------------
# Reporting starts: the context goes out before the first row.
# -------------------------------------------------------------------------


@hookspec
def ireebench_report_context(config, context):
    """Add entries to the report context before it is reported.

    Called once per run, before the first report. Mutate ``context.extra``
    (an ordered dict of string to JSON value) to add provenance; the JSON
    reporter writes them after Google Benchmark's own fields. The built-in
    ``provenance`` implementation runs first (``tryfirst``), so every
    implementation without ``tryfirst`` already sees its keys.

    :param config: the run's :class:`Config`.
    :param context: the :class:`ireebench.context.Context`.
    """


# -------------------------------------------------------------------------
# Measurement: for each workload, in order.
# -------------------------------------------------------------------------


@hookspec
def ireebench_workload_start(config, session, workload):
    """A workload is about to be measured (before warm-up and calibration).

    :param config: the run's :class:`Config`.
    :param session: the :class:`Session`.
    :param workload: the :class:`Workload`.
    """


@hookspec(firstresult=True)
def ireebench_measure_repetition(config, workload, repetition):
    """Measure one repetition of a workload and return its :class:`Run`.

    Called once per repetition, after warm-up and iteration calibration
    (both happen before the first call, outside every call). The first
    non-``None`` result wins; the built-in implementation (``trylast``)
    times ``repetition.iterations`` logical iterations of the kind's
    ``execute`` and returns the repetition's row (an error row when the
    function fails).

    Wrap it (``@hookimpl(wrapper=True)``: start before ``yield``, stop
    after it) to bracket exactly the measured iterations of each
    repetition, for example to start and stop an in-process profiler
    (VTune/ITT, Tracy, perf's control fd, NVTX). A wrapper costs nothing
    inside the timed loop: it runs once before and once after it, and the
    reported time is taken inside the built-in implementation. For kinds
    whose batches are prepared anew (``reusable_batch = False``, e.g.
    async), the bracket also holds the untimed per-batch ``prepare``.

    :param config: the run's :class:`Config`.
    :param workload: the :class:`Workload`.
    :param repetition: an :class:`ireebench.measure.Repetition` (``index``,
        ``repetitions``, ``iterations``, the prepared ``batch``, the
        ``session``, and ``retry``: as Google Benchmark does, a first
        repetition that falls short of a time ``--benchmark_min_time`` is
        measured again with more iterations, and this call has ``retry``
        1, 2 ...; the last call of an index is the reported one).
    :return: an :class:`ireebench.Run`, or ``None`` to let another plugin
        measure.
    """


@hookspec(firstresult=True)
def ireebench_continue_repetitions(config, workload, runs):
    """Decide whether a workload measures another repetition.

    Called after each successful repetition (not after a failed one, not
    with ``--benchmark_dry_run``), before the next one is prepared. The
    first non-``None`` result wins; the built-in rule (``trylast``) asks
    for ``--benchmark_repetitions`` repetitions. The ``statistics`` plugin
    implements adaptive stopping here (``--benchmark_min_rel_accuracy``).
    When the final count differs from ``--benchmark_repetitions``, the core
    sets every row's ``repetitions`` to it before the aggregates are
    computed (``repetition.repetitions`` in ``ireebench_measure_repetition``
    stays ``--benchmark_repetitions``).

    :param config: the run's :class:`Config`.
    :param workload: the :class:`Workload`.
    :param runs: its repetitions so far (a copy), in order; ``run.samples``
        holds each one's real seconds per iteration.
    :return: ``True`` to measure another repetition, ``False`` to stop,
        ``None`` to let another plugin decide.
    """


@hookspec
def ireebench_workload_finish(config, session, workload, runs):
    """A workload's repetitions and aggregates are measured, not yet reported.

    Called once per workload, also when it failed. Work that follows a
    measurement belongs here: the untimed profiling pass
    (``profiling_pass``), the host copy of the last outputs
    (``output_processing``; ``workload.last_batch`` is the batch of the
    last measured iteration until this hook returns).

    :param config: the run's :class:`Config`.
    :param session: the :class:`Session`.
    :param workload: the :class:`Workload`.
    :param runs: its rows: repetitions (errors included) and aggregates.
    """


# -------------------------------------------------------------------------
# Profiling pass: run by the profiling engine from ireebench_workload_finish
# when at least one profiling sink is active.
# -------------------------------------------------------------------------


@hookspec(firstresult=True)
def ireebench_profiling_pass(config, workload, runs, profile_pass):
    """Run the untimed profiling pass of one workload.

    Called once per measured workload when at least one profiling sink is
    active (for example ``--dispatch_statistics``), after its runs are
    measured and before they are reported. The first non-``None`` result
    wins; the built-in implementation (``trylast``) runs the native
    ``iree-benchmark-module`` with ``--device_profiling_mode`` and
    ``--device_profiling_output=profile_pass.bundle_path`` and reads the
    bundle with ``iree-profile statistics``.

    Plugins that only want to observe or instrument the pass implement it
    as a wrapper (``@hookimpl(wrapper=True)``: begin before ``yield``, end
    after it), for example to start and stop an external profiler; before
    yielding they may add variables to ``profile_pass.env`` or a command
    to ``profile_pass.command_prefix`` for the profiled native process.

    :param config: the run's :class:`Config`.
    :param workload: the measured :class:`Workload`.
    :param runs: its measured runs.
    :param profile_pass: the :class:`ireebench.profiling.ProfilePass` (mode,
        iterations, repetitions, bundle path, env, command prefix).
    :return: a :class:`ireebench.profiling.ProfileResult`, or ``None``.
    """


@hookspec
def ireebench_profile_rows(config, workload, rows, bundle_path):
    """Receive the statistics rows of one profiling pass.

    Called once per successfully profiled workload, after the pass ends and
    after the sinks received the rows: the hook form of a sink.

    :param config: the run's :class:`Config`.
    :param workload: the profiled :class:`Workload`.
    :param rows: a list of :class:`ireebench.profiling.StatisticsRow`.
    :param bundle_path: path of the raw ``.ireeprof`` bundle of the pass;
        valid only during the call (copy it to keep it).
    """


# -------------------------------------------------------------------------
# Reporting: for each workload, right after ireebench_workload_finish.
# -------------------------------------------------------------------------


@hookspec
def ireebench_report_extra_rows(config, workload, runs):
    """Return rows to append under a benchmark's runs.

    Called once per workload after ``ireebench_workload_finish`` and before
    its rows are reported. The rows are reported by every reporter right
    after the benchmark's own rows (dispatch statistics add theirs here).

    :param config: the run's :class:`Config`.
    :param workload: the :class:`Workload`.
    :param runs: the list of :class:`ireebench.Run` of that workload.
    :return: a list of extra :class:`Run` objects, or ``None``.
    """


@hookspec
def ireebench_benchmark_result(config, run):
    """Receive every run as soon as it is finished (streaming).

    Called for each repetition, aggregate and extra row, failed runs
    included (``run.error_occurred``), before reporters see them.

    :param config: the run's :class:`Config`.
    :param run: the :class:`ireebench.Run`.
    """


# -------------------------------------------------------------------------
# After all workloads: every one is measured and reported.
# -------------------------------------------------------------------------


@hookspec
def ireebench_measurements_finish(config, workloads):
    """Every workload is measured and reported: run the follow-up work.

    Called once by the in-process and native backends, after the reports
    are finalized (so what this prints comes after them, as the native
    tool prints its outputs after its report). The built-in plugins run
    their native device-profiling pass, the replay capture and output
    processing here.

    :param config: the run's :class:`Config`.
    :param workloads: the benchmarked :class:`Workload` list.
    :return: an exit code (the run exits with the highest one), or ``None``.
    """


@hookspec(firstresult=True)
def ireebench_replay_capture(config, workloads):
    """Capture the HAL work of the workloads into a replay file.

    Called once by the ``replay_capture`` plugin after measurement when
    ``--device_replay_output`` is set. The first non-``None`` result wins;
    the built-in implementation (a native ``iree-benchmark-module`` pass)
    runs last.

    :param config: the run's :class:`Config`.
    :param workloads: the list of :class:`Workload` that were benchmarked.
    :return: the path of the written capture, or ``None``.
    """


# -------------------------------------------------------------------------
# End: the run is over.
# -------------------------------------------------------------------------


@hookspec
def ireebench_sessionfinish(config, session, exitstatus):
    """Called at the very end of every run, after the reports are complete.

    Called by the core for every backend, also after an error or an
    interrupt, before ``config.add_cleanup`` callbacks run (the session is
    still open).

    :param config: the run's :class:`Config`.
    :param session: the in-process :class:`Session`, or ``None`` (not
        opened, or a backend without one: ``--backend=native``,
        ``ireebench replay``, a third party's).
    :param exitstatus: the exit code the run is about to return (1 after a
        user error or a failed benchmark, 3 after a plugin error, 130/143
        after SIGINT/SIGTERM).
    """


# -------------------------------------------------------------------------
# Compare: `ireebench compare OLD.json NEW.json`, a run of its own.
# -------------------------------------------------------------------------


@hookspec
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
