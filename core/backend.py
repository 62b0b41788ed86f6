"""Measurement backends: what ``--backend=NAME`` runs, and what each one can do.

A backend measures and reports; the core opens and closes the run around
it (:mod:`ireebench._runner`). Plugins provide backends through
``ireebench_backends``; a :class:`Backend` says what it can do in
:attr:`Backend.capabilities` (strings, so a plugin can declare one of its
own), and a feature that needs something of the backend asks for the
capability (:func:`require`), never for a backend's name, so a third
party's backend gets every feature its capabilities allow, and a refusal
names what is missing. Each option says which capability it needs
(``requires=CAPABILITY``), refused by :func:`check_capabilities` before any
plugin configures. The capabilities and what needs each, and the helpers
for a backend's author (:data:`HELPERS`, imported on first use):
docs/plugins.md, "Writing a backend".
"""

from __future__ import annotations

from ._argscan import scan_options
from ._public import lazy_names
from .errors import UsageError, flag_error
from .hookcall import collect_named

IN_PROCESS = "in_process"
REPETITION_SAMPLES = "repetition_samples"
ADAPTIVE_REPETITIONS = "adaptive_repetitions"
PLUGIN_KINDS = "plugin_kinds"
PROFILING_PASSES = "profiling_passes"
NATIVE_FLAGS = "native_flags"
SWEEPS = "sweeps"
MEASURED_WORKLOADS = "measured_workloads"
NATIVE_ENVIRONMENT = "native_environment"
EXECUTORS = "executors"
PROCESS_REPETITIONS = "process_repetitions"

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
    MEASURED_WORKLOADS: "hands the workloads it measured to ireebench_measurements_finish",
    NATIVE_ENVIRONMENT: "runs the native tool with this process's environment",
    EXECUTORS: "measures its points where --executor says",
    PROCESS_REPETITIONS: "spreads a benchmark's repetitions over several processes",
}

# Google Benchmark's flags that shape the report, which ireebench writes in
# this process whatever the backend (its reporters, --benchmark_out): never
# handed to a tool that measures elsewhere, where --benchmark_out would name
# a file on the wrong side (and --benchmark_format change what is parsed).
LOCAL_OUTPUT_OPTIONS = frozenset({
    "benchmark_format", "benchmark_out", "benchmark_out_format", "benchmark_counters_tabular",
    "benchmark_color", "benchmark_report_aggregates_only", "benchmark_display_aggregates_only",
})


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
    :param capabilities: what it can do: a set of the capability strings of
        this module (or a plugin's own); nothing by default.
    :param description: one line saying how it measures, shown by
        ``ireebench plugins`` (``"the native tool over ssh"``).
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


def require(config, capability, flag: str, value) -> None:
    """Refuses ``--flag=value`` in one line when the run's backend lacks ``capability``.

    ``capability``: a capability, or a tuple of them of which any will do
    (the refusal names the first). ``flag`` as written, ``--rusage`` or
    ``rusage``; ``value`` as the user gave it (``true`` for a boolean).
    """
    wanted = (capability,) if isinstance(capability, str) else tuple(capability)
    if not any(config.backend.has(each) for each in wanted):
        raise flag_error(flag.lstrip("-"), value, refusal(config, wanted[0]))


def check_capabilities(config) -> None:
    """Refuses, in one line, each option the run's backend cannot honour.

    An option given (not at its default) whose spec ``requires`` a
    capability the backend lacks (:func:`require`). Called once the backend
    is chosen, before ``ireebench_configure``.
    """
    for spec in config.option_specs.values():
        if not spec.requires:
            continue
        value = config.options.get(spec.name)
        if value is None or value is False or value == spec.default or (
                isinstance(value, (str, list, tuple)) and not value):
            continue
        require(config, spec.requires, spec.name, _as_given(value))


def check_runtime_flags_honoured(config) -> None:
    """Refuses the runtime flags (``--task_topology_max_group_count=2``) when the
    backend neither measures in process nor hands them to the native tool.

    Called after ``ireebench_configure``, so a plugin that owns runtime
    flags (device profiling) refuses them first, naming what it needs.
    """
    if config.runtime_flags and not (config.backend.has(IN_PROCESS)
                                     or config.backend.has(NATIVE_FLAGS)):
        flag, _, value = config.runtime_flags[0].partition("=")
        require(config, (NATIVE_FLAGS, IN_PROCESS), flag, value or "true")


def _as_given(value) -> str:
    """An option's parsed value as the command line spelled it (the first of several)."""
    if isinstance(value, (list, tuple)):
        value = value[0]
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# --- helpers for a backend's author ------------------------------------------

# Defined beside what they use (the machine, Google Benchmark's JSON, the
# modules, the native tools), imported when first read (PEP 562): a plugin
# that only declares a backend imports none of it.
HELPERS = {
    "machine_context": "._context",
    "runs_from_benchmark_json": ".lib.gbench_json",
    "context_from_benchmark_json": ".lib.gbench_json",
    "split_benchmark_json": ".lib.gbench_json",
    "tool_path": ".native.tools",
    "native_error_line": ".native.tools",
    "BENCHMARK_TOOL": ".native.tools",
    "aggregates": ".native.backend",
    # The run's steps a backend (or a plugin that measures, as rank does) repeats.
    **{name: "._discovery" for name in ("check_kinds", "classify", "invocation_kinds")},
    **{name: "._measure" for name in (
        "BenchmarkFailure", "Repetition", "error_run", "failure_message", "iteration_count",
        "measure_workload", "new_run", "run_iterations", "time_repetition")},
    **{name: "._modules" for name in ("ModuleImage", "file_sha256", "last_images",
                                       "module_files")},
    **{name: "._session" for name in ("Session", "open_vm_module")},
    "run_here": "._runner",
    "Scratch": "._scratch",
}
__getattr__, __dir__ = lazy_names(__name__, HELPERS)


def forwarded_argv(config, keep=()) -> list[str]:
    """The run's command line for a native tool that measures elsewhere.

    What is left is what the native tool understands and should act on
    there: the module, function, input and device flags, Google Benchmark's
    measurement flags, the runtime flags, and the options a plugin marked
    as the native tool's own (``native_flag=True``: output processing's,
    ``--print_statistics``). Left out: the ``ireebench`` group
    (``--backend``, ``--plugin``, ``-p``, ``--reporter``, ``--isolation``
    ...), every other plugin option, and the report's flags, which
    ireebench honours here (:data:`LOCAL_OUTPUT_OPTIONS`:
    ``--benchmark_out``, ``--benchmark_format`` ...; add
    ``--benchmark_format=json`` to read the tool's report) — except the
    option names in ``keep``. Flag files are already expanded; a flag's
    value in the next argument goes with it, as click reads it (a boolean's
    optional value is not the next flag: ``--strict_flags
    --benchmark_min_time=3x`` keeps the second). ``--module`` is as the user
    gave it: a backend whose tool cannot read it there (an ``.mlir`` file,
    stdin) gives :func:`module_files` instead.
    """
    argv = list(config.argv)
    dropped: set[int] = set()
    for found in scan_options(argv, dict(config.option_specs)):  # as click reads them
        spec = found.spec
        if spec.name in keep:
            continue
        if not spec.native or spec.name in LOCAL_OUTPUT_OPTIONS:
            dropped |= found.indices
    return [arg for index, arg in enumerate(argv) if index not in dropped]


__all__ = [
    "ADAPTIVE_REPETITIONS", "CAPABILITY_MEANING", "EXECUTORS", "IN_PROCESS", "LOCAL_OUTPUT_OPTIONS",
    "MEASURED_WORKLOADS", "NATIVE_ENVIRONMENT", "NATIVE_FLAGS", "PLUGIN_KINDS",
    "PROCESS_REPETITIONS", "PROFILING_PASSES", "REPETITION_SAMPLES", "SWEEPS", "Backend",
    "check_capabilities", "check_runtime_flags_honoured", "forwarded_argv", "refusal", "require",
]
__all__.extend(HELPERS)  # public, imported on first use
