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
is cached in ``$XDG_CACHE_HOME/ireebench`` (``~/.cache/ireebench``) under a
key made of the source's bytes, the compiler's version and the flags, so
the second run of the same file does not compile, and a changed file, flag
or compiler does. A compilation prints one line on stderr; a cache hit
prints nothing.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import tempfile
import time
from pathlib import Path

from ireebench import hookimpl
from ireebench.errors import UsageError, one_line
from ireebench.session import device_uris, driver_of
from ireebench.version import compiler_version

GROUP = "Compiling MLIR (--module=x.mlir)"
CACHE_ENV = "XDG_CACHE_HOME"
TARGET_FLAG = "--iree-hal-target-device"
CPU_FLAGS = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
             "--iree-llvmcpu-target-cpu=host"]
GPU_TARGETS = {"cuda": "cuda", "vulkan": "vulkan", "hip": "hip", "rocm": "hip"}
INSTALL_HINT = 'pip install "ireebench[compiler]"'


@hookimpl
def ireebench_addoption(parser):
    """Adds --compile_flag."""
    parser.addoption("--compile_flag", "compile_flag", multiple=True, group=GROUP,
                     metavar="FLAG",
                     help="An extra iree-compile flag for --module=*.mlir; repeatable "
                          "(e.g. --compile_flag=--iree-opt-level=O3).", module_run=True,
                     per_point=True)


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/ireebench``, or ``~/.cache/ireebench``."""
    base = os.environ.get(CACHE_ENV) or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ireebench"


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


def cache_key(source: bytes, version: str, flags: list[str]) -> str:
    digest = hashlib.sha256()
    for part in (source, version.encode(), "\0".join(flags).encode()):
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    return digest.hexdigest()[:24]


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


def compile_mlir(config, spec: str) -> Path:
    """The cached .vmfb of ``spec``, compiling it on a cache miss."""
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
    directory = cache_dir()
    target = directory / f"{Path(spec).stem}-{cache_key(source, version, flags)}.vmfb"
    if target.is_file() and target.stat().st_size > 0:
        return target
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--module={spec}: cannot create the cache {directory}: "
                         f"{exc.strerror}") from None
    start = time.monotonic()
    try:
        binary = tools.compile_str(source, extra_args=flags, input_type="auto")
    except Exception as exc:  # noqa: BLE001 - the compiler's error, in one line
        raise UsageError(f"--module={spec}: iree-compile failed: {_first_error(exc)}") from None
    # Written whole, then renamed: concurrent runs never read half a module,
    # and a full disk leaves nothing behind.
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=directory)
    except OSError as exc:
        raise UsageError(f"--module={spec}: cannot write the cache {directory}: "
                         f"{exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(binary)
        os.replace(temporary, target)
    except OSError as exc:
        raise UsageError(f"--module={spec}: cannot write the cache {directory}: "
                         f"{exc.strerror}") from None
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    config.stderr.write(f"ireebench: compiled {spec} in {time.monotonic() - start:.1f} s "
                        f"({' '.join(flags)}) -> {target}\n")
    return target


@hookimpl
def ireebench_resolve_module(config, spec):
    """Compiles ``*.mlir``; anything else is left as it is."""
    if not spec.endswith(".mlir"):
        return None
    return str(compile_mlir(config, spec))
