"""A library for glibc's heap regimes: the ``--malloc_trim`` setting's names and values,
the user's ``MALLOC_*`` variables, and a report context's recorded setting, compared.

Used by the ``allocator`` plugin (which applies the setting and records it) and
by ``ireebench compare`` (which tells two reports' settings apart).
"""

from __future__ import annotations

import os

FLAG = "malloc_trim"
DEFAULT_IN_PROCESS = "off"
MODES = ("off", "on", "glibc")
ENVIRONMENT = "environment"  # recorded: the user's MALLOC_* variables govern
UNAVAILABLE = "unavailable"  # recorded: the C library is not glibc

# <malloc.h>
M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD = -1, -2, -3
MALLOPT_NAMES = {M_TRIM_THRESHOLD: "M_TRIM_THRESHOLD", M_TOP_PAD: "M_TOP_PAD",
                 M_MMAP_THRESHOLD: "M_MMAP_THRESHOLD"}
# The environment variable glibc reads at start for each parameter.
ENV_NAMES = {M_TRIM_THRESHOLD: "MALLOC_TRIM_THRESHOLD_", M_TOP_PAD: "MALLOC_TOP_PAD_",
             M_MMAP_THRESHOLD: "MALLOC_MMAP_THRESHOLD_"}
# What each mode sets. off's trim threshold and top pad are the values of the
# usual recipe (MALLOC_TRIM_THRESHOLD_=1000000000 MALLOC_TOP_PAD_=16777216);
# 32 MiB is glibc's largest mmap threshold on 64-bit (HEAP_MAX_SIZE / 2), so
# blocks up to that size come from the heap and stay there. on's 128 KiB is
# glibc's initial mmap threshold, held fixed so that the process's history
# (which moves the dynamic threshold) does not matter.
PARAMETERS = {
    "off": {M_TRIM_THRESHOLD: 1_000_000_000, M_TOP_PAD: 16 << 20, M_MMAP_THRESHOLD: 32 << 20},
    "on": {M_TRIM_THRESHOLD: 0, M_TOP_PAD: 0, M_MMAP_THRESHOLD: 128 << 10},
}
# The user's variables that set these parameters (or the number of mmaps).
USER_VARIABLES = (*ENV_NAMES.values(), "MALLOC_MMAP_MAX_")
TUNABLES = ("glibc.malloc.trim_threshold", "glibc.malloc.top_pad",
            "glibc.malloc.mmap_threshold", "glibc.malloc.mmap_max")


def user_variables(environ=None) -> dict[str, str]:
    """The user's environment variables that set glibc's trimming parameters."""
    environ = os.environ if environ is None else environ
    found = {name: environ[name] for name in USER_VARIABLES if name in environ}
    tunables = [entry for entry in environ.get("GLIBC_TUNABLES", "").split(":")
                if entry.split("=", 1)[0] in TUNABLES]
    if tunables:
        found["GLIBC_TUNABLES"] = ":".join(tunables)
    return found


def setting_of(context: dict) -> tuple | None:
    """The allocator setting a report's context records, comparable; None if unrecorded.

    The parameters are compared by what they set, whichever way they were
    set: ``mallopt`` names in process, the ``MALLOC_*`` variables handed to a
    native tool (``MALLOC_TRIM_THRESHOLD_`` is ``M_TRIM_THRESHOLD``), values
    as integers where they are.
    """
    if not isinstance(context, dict) or "malloc_trim" not in context:
        return None
    parameters = context.get("malloc_parameters")
    items = tuple(sorted(_normalized(name, value) for name, value in parameters.items())) \
        if isinstance(parameters, dict) else ()
    return str(context["malloc_trim"]), items


# A variable's name -> the mallopt parameter it sets.
_SAME_PARAMETER = {ENV_NAMES[parameter]: MALLOPT_NAMES[parameter] for parameter in ENV_NAMES}


def _normalized(name, value) -> tuple[str, str]:
    name = _SAME_PARAMETER.get(str(name), str(name))
    try:
        return name, str(int(str(value).strip()))
    except ValueError:
        return name, str(value)


def describe_setting(setting: tuple | None, other: tuple | None = None) -> str:
    """``malloc_trim=off``, or ``not recorded`` (the native tool's or an older report);
    with the parameters when ``other`` has the same mode and other parameters."""
    if setting is None:
        return "not recorded"
    text = f"malloc_trim={setting[0]}"
    if other is not None and other[0] == setting[0] and other[1] != setting[1]:
        text += " (" + ", ".join(f"{name}={value}" for name, value in setting[1]) + ")"
    return text


__all__ = ["FLAG", "MODES", "USER_VARIABLES", "describe_setting", "setting_of", "user_variables"]
