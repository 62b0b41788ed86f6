"""``--malloc_trim``: which heap regime the measuring process runs in.

Repetitions of a workload that frees large transient buffers flip between
two regimes when glibc sometimes returns the freed heap to the kernel (a cv
of 35 % where the workload has 1 %); setting glibc's parameters
(``mallopt``) in ``ireebench_configure``, before any runtime session exists
and inherited by a forked worker, makes every repetition measure one:
``off`` (in-process default), ``on``, ``glibc``; a native tool gets the
equivalent ``MALLOC_*`` variables, and the user's own variables win.
``malloc_trim`` and ``malloc_parameters`` go to the report context
(:func:`ireebench.lib.allocator.setting_of`). The regimes, what each sets and
the measurements: docs/performance.md, "Which heap regime is the default".
In the Python API the setting stays in the calling process after the run
(glibc cannot read its old values back).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

from ireebench import StashKey, hookimpl
from ireebench.backend import IN_PROCESS, NATIVE_ENVIRONMENT
from ireebench.errors import flag_error
from ireebench.lib.allocator import (
    DEFAULT_IN_PROCESS,
    ENV_NAMES,
    ENVIRONMENT,
    FLAG,
    MALLOPT_NAMES,
    MODES,
    PARAMETERS,
    UNAVAILABLE,
    user_variables,
)

GROUP = "Statistics and adaptive stopping"

# This process's allocator as an earlier run of the Python API left it
# (mallopt cannot be undone): the mode and what it set, or None.
_applied: tuple[str, dict] | None = None


@dataclass
class AllocatorSetting:
    """The run's heap regime (``config.stash[SETTING]``), as recorded in the context."""

    mode: str  # off, on, glibc, environment or unavailable
    parameters: dict = field(default_factory=dict)  # name -> value, what was set


SETTING = StashKey[AllocatorSetting]()


@hookimpl
def ireebench_addoption(parser):
    """Adds --malloc_trim."""
    parser.addoption(
        f"--{FLAG}", FLAG, default="", group=GROUP, metavar="off|on|glibc",
        requires=(IN_PROCESS, NATIVE_ENVIRONMENT),
        help="glibc's heap trimming in the measuring process. off (default in process): "
             "freed memory is kept, so iterations reuse resident pages (the steady state; "
             "the native tool's MALLOC_TRIM_THRESHOLD_=1000000000 MALLOC_TOP_PAD_=16777216); "
             "on: freed memory is returned at once and faulted back in every iteration (the "
             "native tool's default regime); glibc: glibc's own thresholds, untouched "
             "(repetitions may flip between the two). --backend=native keeps the native "
             "tool's own unless given. MALLOC_* variables you set win over the default.")


def libc_name() -> str:
    """``glibc``, or what this process's C library is when it is not glibc."""
    try:
        version = os.confstr("CS_GNU_LIBC_VERSION")
    except (AttributeError, ValueError, OSError):
        version = None
    if version and version.startswith("glibc"):
        return "glibc"
    return "libSystem" if sys.platform == "darwin" else "not glibc"


def mallopt(parameter: int, value: int) -> bool:
    """glibc's ``mallopt``; True when it accepted the value."""
    import ctypes
    return bool(ctypes.CDLL(None).mallopt(ctypes.c_int(parameter), ctypes.c_int(value)))


def apply_in_process(mode: str) -> dict:
    """Sets ``mode``'s parameters in this process; the names and values it set."""
    global _applied
    applied = {}
    for parameter, value in PARAMETERS[mode].items():
        if not mallopt(parameter, value):
            raise flag_error(FLAG, mode, f"glibc refused mallopt({MALLOPT_NAMES[parameter]}, "
                                         f"{value})")
        applied[MALLOPT_NAMES[parameter]] = value
    _applied = (mode, dict(applied))
    return applied


def tool_variables(mode: str) -> dict[str, str]:
    """The environment variables that give a native tool ``mode``'s parameters."""
    return {ENV_NAMES[parameter]: str(value) for parameter, value in PARAMETERS[mode].items()}


def _note(config, text: str) -> None:
    config.stderr.write(f"ireebench: note: --{FLAG}: {text}\n")


def _set_tool_environment(config, variables: dict[str, str]) -> None:
    """Puts ``variables`` into the environment the native tools inherit, for this run."""
    saved = {name: os.environ.get(name) for name in variables}

    def restore():
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value

    os.environ.update(variables)
    config.add_cleanup(restore)


def resolve(config, requested: str, in_process: bool, libc: str,
            environ=None) -> AllocatorSetting:
    """Decides the run's setting and applies it (see the module docstring)."""
    variables = user_variables(environ)
    mode = requested or (DEFAULT_IN_PROCESS if in_process and not variables else "glibc")
    if mode == "glibc":
        if in_process and _applied is not None:
            _note(config, f"{mode}: this process's allocator was already set to "
                          f"{_applied[0]} by an earlier run, and stays so")
            return AllocatorSetting(_applied[0], dict(_applied[1]))
        if variables:
            return AllocatorSetting(ENVIRONMENT, variables)
        return AllocatorSetting("glibc")
    if variables:
        shown = " ".join(f"{name}={value}" for name, value in variables.items())
        _note(config, f"{mode} overrides {shown} from the environment")
    if not in_process:
        parameters = tool_variables(mode)
        _set_tool_environment(config, parameters)
        return AllocatorSetting(mode, parameters)
    if libc != "glibc":
        if requested:
            _note(config, f"{mode} not applied: the C library ({libc}) has no mallopt; "
                          "its allocator's own behaviour is measured")
        return AllocatorSetting(UNAVAILABLE)
    return AllocatorSetting(mode, apply_in_process(mode))


@hookimpl(tryfirst=True)
def ireebench_configure(config):
    """Checks --malloc_trim and applies it before anything allocates for the run."""
    requested = config.getoption(FLAG).strip()
    if requested and requested not in MODES:
        raise flag_error(FLAG, requested, "expected off, on or glibc")
    config.stash[SETTING] = resolve(config, requested, config.backend.has(IN_PROCESS),
                                    libc_name())


@hookimpl
def ireebench_report_context(config, context):
    """Records the setting: ``malloc_trim`` and ``malloc_parameters``."""
    setting = config.stash.get(SETTING, None)
    if setting is None:
        return
    context.extra["malloc_trim"] = setting.mode
    context.extra["malloc_parameters"] = dict(setting.parameters)
