"""Measurement backends: what ``--backend=NAME`` runs, and what each one can do.

A backend measures and reports; the core opens and closes the run around
it (:mod:`ireebench.runner`). Plugins provide backends through
``ireebench_backends``; a :class:`Backend` says what it can do in
:attr:`Backend.capabilities`, and a feature that needs something of the
backend asks for the capability (:func:`require`), never for a backend's
name, so a third party's backend gets every feature its capabilities
allow, and a refusal names what is missing:

    --benchmark_min_rel_accuracy=0.01: needs a backend that decides the
    repetitions one at a time (capability 'adaptive_repetitions');
    --backend=ssh does not have it

The capabilities (strings, so a plugin can declare one of its own):

``in_process``
    the IREE runtime measures in this process: the session, discovery and
    measurement hooks are called (``ireebench_measure_repetition``
    brackets, ``--benchmark_cold_start``).
``repetition_samples``
    each repetition is a row with its own time, so statistics can be
    computed from them (``--benchmark_statistics``; :func:`aggregates`).
``adaptive_repetitions``
    repetitions are measured one at a time and
    ``ireebench_continue_repetitions`` decides whether another follows
    (``--benchmark_min_rel_accuracy``).
``plugin_kinds``
    it runs the invocation kinds plugins add; without it, a run that
    selects a function of such a kind is refused in one line
    (:func:`check_kinds`), never silently skipped.
``profiling_passes``
    its workloads can be rerun untimed by a profiling pass after they are
    measured (``--dispatch_statistics``, third-party profiling sinks,
    in-process device profiling).
``sweeps``
    it measures many configurations in one run: the points of a sweep or
    suite (:mod:`ireebench.points`), each point's rows named after its
    parameters.
``native_flags``
    it hands the runtime flags, and the options plugins mark as the native
    tool's own (``native_flag=True``: ``--print_statistics``, output
    processing's), to the native tool that measures, which acts on them
    itself (device profiling, allocator statistics, outputs).

Helpers for a backend's author, each also used by the built-in backends:
:func:`machine_context` (the report context of this machine),
:func:`runs_from_benchmark_json` / :func:`context_from_benchmark_json`
(a Google Benchmark JSON report turned into rows), :func:`forwarded_argv`
(the command line without ireebench's and plugins' own flags, for a tool
that measures elsewhere), :func:`aggregates` (Google Benchmark's
aggregates and the selected statistics of a benchmark's repetitions).
The report hub sizes the console's name column itself
(``hub.report_context(context, run_names)``).
"""

from __future__ import annotations

from . import names
from .argscan import scan_options
from .context import Context, gather
from .discovery import classify_module_functions
from .errors import UsageError, flag_error
from .hookcall import collect_named
from .native.backend import aggregates
from .native.gbench_json import context_from_benchmark_json, runs_by_benchmark
from .results import Run

IN_PROCESS = "in_process"
REPETITION_SAMPLES = "repetition_samples"
ADAPTIVE_REPETITIONS = "adaptive_repetitions"
PLUGIN_KINDS = "plugin_kinds"
PROFILING_PASSES = "profiling_passes"
NATIVE_FLAGS = "native_flags"
SWEEPS = "sweeps"

# What each built-in capability means, in the words of a refusal.
CAPABILITY_MEANING = {
    IN_PROCESS: "measures in this process with the IREE runtime",
    REPETITION_SAMPLES: "reports each repetition's own time",
    ADAPTIVE_REPETITIONS: "decides the repetitions one at a time",
    PLUGIN_KINDS: "runs the invocation kinds plugins add",
    PROFILING_PASSES: "can rerun its workloads in an untimed profiling pass",
    SWEEPS: "measures many configurations in one run",
    NATIVE_FLAGS: "hands the runtime flags and the native tool's own flags to the native "
                  "tool that measures",
}


class Backend:
    """A measurement backend.

    Subclass it and override :meth:`run` (and the class attributes), or
    give ``run`` as a callable::

        Backend("ssh", run=run_over_ssh, capabilities={REPETITION_SAMPLES})

    :param name: what ``--backend`` selects it by.
    :param run: ``run(config, hub) -> int``: measure, report each benchmark's
        rows through ``hub`` (``hub.report_context(context, run_names)``
        once, then ``hub.report(runs)`` per benchmark), return an exit code
        (0, or 1 when a benchmark failed). With ``--benchmark_list_tests``
        ``hub`` is ``None``: print the benchmark names to ``config.stdout``.
    :param capabilities: what it can do (the constants of this module).
    :param description: one line for ``--help`` and ``ireebench plugins``.
    """

    name = ""
    capabilities: frozenset = frozenset()
    description = ""

    def __init__(self, name: str | None = None, run=None, capabilities=None,
                 description: str | None = None):
        if name is not None:
            self.name = name
        if capabilities is not None:
            self.capabilities = frozenset(capabilities)
        if description is not None:
            self.description = description
        self._run = run

    def run(self, config, hub) -> int:
        if self._run is None:
            raise NotImplementedError(f"backend {self.name!r} has no run()")
        return self._run(config, hub)

    def has(self, capability: str) -> bool:
        return capability in self.capabilities

    def __repr__(self) -> str:
        return f"<Backend {self.name!r} {sorted(self.capabilities)}>"


def as_backend(name: str, provided) -> Backend:
    """A provided backend as a :class:`Backend`: a bare callable (the form before
    backends were objects) is a backend without capabilities."""
    if isinstance(provided, Backend):
        if not provided.name:
            provided.name = name
        return provided
    if callable(provided):
        return Backend(name, provided)
    raise UsageError(f"backend {name!r} is neither an ireebench.Backend nor a callable")


def select_backend(config) -> Backend:
    """The backend ``--backend`` names (``runtime`` by default), from every plugin's
    ``ireebench_backends`` (a name two plugins provide names both)."""
    backends = collect_named(config.pm, "ireebench_backends", "backend", config=config)
    name = config.getoption("backend")
    if name not in backends:
        raise UsageError(f"--backend={name}: unknown backend (known: {', '.join(sorted(backends))})")
    return as_backend(name, backends[name])


def refusal(config, capability: str) -> str:
    """'needs a backend that ... (capability 'x'); --backend=NAME does not have it'."""
    meaning = CAPABILITY_MEANING.get(capability, "has it")
    return (f"needs a backend that {meaning} (capability {capability!r}); "
            f"--backend={config.backend.name} does not have it")


def require(config, capability: str, flag: str, value) -> None:
    """Refuses ``--flag=value`` in one line when the run's backend lacks ``capability``."""
    if not config.backend.has(capability):
        raise flag_error(flag, value, refusal(config, capability))


# --- helpers for a backend's author ------------------------------------------


def machine_context(config, executable: str | None = None) -> Context:
    """The report context of this machine (Google Benchmark's fields, plus
    ``--benchmark_context`` entries); ``executable`` defaults to this program."""
    return gather(executable, config.benchmark_context)


def runs_from_benchmark_json(report: dict, batch_size: int = 1) -> list[list[Run]]:
    """A Google Benchmark JSON report (the native tool's, or ireebench's) as rows,
    grouped per benchmark in report order; each repetition row carries its
    time in ``samples``."""
    return runs_by_benchmark(report, batch_size)


def forwarded_argv(config, keep=()) -> list[str]:
    """The run's command line without ireebench's own flags and plugins' flags.

    What is left is what the native tool understands: the module, function,
    input and device flags, Google Benchmark's flags, the runtime flags, and
    the options a plugin marked as the native tool's own
    (``native_flag=True``: output processing's, ``--print_statistics``).
    Left out: the ``ireebench`` group (``--backend``, ``--plugin``, ``-p``,
    ``--reporter``, ``--isolation`` ...) and every other plugin option,
    except the option names in ``keep``. Flag files are already expanded;
    a flag's value in the next argument goes with it, as click reads it (a
    boolean's optional value is not the next flag: ``--strict_flags
    --benchmark_min_time=3x`` keeps the second).
    """
    argv = list(config.argv)
    dropped: set[int] = set()
    for found in scan_options(argv, dict(config.option_specs)):  # as click reads them
        if not (found.spec.native or found.spec.name in keep):
            dropped |= found.indices
    return [arg for index, arg in enumerate(argv) if index not in dropped]


def check_kinds(config, backend: Backend) -> None:
    """A backend without ``plugin_kinds`` is refused a function of a plugin's kind.

    Only asked when a plugin provides a kind the native tool does not run by
    itself; then the module's functions are classified (the module loaded
    without a device) and a selected function of such a kind is one line.
    """
    if backend.has(PLUGIN_KINDS):
        return
    for function, kind, owner in classify_module_functions(config):
        if kind.native_discovers:
            continue
        raise UsageError(
            f"--backend={backend.name}: cannot run {names.family_name(function.name)}, a "
            f"function of the kind {kind.name!r} (plugin {owner!r}): "
            f"{refusal(config, PLUGIN_KINDS).split('; ')[0]}; use --backend=runtime")


__all__ = [
    "ADAPTIVE_REPETITIONS", "IN_PROCESS", "NATIVE_FLAGS", "PLUGIN_KINDS", "PROFILING_PASSES",
    "REPETITION_SAMPLES", "Backend", "aggregates", "check_kinds", "context_from_benchmark_json",
    "forwarded_argv", "machine_context", "require", "runs_from_benchmark_json",
]
