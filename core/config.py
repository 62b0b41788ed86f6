"""The configuration of one run: what every hook receives as ``config``.

A :class:`Config` holds what the command line said (``getoption``, the
runtime flags), the plugin manager, the streams the run writes to, and the
run's state: ``config.stash`` (typed per-run state, for the core and for
plugins), cleanups (``add_cleanup``) and a private scratch directory, which
the core releases when the run ends, whatever the backend.

A run of several configurations (a sweep, a suite: see
:mod:`ireebench.points`) has one :class:`Config` per point besides the
run's own: :meth:`Config.for_point` makes one, with the point's options,
runtime flags and ``params``, sharing everything else with the run (the
plugin manager, the streams, ``stash``, ``run_id``, cleanups and scratch
directory). Hooks of a point's session and workloads receive the point's
config; hooks of the whole run (reports, ``ireebench_measurements_finish``,
``ireebench_sessionfinish``) the run's.
"""

from __future__ import annotations

import difflib
import math
import re
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from ._scratch import Scratch
from .backend import select_backend
from .errors import EXIT_FAILED, RUN_FAILURE_CODES, UsageError, one_line
from .hookcall import guarded, plugin_of_files
from .stash import Stash


@dataclass
class MinTime:
    """--benchmark_min_time: either seconds or an explicit iteration count."""

    seconds: float | None = 0.5
    iterations: int | None = None


def parse_min_time(text: str, flag: str = "benchmark_min_time") -> MinTime:
    value = str(text).strip()
    try:
        if value.endswith("x"):
            iterations = int(value[:-1])
            if iterations <= 0:
                raise ValueError
            return MinTime(seconds=None, iterations=iterations)
        seconds = float(value.removesuffix("s"))
        if not seconds > 0 or math.isnan(seconds):
            raise ValueError
        return MinTime(seconds=seconds)
    except ValueError:
        raise UsageError(
            f"--{flag}={text}: expected a positive `<float>s` (seconds) or `<integer>x` "
            "(iterations)"
        ) from None


def _warmup_seconds(text) -> float:
    try:
        seconds = float(str(text).rstrip("s"))
        if seconds < 0 or math.isnan(seconds):
            raise ValueError
    except ValueError:
        raise UsageError(f"--benchmark_min_warmup_time={text}: expected seconds >= 0") from None
    return seconds


def parse_benchmark_context(values) -> dict[str, str]:
    """--benchmark_context=key=value,key2=value2 (repeatable)."""
    context: dict[str, str] = {}
    for value in values or ():
        for item in filter(None, str(value).split(",")):
            key, sep, val = item.partition("=")
            if not sep or not key:
                raise UsageError(f"--benchmark_context={value}: expected key=value pairs")
            context[key] = val
    return context


def _compile_filter(pattern: str):
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise UsageError(f"--benchmark_filter={pattern}: invalid regex: {exc}") from None
    except RecursionError:
        raise UsageError(f"--benchmark_filter={pattern[:80]}...: invalid regex: "
                         "nested too deeply") from None


@dataclass(frozen=True)
class OptionSpec:
    """What the run knows of one option: who added it and how the native tool sees it."""

    name: str  # the getoption() name
    owner: str  # "ireebench" (the core) or the plugin that added it
    group: str  # the --help section
    flags: tuple[str, ...]  # "--name", "-p" ...
    takes_value: bool  # False for a flag without a value (--version)
    default: object
    # The native iree-benchmark-module takes it as it is: the core's module,
    # device and Google Benchmark flags, and plugin options marked native_flag.
    native: bool = False
    # Natively it concerns the whole run (allocator statistics at exit, output
    # processing): a native backend then runs every benchmark in one process.
    whole_run: bool = False
    # It may differ between the points of a sweep or suite (a module, an
    # input, a compile flag); every other option applies to the whole run.
    per_point: bool = False
    # Its value holds {AXIS} placeholders the option's plugin evaluates per
    # benchmark (--counter flops=2*{bs}*512): a sweep leaves them as they are.
    axis_expression: bool = False
    # An output of the whole run (--benchmark_out, --benchmark_save,
    # --benchmark_report): a point measured in a process of its own
    # (--point_index) runs with its default, so only the run itself acts on it.
    run_output: bool = False
    # It only says how the module is made (--module, --compile_flag): points
    # whose modules have the same bytes are one measurement whatever it says.
    module_source: bool = False
    # The backend capabilities of which one is needed to honour the option
    # (any of them; empty: every backend does): given to a backend with none,
    # it is refused in one line (ireebench.backend.check_capabilities).
    requires: tuple[str, ...] = ()
    # Its value may be left out (a boolean flag: --benchmark_save): then an
    # argument after it that starts with "-" is not its value (click's rule).
    optional_value: bool = False


_UNSET = object()


class Config:
    """Options of the run, the plugin manager, its streams and its state.

    ``getoption(name)`` returns the parsed value of ``--name`` (core options
    and options added by plugins alike). ``stdout``/``stderr`` are where the
    run writes (the Python API's streams, or the process's); everything
    ireebench and its built-in plugins print goes there.
    """

    def __init__(self, pm, options: dict, runtime_flags: list[str], argv: list[str],
                 stdout=None, stderr=None, option_specs: dict | None = None):
        self.pm = pm
        self.options = options
        # Option name -> OptionSpec (empty for commands that build their own).
        self.option_specs = MappingProxyType(dict(option_specs or {}))
        self._backend = None
        self.runtime_flags = runtime_flags
        self.argv = argv
        # The ireebench command line that makes this run, subcommand included
        # (a point that needs a process of its own reruns it).
        self.command_line = list(argv)
        self.stdout = stdout if stdout is not None else sys.stdout
        self.stderr = stderr if stderr is not None else sys.stderr
        self.stash = Stash()
        # One id per run, so streamed rows from several runs can be told apart.
        self.run_id = uuid.uuid4().hex
        self._cleanups: list = []
        self._scratch: Scratch | None = None
        # (line, exit code) for each fail_run, in call order.
        self.failures: list[tuple[str, int]] = []
        self.min_time = parse_min_time(options.get("benchmark_min_time") or "0.5s")
        self.min_warmup_time = _warmup_seconds(options.get("benchmark_min_warmup_time") or "0")
        self.benchmark_context = parse_benchmark_context(options.get("benchmark_context"))
        pattern = options.get("benchmark_filter") or ""
        self.filter = _compile_filter(pattern) if pattern not in ("", ".", "all") else None
        self.negative_filter = False
        if pattern.startswith("-") and self.filter is not None:
            self.filter = _compile_filter(pattern[1:])
            self.negative_filter = True
        # A point of a sweep or suite (see for_point); the run's own config
        # has no parameters and is its own run.
        self.params: dict = {}
        self.name_prefix = ""
        self.point_label = ""
        self.run = self
        self.inifile = None  # the configuration file (ireebench._inifile), set by the CLI

    def getini(self, name: str):
        """The setting ``name`` of the configuration file, declared with
        ``parser.addini`` (its default when the file does not set it)."""
        if self.run.inifile is None:
            raise ValueError(f"no configuration setting named {name!r} (parser.addini)")
        return self.run.inifile.get(name)

    def for_point(self, options: dict, runtime_flags: list[str], params: dict,
                  name_prefix: str = "", label: str = "") -> Config:
        """The configuration of one point of this run.

        ``options`` and ``runtime_flags`` are the point's (its command line,
        parsed); ``params`` the axis values that name its rows (numbers as
        numbers); ``name_prefix`` prefixes its rows (a suite entry's
        ``name``); ``label`` says where it comes from in messages (``bs=4``,
        ``entry 2 of suite.toml``). Everything else is the run's: the plugin
        manager, streams, ``stash``, ``run_id``, the backend, cleanups and
        the scratch directory.
        """
        point = Config.__new__(Config)
        point.__dict__.update(self.run.__dict__)
        point.options = dict(options)
        point.runtime_flags = list(runtime_flags)
        point.min_time = parse_min_time(options.get("benchmark_min_time") or "0.5s")
        warmup = options.get("benchmark_min_warmup_time") or "0"
        point.min_warmup_time = _warmup_seconds(warmup)
        point.params = dict(params)
        point.name_prefix = name_prefix
        point.point_label = label
        point.run = self.run
        return point

    @property
    def backend(self):
        """The :class:`ireebench.Backend` that ``--backend`` selects (asked once).

        Features check its capabilities (``config.backend.has(...)``, see
        :mod:`ireebench.backend`); an unknown name is a one-line error.
        """
        if self._backend is None:
            self._backend = select_backend(self)
        return self._backend

    def getoption(self, name: str, default=_UNSET):
        """The value of ``--name``; an undeclared name raises ValueError (as
        pytest's) in a run, unless a ``default`` is given, which it then returns."""
        if name not in self.options:
            # A command's own Config may hold only what it parsed: a declared name is None.
            if default is not _UNSET or not self.option_specs or name in self.option_specs:
                return None if default is _UNSET else default
            close = difflib.get_close_matches(name, self.options, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(f"no option named {name!r}{hint}")
        value = self.options[name]
        return (None if default is _UNSET else default) if value is None else value

    def selects(self, benchmark_name: str) -> bool:
        """--benchmark_filter, matched against ``BM_fn/process_time/real_time``."""
        if self.filter is None:
            return True
        return bool(self.filter.search(benchmark_name)) != self.negative_filter

    def fail_run(self, message: str, exit_code: int = EXIT_FAILED) -> None:
        """Fails the run (pytest's ``session.shouldfail``): it goes on, every report
        and output file is completed, then ``ireebench: run failed: plugin 'NAME':
        MESSAGE`` is printed and the run exits ``exit_code`` (the highest one given,
        unless a usage or plugin error, or a signal, ended the run). Callable from
        any hook of a benchmark run (a subcommand has its own exit code);
        ``exit_code`` is 1 (a failed run's) or 4 to 125."""
        if type(exit_code) is not int or exit_code not in RUN_FAILURE_CODES:
            raise ValueError(f"fail_run: exit code {exit_code!r} is not 1 or 4 to 125 (0 is "
                             "success; 2, 3 and 126 and up mean something else)")
        frames, frame = [], sys._getframe(1)
        while frame is not None:  # the caller's plugin: its innermost frame
            frames.append(frame.f_code.co_filename)
            frame = frame.f_back
        plugin = plugin_of_files(self.pm, reversed(frames))
        self.run.failures.append(((f"plugin {plugin!r}: " if plugin else "") + one_line(message),
                                  exit_code))

    # --- the run's resources, released by the core when the run ends -------

    def add_cleanup(self, function) -> None:
        """Calls ``function()`` when the run ends (last added, first called),
        after ``ireebench_sessionfinish``, also after an error or a signal."""
        self.run._cleanups.append(function)

    def scratch_dir(self) -> Path:
        """A private (0700) directory for this run, removed when it ends (or, the run
        killed first, by a later run's: :mod:`ireebench._scratch`)."""
        run = self.run
        if run._scratch is None:
            run._scratch = Scratch("ireebench-")
        return Path(run._scratch.path)

    def release(self) -> None:
        """Runs the cleanups, then removes the scratch directory.

        Every cleanup runs even when one raises; the first exception is
        raised at the end. (A point's config releases its run.)
        """
        if self.run is not self:
            self.run.release()
            return
        error = None
        while self._cleanups:
            function = self._cleanups.pop()
            name = getattr(function, "__qualname__", None) or type(function).__name__
            try:
                # A plugin's cleanup that raises is a plugin error naming it.
                guarded(self.pm, f"cleanup {name}", function)
            except BaseException as exc:  # noqa: BLE001 - re-raised below
                error = error or exc
        self.remove_scratch()
        if error is not None:
            raise error

    def remove_scratch(self) -> None:
        """Removes the scratch directory (and forgets it); nothing else."""
        if self._scratch is not None:
            self._scratch.remove()
            self._scratch = None


__all__ = [
    "Config", "OptionSpec"
]
