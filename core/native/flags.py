"""The flags of a native run, derived from the configuration in one place.

:func:`session_args` recreates the session (modules, devices, parameters,
runtime flags), :func:`selection_args` selects the benchmarks ireebench ran
(function and inputs, or an anchored filter; batch flags; time unit), and
:func:`benchmark_flags` carries Google Benchmark's measurement flags. So
every native pass runs exactly what the in-process measurement ran.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from .._modules import module_files
from ..devices import device_uris
from ..errors import UsageError
from ..names import ere_escape, run_name
from ..stash import StashKey
from . import USER_PASS_FLAGS

# Workload name -> the --input values its kind gave for native passes (asked once).
NATIVE_INPUTS = StashKey[dict]()


def module_args(config) -> list[str]:
    """--module flags for the native tool: the run's private copies of the modules."""
    return [f"--module={path}" for path in module_files(config)]


def session_args(config, user_pass_flags: bool = True) -> list[str]:
    """Flags that recreate the session: modules, devices, parameters, runtime flags.

    ``user_pass_flags=False`` leaves out :data:`USER_PASS_FLAGS`, for a pass
    that starts a profiling or capture session of its own.
    """
    args = module_args(config)
    args += [f"--device={d}" for d in device_uris(config)]
    args += [f"--parameters={p}" for p in config.getoption("parameters") or []]
    args += [flag for flag in config.runtime_flags
             if user_pass_flags or not flag.startswith(USER_PASS_FLAGS)]
    return args


def _custom(workloads) -> list:
    """The workloads of kinds the native tool does not run by itself."""
    return [w for w in workloads or [] if w.kind is not None and not w.kind.native_discovers]


def native_inputs(config, workload) -> list[str] | None:
    """The ``--input`` values ``workload``'s kind gives for native passes (asked once)."""
    known = config.stash.setdefault(NATIVE_INPUTS, {})
    if workload.name not in known:
        parent = config.scratch_dir() / "native-inputs"
        parent.mkdir(exist_ok=True)
        # A fresh directory: a worker resumed after a crash (ireebench._worker)
        # starts its count again in the same scratch directory.
        directory = Path(tempfile.mkdtemp(prefix=f"{len(known)}-", dir=parent))
        known[workload.name] = workload.kind.native_inputs(workload, directory)
    return known[workload.name]


def check_native(config, workloads, what: str, one_at_a_time: bool = True) -> None:
    """Refuses, in one line naming the kind, workloads a native pass cannot run.

    Called before anything is measured by the plugins whose native passes
    rerun workloads (profiling, device profiling, replay capture).
    ``one_at_a_time=False``: the pass runs all workloads together, which a
    kind with its own inputs cannot.
    """
    custom = _custom(workloads)
    for workload in custom:
        if native_inputs(config, workload) is None:
            raise UsageError(f"{what}: kind {workload.kind.name!r} ({workload.name}) cannot "
                             f"run in the native iree-benchmark-module, which {what} needs")
    if custom and not one_at_a_time and len(workloads) > 1:
        raise UsageError(f"{what}: kind {custom[0].kind.name!r} ({custom[0].name}) runs in the "
                         "native tool only one benchmark at a time; select one with --function")


def selection_args(config, workloads=None) -> list[str]:
    """Flags that make iree-benchmark-module run the benchmarks ireebench ran.

    With ``--function``: that function and its ``--input`` values. Without,
    the native tool discovers the functions itself (by the rules ireebench's
    discovery follows) and an anchored ``--benchmark_filter`` keeps exactly
    ``workloads``; ``workloads=None`` (the native backend) selects nothing
    here, the user's ``--benchmark_filter`` (:func:`benchmark_flags`)
    decides. A workload of a kind the native tool does not run by itself
    runs alone, with ``--function`` and its kind's :func:`native_inputs`.
    Batch flags and ``--time_unit`` give the same accounting.
    """
    args = []
    custom = _custom(workloads)
    if custom:
        check_native(config, workloads, "a native pass", one_at_a_time=False)
        workload = custom[0]
        args.append(f"--function={workload.function.name}")
        args += [f"--input={value}" for value in native_inputs(config, workload)]
    elif config.getoption("function"):
        args.append(f"--function={config.getoption('function')}")
        args += [f"--input={value}" for value in config.getoption("input") or []]
    elif workloads is not None:
        # The native tool's names (a sweep point's parameters are ireebench's).
        names = "|".join(ere_escape(run_name(w.function.name)) for w in workloads)
        args.append(f"--benchmark_filter=^({names})$")
    args += [
        f"--batch_size={config.getoption('batch_size')}",
        f"--batch_concurrency={config.getoption('batch_concurrency')}",
    ]
    if config.getoption("time_unit"):
        args.append(f"--time_unit={config.getoption('time_unit')}")
    return args


def benchmark_flags(config, user_filter: bool = True) -> list[str]:
    """Google Benchmark flags that shape the measurement, for a native tool.

    Output flags (format, out, aggregates-only, context, color) are not
    passed: ireebench's own reporters produce the output.
    ``user_filter=False`` leaves out ``--benchmark_filter``, for a run whose
    benchmarks :func:`selection_args` names.
    """
    min_time = config.min_time
    args = [f"--benchmark_min_time={min_time.iterations}x" if min_time.iterations
            else f"--benchmark_min_time={min_time.seconds!r}s"]
    if config.min_warmup_time:
        args.append(f"--benchmark_min_warmup_time={config.min_warmup_time!r}")
    args.append(f"--benchmark_repetitions={config.getoption('benchmark_repetitions')}")
    if user_filter and config.getoption("benchmark_filter"):
        args.append(f"--benchmark_filter={config.getoption('benchmark_filter')}")
    for flag in ("benchmark_dry_run", "benchmark_enable_random_interleaving"):
        if config.getoption(flag):
            args.append(f"--{flag}=true")
    if config.getoption("benchmark_time_unit"):
        args.append(f"--benchmark_time_unit={config.getoption('benchmark_time_unit')}")
    return args


def flag_value(config, name: str):
    """The value of ``--name``, an option of a plugin or a runtime flag; None if unset.

    Device profiling and capture flags are runtime flags (handed to the
    native passes as they are), so conflicts are found in either place.
    """
    if name in config.options:
        value = config.options[name]
        return None if value in (None, False, "", (), []) else value
    value = None
    for flag in config.runtime_flags:
        key, sep, text = flag.lstrip("-").partition("=")
        if key == name:
            value = text if sep else "true"
    if value is None or value.strip().lower() in ("", "false", "0"):
        return None
    return value
