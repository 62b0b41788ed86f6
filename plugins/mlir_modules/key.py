"""What a compiled module depends on, hashed into its cache key.

* the source's bytes and the flags;
* **the compiler that runs**: ``iree-compile`` as iree-base-compiler finds
  it (``IREE_TOOL_PATH`` first, then the package's own), by its resolved
  path, size and modification time and those of the compiler library it
  loads (``libIREECompiler.so``) and of ``iree-lld``, and the package's
  version (ccache's default ``compiler_check``: a rebuilt compiler is a new
  compiler, without running it on every cache hit);
* **the machine, where the flags leave it to the machine**: the host's
  architecture always (the default target triple is the host's), and with
  ``--iree-llvmcpu-target-cpu=host`` or ``...-target-cpu-features=host``
  the CPU LLVM resolves "host" from (``/proc/cpuinfo``: vendor, family,
  model and feature flags), so a cache shared between machines (an NFS home)
  never serves code this CPU cannot run.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

HOST_FLAGS = ("--iree-llvmcpu-target-cpu", "--iree-llvmcpu-target-cpu-features")
COMPILER_LIBRARY = "libIREECompiler.so"
# The fields of a /proc/cpuinfo processor block that identify what LLVM's
# host detection sees (x86, Arm, RISC-V), not the ones that vary by core or time.
CPU_FIELDS = frozenset({
    "vendor_id", "cpu family", "model", "model name", "flags",
    "CPU implementer", "CPU architecture", "CPU variant", "CPU part", "Features",
    "isa", "uarch", "mvendorid", "marchid", "mimpid",
})


def _file_identity(path: str) -> str:
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except OSError:
        return f"{real}:missing"
    return f"{real}:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"


def compiler_identity(compile_tool: str, lld_tool: str | None, version: str) -> str:
    """The compiler that runs: its files (the tool, its library, the linker) and version."""
    tool = Path(os.path.realpath(compile_tool))
    parts = [version, _file_identity(str(tool))]
    for directory in (tool.parent, tool.parent.parent / "lib"):
        parts += [_file_identity(str(library))
                  for library in sorted(directory.glob(f"{COMPILER_LIBRARY}*"))]
    if lld_tool:
        parts.append(_file_identity(lld_tool))
    return "\n".join(parts)


def uses_host_cpu(flags: list[str]) -> bool:
    """Whether the CPU or its features are "host" (the last of a flag given
    twice wins, as in LLVM: ``--compile_flag=--iree-llvmcpu-target-cpu=generic``
    overrides the default ``host``)."""
    values = {}
    for flag in flags:
        name, _, value = flag.partition("=")
        values[name] = value
    return any(values.get(name) == "host" for name in HOST_FLAGS)


def host_cpu(cpuinfo: str = "/proc/cpuinfo") -> str:
    """The first processor's identity and features (``platform`` where /proc is not)."""
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as handle:
            block = handle.read().split("\n\n", 1)[0]
    except OSError:
        return f"{platform.machine()} {platform.processor()}"
    fields = []
    for line in block.splitlines():
        name, _, value = line.partition(":")
        if name.strip() in CPU_FIELDS:
            fields.append(f"{name.strip()}={value.strip()}")
    return "\n".join(sorted(fields))


def machine(flags: list[str]) -> str:
    """What the output depends on of this machine, given the flags."""
    parts = [platform.machine()]
    if uses_host_cpu(flags):
        parts.append(host_cpu())
    return "\n".join(parts)


def cache_key(source: bytes, flags: list[str], compiler: str, machine_identity: str) -> str:
    import hashlib
    digest = hashlib.sha256()
    for part in (source, "\0".join(flags).encode(), compiler.encode(),
                 machine_identity.encode()):
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    return digest.hexdigest()[:24]
