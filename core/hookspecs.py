"""Hook specifications of ireebench.

Every hook is prefixed ``ireebench_``. Plugins implement them with
``@ireebench.hookimpl``. Built-in plugins (``ireebench.plugins.*``) implement
them through exactly the same plugin manager as third-party plugins.

Order of calls in one run::

    ireebench_addoption            while the CLI is built
    ireebench_configure            after the flags are parsed
    ireebench_backends             when the backend is chosen (--backend)
    ireebench_reporters            when the reporters are built
    ireebench_sessionstart         once the runtime session is open
    ireebench_invocation_kinds     when workloads are discovered
    ireebench_classify_function    per exported function
    ireebench_select_function      per exported function
    ireebench_report_context       before the first report
    ireebench_profiling_sinks      before the first profiling pass
    ireebench_profiling_pass       the untimed profiling pass of a workload
    ireebench_profile_rows         with the rows of each profiling pass
    ireebench_report_extra_rows    after a benchmark's runs are measured
    ireebench_benchmark_result     for every run, as it finishes
    ireebench_replay_capture       when --device_replay_output is set
    ireebench_process_outputs      after all measurements
    ireebench_sessionfinish        at the end, also after a failure

The in-process backend calls the session hooks; ``--backend=native`` and
``ireebench replay`` have no in-process session (see their docs).
"""

import pluggy

hookspec = pluggy.HookspecMarker("ireebench")


@hookspec
def ireebench_addoption(parser):
    """Register command-line options.

    Called once while the CLI is built, before any argument is parsed, for
    built-in plugins, entry-point plugins and ``--plugin`` modules alike.

    :param parser: an :class:`ireebench.cli.OptionParser`; call
        ``parser.addoption("--my_flag", help=..., group="My plugin", ...)``.
        Keyword arguments are those of :class:`click.Option`. The value is
        available later as ``config.getoption("my_flag")``.
    """


@hookspec
def ireebench_configure(config):
    """Validate options and reject conflicts, before anything runs.

    Called once after the command line is parsed and before the runtime
    session is opened. Raise :class:`ireebench.UsageError` to stop the run
    with a one-line message.

    :param config: the :class:`ireebench.config.Config` of this run.
    """


@hookspec
def ireebench_sessionstart(session):
    """Called once the VM instance, devices, modules and context are open.

    :param session: the :class:`ireebench.session.Session`.
    """


@hookspec
def ireebench_sessionfinish(session, exitstatus):
    """Called at the very end of a run, also after an error or an interrupt.

    :param session: the :class:`ireebench.session.Session`, or ``None`` if it
        could not be opened (and always with ``--backend=native`` and
        ``ireebench replay``, which have no in-process session).
    :param exitstatus: the exit code the run is about to return (1 after a
        user error, 130/143 after SIGINT/SIGTERM).
    """


@hookspec
def ireebench_invocation_kinds():
    """Return the invocation kinds this plugin provides.

    Called once per run when workloads are discovered. All results are
    collected; a kind name defined twice is an error naming both plugins.

    :return: a list of :class:`ireebench.kinds.InvocationKind` objects.
    """


@hookspec(firstresult=True)
def ireebench_classify_function(function, kinds):
    """Return the name of the invocation kind of an exported VM function.

    Called once per exported function of the benchmarked module. The first
    non-``None`` result wins; built-in classification (``sync``, ``async``,
    ``dispatch``) runs last (``trylast``).

    :param function: an :class:`ireebench.workload.FunctionInfo` (name,
        reflection attributes, calling convention, argument count).
    :param kinds: dict of kind name to :class:`InvocationKind`.
    :return: a kind name, or ``None`` to let another plugin decide.
    """


@hookspec(firstresult=True)
def ireebench_select_function(function, kind, selected):
    """Decide whether a function is benchmarked.

    Called once per exported function after classification. The first
    non-``None`` result wins.

    :param function: the :class:`ireebench.workload.FunctionInfo`.
    :param kind: the :class:`InvocationKind` it was classified as.
    :param selected: ``True`` when the user named it with ``--function``.
    :return: ``True`` to benchmark it, ``False`` to skip it, ``None`` to
        defer.
    """


@hookspec
def ireebench_reporters():
    """Return the reporters this plugin provides.

    Called once per run when the display and file reporters are built.

    :return: a dict of reporter name to factory. A factory is called as
        ``factory(stream, config, err_stream)`` and returns an object with
        ``report_context(context)``, ``report_runs(runs)`` and
        ``finalize()`` (see :class:`ireebench.reporting.Reporter`).
    """


@hookspec
def ireebench_report_context(config, context):
    """Add entries to the report context before it is reported.

    Called once per run, before the first report. Mutate ``context.extra``
    (an ordered dict of string to JSON value) to add provenance; the JSON
    reporter writes them after Google Benchmark's own fields.

    :param config: the run's :class:`Config`.
    :param context: the :class:`ireebench.context.Context`.
    """


@hookspec
def ireebench_report_extra_rows(workload, runs):
    """Return rows to append under a benchmark's runs.

    Called once per workload after its repetitions (and aggregates) are
    measured and before they are reported. The rows are reported by every
    reporter right after the benchmark's own rows.

    :param workload: the :class:`ireebench.workload.Workload`.
    :param runs: the list of :class:`ireebench.results.Run` of that workload.
    :return: a list of extra :class:`Run` objects, or ``None``.
    """


@hookspec
def ireebench_benchmark_result(run):
    """Receive every run as soon as it is finished (streaming).

    Called for each repetition, aggregate and extra row, failed runs
    included (``run.error_occurred``), before reporters see them.

    :param run: the :class:`ireebench.results.Run`.
    """


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
def ireebench_profiling_sinks(config):
    """Return profiling sinks that receive the rows of profiling passes.

    Called once per run, before the first profiling pass. Several sinks can
    be active at once; a profiling pass runs only when at least one sink is
    returned.

    :param config: the run's :class:`Config`.
    :return: a list of sinks (see :class:`ireebench.profiling.ProfilingSink`:
        ``begin_pass``, ``receive_rows``, ``end_pass``, ``close``, ``modes``),
        or ``None``.
    """


@hookspec
def ireebench_profile_rows(workload, rows, bundle_path):
    """Receive the statistics rows of one profiling pass.

    Called once per successfully profiled workload, after the pass ends and
    after the sinks received the rows: the hook form of a sink.

    :param workload: the profiled :class:`Workload`.
    :param rows: a list of :class:`ireebench.profiling.StatisticsRow`.
    :param bundle_path: path of the raw ``.ireeprof`` bundle of the pass;
        valid only during the call (copy it to keep it).
    """


@hookspec(firstresult=True)
def ireebench_replay_capture(config, workloads):
    """Capture the HAL work of the workloads into a replay file.

    Called once after measurement when ``--device_replay_output`` is set.
    The first non-``None`` result wins.

    :param config: the run's :class:`Config`.
    :param workloads: the list of :class:`Workload` that were benchmarked.
    :return: the path of the written capture, or ``None``.
    """


@hookspec
def ireebench_backends():
    """Return the measurement backends this plugin provides.

    Called once per run; ``--backend NAME`` picks one (default
    ``runtime``, the in-process IREE runtime).

    :return: a dict of backend name to a callable
        ``backend(config, hub) -> int`` that measures and reports through
        ``hub`` (an :class:`ireebench.reporting.ReportHub`) and returns an
        exit code. With ``--benchmark_list_tests`` the backend is called with
        ``hub=None`` and prints the benchmark names instead.
    """


@hookspec
def ireebench_process_outputs(config, session, workloads):
    """Process the outputs of the last measured invocation of each workload.

    Called once after all measurements, before the session closes.

    :param config: the run's :class:`Config`.
    :param session: the :class:`Session`.
    :param workloads: the benchmarked :class:`Workload` list.
    :return: an exit code (``0`` or ``1``), or ``None``.
    """
