"""``--module=x.mlir``: compile MLIR for the selected device, cached, then benchmark it.

Implements ``ireebench_resolve_module``: a ``--module`` value ending in
``.mlir`` is compiled with iree-base-compiler (``pip install
"ireebench[compiler]"``) for the first ``--device``:

* ``local-sync``, ``local-task``: ``--iree-hal-target-device=local
  --iree-hal-local-target-device-backends=llvm-cpu
  --iree-llvmcpu-target-cpu=host``;
* ``cuda``, ``vulkan``, ``hip`` (and its ``rocm`` spelling):
  ``--iree-hal-target-device=<driver>``;

plus every ``--compile_flag`` (which may also choose the target itself:
``--compile_flag=--iree-hal-target-device=...`` replaces ours). The .vmfb
is cached (:mod:`ireebench.lib.compile_cache`: ``$XDG_CACHE_HOME/ireebench``
or ``~/.cache/ireebench``, used only when nobody else can write it) under a
key of everything the output depends on (``plugins/mlir_modules/key.py``:
the source's bytes, the flags, the ``iree-compile`` that runs, the host CPU
where the flags say ``host``), so the second run of the same file does not
compile, and a changed file, flag, compiler or machine does. A compilation
prints one line on stderr; a cache hit prints nothing; a cache that cannot
be trusted, or an entry that is not what was written, is one warning line
naming it, and the module is compiled again.

A run of several points (a sweep, a suite) compiles every point's modules
before it measures anything, each distinct (file, flags) once and in
parallel, as many at a time as the process may use CPUs
(``ireebench_generate_points``, a wrapper); a module that fails to compile
is refused for its points only (``file.mlir:12:3: error: ...``, the
compiler's first error line), which become error rows while the others are
measured.
"""

from __future__ import annotations

import functools
import importlib
import os
import time
from pathlib import Path

from ireebench import StashKey, hookimpl
from ireebench.devices import device_uris, driver_of
from ireebench.errors import UsageError, one_line
from ireebench.lib.compile_cache import Untrusted, cache_location, open_cache
from ireebench.version import compiler_version

from .key import cache_key, compiler_identity, machine

GROUP = "Compiling MLIR (--module=x.mlir)"
TARGET_FLAG = "--iree-hal-target-device"
CPU_FLAGS = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
             "--iree-llvmcpu-target-cpu=host"]
GPU_TARGETS = {"cuda": "cuda", "vulkan": "vulkan", "hip": "hip", "rocm": "hip"}
INSTALL_HINT = 'pip install "ireebench[compiler]"'

# The .mlir modules of a run of several points, compiled before it measures:
# (--module value, compile flags) -> the .vmfb, or the UsageError saying why not.
COMPILED = StashKey["dict[tuple[str, tuple[str, ...]], Path | UsageError]"]()


@hookimpl
def ireebench_addoption(parser):
    """Adds --compile_flag."""
    parser.addoption("--compile_flag", "compile_flag", multiple=True, group=GROUP,
                     metavar="FLAG",
                     help="An extra iree-compile flag for --module=*.mlir; repeatable "
                          "(e.g. --compile_flag=--iree-opt-level=O3).", module_run=True,
                     per_point=True, module_source=True)


def compile_flags(config, spec: str) -> list[str]:
    """The flags ``spec`` is compiled with: the device's target, then --compile_flag."""
    extra = list(config.getoption("compile_flag") or [])
    if any(flag.startswith(TARGET_FLAG) for flag in extra):
        return extra
    driver = driver_of(device_uris(config)[0])
    if driver.startswith("local"):
        return CPU_FLAGS + extra
    if driver in GPU_TARGETS:
        return [f"{TARGET_FLAG}={GPU_TARGETS[driver]}"] + extra
    raise UsageError(f"--module={spec}: no compile target known for --device="
                     f"{device_uris(config)[0]}; give one with "
                     f"--compile_flag={TARGET_FLAG}=...")


def _compiler_tools():
    """iree.compiler.tools, or a one-line error saying how to install it (an
    optional dependency: imported only when an .mlir module is given)."""
    try:
        return importlib.import_module("iree.compiler.tools")
    except ImportError:
        return None


def _first_error(exc: BaseException) -> str:
    text = getattr(exc, "stderr_text", None) or getattr(exc, "stderr", None) or str(exc)
    if isinstance(text, bytes):
        text = text.decode(errors="replace")
    lines = [line for line in str(text).splitlines() if line.strip()]
    errors = [line for line in lines if "error:" in line]
    return one_line((errors or lines or [type(exc).__name__])[0])


def _compiler(spec: str, version: str) -> str:
    """The identity of the compiler that runs (the tools iree-base-compiler finds)."""
    binaries = importlib.import_module("iree.compiler.tools.binaries")
    try:
        compile_tool = binaries.find_tool("iree-compile")
    except ValueError as exc:
        raise UsageError(f"--module={spec}: {_first_error(exc)}") from None
    try:
        lld_tool = binaries.find_tool("iree-lld")
    except ValueError:
        lld_tool = None
    return compiler_identity(compile_tool, lld_tool, version)


def _warn(config, spec: str, line: str) -> None:
    config.stderr.write(f"ireebench: warning: --module={spec}: {line}\n")


def compile_mlir(config, spec: str, announce: bool = False) -> Path:
    """The cached .vmfb of ``spec``, compiling it on a cache miss (``announce``: saying so
    when it starts, for the compiles of a suite, which run before its first row)."""
    tools = _compiler_tools()
    version = compiler_version()
    if tools is None or version is None:
        raise UsageError(f"--module={spec}: compiling MLIR needs iree-base-compiler: "
                         f"{INSTALL_HINT}")
    flags = compile_flags(config, spec)
    try:
        source = Path(spec).read_bytes()
    except OSError as exc:
        raise UsageError(f"--module={spec}: cannot read: {exc.strerror}") from None
    key = cache_key(source, flags, _compiler(spec, version), machine(flags))
    stem = Path(spec).stem
    location = cache_location()
    try:
        cache = open_cache(location)
    except Untrusted as exc:
        cache = None
        _warn(config, spec, f"compile cache {location} not used: {exc} (nobody but you, "
                            "and root above it, may write there); compiling for this run only")
    if cache is not None:
        found = cache.lookup(stem, key, functools.partial(_warn, config, spec))
        if found is not None:
            return found
    if announce:
        config.stderr.write(f"ireebench: compiling {spec} ...\n")
    start = time.monotonic()
    try:
        binary = tools.compile_str(source, extra_args=flags, input_type="auto")
    except Exception as exc:  # noqa: BLE001 - the compiler's error, in one line
        # The source is handed over as bytes: its lines are the file's.
        first = _first_error(exc).replace("<stdin>:", f"{spec}:", 1)
        raise UsageError(f"--module={spec}: iree-compile failed: {first}") from None
    if cache is None:
        target = config.scratch_dir() / f"compiled-{key}.vmfb"
        target.write_bytes(binary)
    else:
        try:
            target = cache.store(stem, key, binary)
        except OSError as exc:
            raise UsageError(f"--module={spec}: cannot write the cache {cache.directory}: "
                             f"{exc.strerror}") from None
    config.stderr.write(f"ireebench: compiled {spec} in {time.monotonic() - start:.1f} s "
                        f"({' '.join(flags)}) -> {target}\n")
    return target


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _compiled_or_error(config, spec: str):
    try:
        return compile_mlir(config, spec, announce=True)
    except UsageError as exc:  # that point's error row; the others are measured
        return exc


@hookimpl(wrapper=True)
def ireebench_generate_points(config, points):
    """Compiles the ``.mlir`` modules of every point at once, before anything is measured.

    A wrapper: after every plugin made its points (and the shard kept its
    own). Each distinct (file, flags) is compiled once, in parallel, as many
    at a time as this process may use CPUs; a failure is kept for its
    points, which :func:`ireebench_resolve_module` then refuses (each an
    error row: the run measures the others). A plain run (one module)
    compiles when its session opens, as before.
    """
    result = yield
    index = config.getoption("point_index")
    chosen = points if index is None else points[index:index + 1]  # a point's own process
    jobs: dict[tuple[str, tuple[str, ...]], object] = {}
    for point in chosen:
        for spec in point.config.getoption("module") or []:
            if spec.endswith(".mlir"):
                try:
                    jobs.setdefault((spec, tuple(compile_flags(point.config, spec))),
                                    point.config)
                except UsageError:
                    continue  # no target for its device: said when the point resolves it
    compiled = config.stash.setdefault(COMPILED, {})
    jobs = {key: job for key, job in jobs.items() if key not in compiled}
    if len(jobs) < 2:
        return result
    config.scratch_dir()  # made once, here: a compile without a cache writes there
    # A thread pool (concurrent.futures, which imports logging), only for a run of
    # several modules: see LAZY_IMPORTS in tests/core/test_imports.py.
    from . import parallel

    compiled.update(parallel.run_all({key: functools.partial(_compiled_or_error, job, key[0])
                                      for key, job in jobs.items()}, _cpus()))
    return result


@hookimpl
def ireebench_resolve_module(config, spec):
    """Compiles ``*.mlir`` (or takes what was compiled for the run's points);
    anything else is left as it is."""
    if not spec.endswith(".mlir"):
        return None
    found = config.stash.get(COMPILED, {}).get((spec, tuple(compile_flags(config, spec))))
    if isinstance(found, UsageError):
        raise UsageError(str(found), found.exit_code, found.status)
    return str(found if found is not None else compile_mlir(config, spec))
