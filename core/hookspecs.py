"""Hook specifications of ireebench's core: the phases of a run, in call order.

Every hook is prefixed ``ireebench_``; plugins implement them with
``@ireebench.hookimpl``. Built-in plugins (``ireebench.plugins.*``) go
through exactly the same plugin manager as third-party plugins.

Every hook called during a run receives ``config`` (the run's
:class:`ireebench.config.Config`); pluggy passes an implementation only the
arguments it names, so ``def ireebench_benchmark_result(run)`` works too.
Per-run state belongs in ``config.stash`` (see :mod:`ireebench.stash`).

This module holds the hooks the core calls, in the order a run calls them
(``tests/core/test_hook_protocol.py`` checks both): the run's phases are
called by :mod:`ireebench.protocol`, which a backend calls rather than
calling those hooks itself. A hook that only one plugin calls is declared
by that plugin, through ``ireebench_addhooks`` (as pytest's
``pytest_addhooks``) with the :data:`hookspec` marker: the built-in
``statistics`` plugin declares ``ireebench_statistics``,
``profiling_pass`` declares ``ireebench_profiling_sinks`` and
``ireebench_profiling_pass``, ``replay_capture`` declares
``ireebench_replay_capture``, ``compare`` declares
``ireebench_compare_reporters``; third parties declare theirs the same way.
An implementation of a hook nobody declared is refused by name (a
misspelling), unless it is marked ``optionalhook=True`` (for a hook of a
plugin that may be absent).

Which backend calls what: a backend with the ``in_process`` capability
(``--backend=runtime``, the default:
:func:`ireebench.protocol.run_in_process`) calls every hook below. Others
(``--backend=native``, ``ireebench replay``, a third party's) call the
initialization and reporting hooks, ``ireebench_measurements_finish`` where
they say so and ``ireebench_sessionfinish`` (with ``session=None``), not the
session, discovery or measurement hooks.

A hook implementation that raises stops the run with one line naming its
plugin (``ireebench: plugin error: ...``, exit status 3); raise
:class:`ireebench.UsageError` instead for a mistake the user can fix (exit
status 1). Wrappers (``@hookimpl(wrapper=True)``) work on every hook except
those marked :func:`per_plugin`, which ireebench calls one plugin at a time
(to name the plugin behind each option, command or object): a wrapper there
is refused when the plugins are loaded.
"""

import pluggy

hookspec = pluggy.HookspecMarker("ireebench")
hookimpl = pluggy.HookimplMarker("ireebench")

# Public (ireebench._public): the markers, the spec decorators a plugin that
# declares hooks may use, and every hook below by its name and arguments.
__all__ = ["hookimpl", "hookspec", "named_objects", "per_plugin"]

PER_PLUGIN_ATTR = "ireebench_per_plugin"
NAMED_OBJECTS_ATTR = "ireebench_named_objects"


def per_plugin(function):
    """Marks a hook spec whose implementations ireebench calls one plugin at a time.

    So that what each returns or adds is attributed to its plugin (two
    plugins defining one name are named both); a wrapper could not wrap
    such calls, so it is refused.
    """
    setattr(function, PER_PLUGIN_ATTR, True)
    return function


def named_objects(what: str):
    """Marks a per-plugin hook spec that returns named objects (a dict, or a list of
    objects with ``.name``); ``what`` names them in errors and listings
    (``"reporter"``: "reporter 'md' is defined by two plugins: 'a' and 'b'")."""

    def mark(function):
        setattr(function, NAMED_OBJECTS_ATTR, what)
        return per_plugin(function)

    return mark


def is_per_plugin(function) -> bool:
    return bool(getattr(function, PER_PLUGIN_ATTR, False))


def named_objects_of(function) -> str | None:
    return getattr(function, NAMED_OBJECTS_ATTR, None)


# -------------------------------------------------------------------------
# Initialization: plugins are registered, the command line is built and parsed,
# the backend and the executor are chosen.
# -------------------------------------------------------------------------


@hookspec(historic=True)
def ireebench_addhooks(pluginmanager):
    """Declare new hooks, which other plugins then implement.

    Called for each plugin as it is registered (historic, as pytest's
    ``pytest_addhooks``: a plugin registered later still gets the call).
    Call ``pluginmanager.add_hookspecs(holder)`` with a module or class
    whose functions are marked with :data:`ireebench.hookspec`; name them
    ``ireebench_<yourplugin>_<event>`` so that implementations are
    recognised by their name (and a misspelled one is refused). Call the
    hook where your plugin needs it: ``config.pm.hook.NAME(config=config,
    ...)``, or :func:`ireebench.call_hook` to have a failure blamed on the
    implementing plugin. ``ireebench plugins`` lists who declared
    each hook.

    :param pluginmanager: the run's :class:`ireebench._pluginmanager.PluginManager`.
    """


@hookspec
@per_plugin
def ireebench_register_commands(cli):
    """Add subcommands: ``ireebench NAME ...``.

    Called once per plugin once the plugins are loaded, before any command
    line is parsed (one plugin at a time, as simonw/llm's and datasette's
    ``register_commands``). ``cli`` is
    the click group of ``ireebench``: decorate a function with
    ``@cli.command()`` (click's options and arguments as usual) or call
    ``cli.add_command(command)``. The command's callback receives the
    invocation with ``@click.pass_obj`` (an :class:`ireebench.Invocation`:
    ``stdout``, ``stderr``, ``pm``, ``plugins``) and returns ``None`` (exit
    0), an exit code, or an :class:`ireebench.RunResult`. ``ireebench``
    without a subcommand stays the native-compatible benchmark run; a
    subcommand name two plugins define is an error naming both; ``--help``
    and ``ireebench plugins`` list each subcommand with its plugin. The
    built-ins register ``replay`` (``replay_backend``), ``compare``
    (``compare``) and ``plugins`` (``introspection``).

    :param cli: the group of subcommands (a :class:`click.Group` whose
        ``command()`` also takes ``reads_reports=True``).
    """


@hookspec
@per_plugin
def ireebench_addoption(parser):
    """Register command-line options.

    Called once per plugin while the CLI is built, before any argument is
    parsed, for built-in plugins, entry-point plugins and ``--plugin``
    modules alike. An option name or flag already defined (by the core or
    by another plugin) is an error naming both plugins.

    :param parser: an :class:`ireebench._cli.options.OptionParser`; call
        ``parser.addoption("--my_flag", help=..., group="My plugin", ...)``.
        Keyword arguments are those of :class:`click.Option`, and ireebench's
        marks (``native_flag``, ``per_point``, ``requires=CAPABILITY``: an
        option only a backend with that capability honours, refused in one
        line on another; see :mod:`ireebench.backend`). The value is
        available later as ``config.getoption("my_flag")``.
    """


@hookspec(firstresult=True)
def ireebench_expand_command_line(argv, option_specs):
    """Turn the benchmark run's command line into the command lines of its points.

    Called once per benchmark run, after the options are added and before
    the command line is parsed (so that a value such as
    ``--batch_size={bs}`` is replaced before it is read). The first
    non-``None`` result wins; the built-in ``sweeps`` plugin answers when
    ``--sweep`` is given. Each point's command line is then parsed into its
    own configuration (see :mod:`ireebench.points`); the first one's
    options are the run's.

    :param argv: the command line (flag files expanded), without the program name.
    :param option_specs: option name -> :class:`ireebench.config.OptionSpec`
        of every option the command knows (whether it may vary per point).
    :return: a list of :class:`ireebench.points.PointSpec` (``params``,
        ``argv``, ``label``, ``name_prefix``), or ``None`` for a run of one
        configuration.
    """


@hookspec
@named_objects("backend")
def ireebench_backends(config):
    """Return the measurement backends this plugin provides.

    Called once per run, when the command line is parsed and before
    ``ireebench_configure`` (so that plugins check the chosen backend's
    capabilities there); ``--backend NAME`` picks one (default
    ``runtime``, the in-process IREE runtime). A name defined twice is an error naming
    both plugins.

    :param config: the run's :class:`Config`, or ``None`` when the names
        are only listed (``--help``, ``ireebench plugins``).
    :return: a list of :class:`ireebench.Backend` objects (``name``,
        ``capabilities``, ``run(config, hub) -> int``: measure, report
        through ``hub``, an :class:`ireebench.reporting.hub.ReportHub`,
        return an exit code), or a dict of name to ``Backend`` (a bare
        callable ``backend(config, hub)`` is taken as a backend with no
        capabilities). With ``--benchmark_list_tests`` ``run`` is called
        with ``hub=None`` and prints the benchmark names to
        ``config.stdout``. The core opens and closes the run around it: the
        reports, ``ireebench_sessionfinish`` with the real exit status,
        ``config.add_cleanup`` callbacks, the scratch directory. Features
        that need something of the backend check
        ``config.backend.has(capability)`` (see :mod:`ireebench.backend`).
    """


@hookspec
@named_objects("executor")
def ireebench_executors(config):
    """Return the executors this plugin provides: where a run's points are measured.

    Called once per run, right after the backend is chosen and before
    ``ireebench_configure``; ``--executor NAME`` picks one (default
    ``local``: this machine; the built-in ``ray_executor`` adds ``ray``). A
    backend with the ``executors`` capability hands its points to it as
    :class:`ireebench.executor.PointJob` (each point's own ireebench command
    line) and reports the :class:`ireebench.executor.PointOutcome` each
    yields as it finishes (see :mod:`ireebench.executor`). A name defined
    twice is an error naming both plugins. Import a heavy library only when
    the executor runs, not when it is returned.

    :param config: the run's :class:`Config`, or ``None`` when the names
        are only listed (``--help``, ``ireebench plugins``).
    :return: a list of :class:`ireebench.executor.Executor` objects, or a
        dict of name to ``Executor``.
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
def ireebench_generate_points(config, points):
    """Add, remove or rewrite the configurations the run measures (its points).

    Called once per run right after ``ireebench_configure`` (as pytest's
    ``pytest_generate_tests``), with the points of the command line or
    suite: a plain run is one point without parameters. Change the list in
    place: append ``point.derive({"n": 16}, input=["16x512xf32=0.5"])`` (a
    new axis value and the options it sets), remove points, replace them.
    Every per-workload hook then sees its point in ``workload.params`` (and
    the point's config as ``config``). The built-in ``sweeps`` plugin keeps
    its shard here (``trylast``). The core then checks the points (options
    of the whole run the same in every point; see :mod:`ireebench.points`).

    :param config: the run's :class:`Config`.
    :param points: the list of :class:`ireebench.points.Point` (``params``,
        ``config``, ``label``, ``derive``), in the order they run.
    """

# -------------------------------------------------------------------------
# Run setup: the reporters are built.
# -------------------------------------------------------------------------


@hookspec
@named_objects("reporter")
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
    ``None`` everywhere means the value is a .vmfb path as it is. Not
    called for ``-``: standard input is a .vmfb that ireebench reads itself
    (before a worker forks, so that every worker has the same bytes). The
    built-in ``mlir_modules`` plugin compiles ``*.mlir`` here.

    :param config: the run's :class:`Config`.
    :param spec: the ``--module`` value, as given.
    :return: the path of a .vmfb file to benchmark instead, or ``None``.
    """


@hookspec
def ireebench_sessionstart(config, session):
    """Called once the VM instance, devices, modules and context are open.

    :param config: the run's :class:`Config`.
    :param session: the :class:`ireebench._session.Session`.
    """

# -------------------------------------------------------------------------
# Discovery: exported functions become workloads.
# -------------------------------------------------------------------------


@hookspec
@named_objects("invocation kind")
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
    profiling session; a backend that cannot run a workload's kind
    says so here).

    :param config: the run's :class:`Config`.
    :param session: the :class:`Session`.
    :param workloads: the list of :class:`ireebench.Workload` to measure,
        in order (may be empty).
    """

# -------------------------------------------------------------------------
# Reporting starts: the context goes out before the first row.
# -------------------------------------------------------------------------


@hookspec
def ireebench_report_row_names(config, run_names):
    """Return the names of the rows this plugin will add, so the console's name column fits.

    Called once per run, right before ``ireebench_report_context``, with
    the names of the benchmarks about to run (``BM_f/process_time/real_time``
    ...). Google Benchmark sizes the console's name column from every name
    before the first row; return the names of the extra rows and
    aggregates you will report (``BM_f/cold_start``,
    ``BM_f/process_time/real_time_p99``); the column is made as wide as the
    longest of all.

    :param config: the run's :class:`Config`.
    :param run_names: the benchmark names, in order.
    :return: a list of row names, or ``None``.
    """


@hookspec
def ireebench_report_context(config, context):
    """Add entries to the report context before it is reported.

    Called once per run, before the first report. Mutate ``context.extra``
    (an ordered dict of string to JSON value) to add provenance; the JSON
    reporter writes them after Google Benchmark's own fields. The built-in
    ``provenance`` implementation runs first (``tryfirst``), so every
    implementation without ``tryfirst`` already sees its keys.

    :param config: the run's :class:`Config`.
    :param context: the :class:`ireebench._context.Context`.
    """


@hookspec
@per_plugin
def ireebench_point_context(config):
    """Return the context entries that every row of one point carries.

    In a run of several points (a sweep or a suite, see
    :mod:`ireebench.points`) the context describes the run as a whole,
    while each point may measure another module on other devices. Called
    by the backend for each point (``config`` is the point's) before its
    rows are reported — repetitions, aggregates, extra rows and error rows
    alike; never in a run of one configuration, whose context says it for
    every row. The entries land on each row's :attr:`ireebench.Run.provenance`
    and the JSON reporter writes them into the row after ``params``, with
    the meaning of the context keys of the same names; readers take a row's
    value over the context's (:func:`ireebench.comparison.machine.row_context`).
    The built-in ``provenance`` plugin returns the point's ``iree_devices``,
    ``iree_module`` and ``iree_module_sha256``. Called one plugin at a time,
    so a key that is a member of every row (``name``, ``real_time`` ...) is
    refused naming the plugin.

    :param config: the point's :class:`Config`.
    :return: a dict of string keys to text, lists or objects (a number
        would read back as a counter), or ``None``.
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


@hookspec
def ireebench_measure_cold_start(config, session, workload):
    """Time the very first invocation of a workload, before anything else runs it.

    Called once per workload right after ``ireebench_workload_start``,
    before warm-up and calibration: the only moment the function is still
    cold (first-touch page faults, lazily created resources). Return a
    :class:`Run` (an extra row, reported under the benchmark after its
    aggregates); the built-in ``cold_start`` plugin returns
    ``BM_<fn>/cold_start`` with ``--benchmark_cold_start``.

    :param config: the run's :class:`Config`.
    :param session: the :class:`Session`.
    :param workload: the :class:`Workload`.
    :return: a :class:`Run`, or ``None``.
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
    :param repetition: an :class:`ireebench._measure.Repetition` (``index``,
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
    """Receive every row of a benchmark once that benchmark is finished (streaming).

    Called once per row — the benchmark's repetitions, then its
    aggregates, then its extra rows, failed rows included
    (``run.error_occurred``) — as soon as the whole benchmark is measured
    and before the reporters see its rows; so a row arrives when its
    benchmark ends, not when its own repetition ends. Each call gets a
    copy: changing it changes nothing the reporters see.

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
    processing here (a plugin that owns a follow-up of its own declares
    hooks for it with ``ireebench_addhooks``, as ``replay_capture``
    declares ``ireebench_replay_capture``).

    :param config: the run's :class:`Config`.
    :param workloads: the benchmarked :class:`Workload` list.
    :return: an exit code (the run exits with the highest one), or ``None``;
        a check that fails the run with a message calls ``config.fail_run``.
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
# Reading saved reports: commands that read reports (ireebench compare, and
# those plugins add) resolve what they are given through this hook.
# -------------------------------------------------------------------------


@hookspec(firstresult=True)
def ireebench_load_reports(config, reference, like):
    """Load the saved reports a reference names, when it is not a file path.

    Called once per reference by every command that reads Google Benchmark
    JSON reports (``ireebench compare``, and plugins' subcommands through
    ``config.load_reports(reference)`` or
    :func:`ireebench.comparison.load_reports`), never by a benchmark run. The first non-``None`` result wins; ``None`` everywhere
    means the reference is a file path, read as ireebench or the native
    tool wrote it. A results store answers the references it owns
    (the built-in ``store``: ``stored:latest``, ``stored:RUN_ID``,
    ``stored:history``) here; raise :class:`ireebench.UsageError` for one of
    yours that names nothing.

    :param config: the command's :class:`Config`.
    :param reference: the text the user gave (a path, ``stored:...``).
    :param like: the parsed report this one will be compared with (the
        other side of ``ireebench compare``), or ``None``: a store picks
        runs of its machine and its benchmarks.
    :return: a list of ``(label, report)`` pairs — ``label`` names the
        report in messages and tables, ``report`` is a parsed Google
        Benchmark JSON report (a dict with ``"context"`` and
        ``"benchmarks"``) — or ``None``. Return an
        :class:`ireebench.comparison.ReportHistory` (a list) when the
        reference names a history, runs newest first: it is compared as a
        history (a baseline learned from the runs' spread) however many runs
        it holds.
    """


@hookspec
@per_plugin
def ireebench_load_reports_addoption(parser):
    """Register the options your ``ireebench_load_reports`` reads.

    Called once per plugin while ireebench builds its subcommands, for the
    subcommands registered with ``reads_reports=True``
    (``@cli.command(reads_reports=True)``; see
    ``ireebench_register_commands``): each gets these options, so that
    ``config.load_reports("stored:latest")`` in its callback reads the store
    its command line names. The built-in ``store`` adds
    ``--benchmark_storage``, ``--where``, ``--window`` and ``--any_machine``
    (``ireebench compare`` gets them from ``ireebench_compare_addoption``).
    Read them in ``ireebench_load_reports`` as ``config.getoption(NAME)``.
    An option the subcommand has already is an error naming both.

    :param parser: an option parser: ``parser.addoption("--name", "name",
        help=..., group=...)`` as in ``ireebench_addoption``.
    """
