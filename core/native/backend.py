"""A native Google Benchmark tool as the whole measurement backend.

Used by ``--backend=native`` (iree-benchmark-module) and ``ireebench
replay`` (iree-benchmark-replay): the tool measures, its JSON report
(``--benchmark_out``, the console table on stdout left as the tool prints
it, so that it measures as a user runs it; ``--benchmark_format=json`` when
all benchmarks run in one process; the table is never parsed) becomes
:class:`~ireebench.results.Run` objects, and those go through the run's
:class:`~ireebench.reporting.hub.ReportHub` like in-process results, so the
reporters, the streaming hook and the Python API see the same kind of rows.

Finished work is never lost: the benchmarks are listed first
(``--benchmark_list_tests``, which also checks the flags before anything is
measured), then each runs in a process of its own and is reported as soon
as it finishes. A process that dies (a crash, ``kill -9``) is that
benchmark's error row and the others still run (one that refuses to go on,
printing an IREE status, is a one-line error as usual); Ctrl-C or SIGTERM
stops the current process and keeps what finished. (With
``--benchmark_enable_random_interleaving`` all benchmarks run in one
process, since interleaving needs them together; so they do when the run
asks the native tool for something of the whole run — a device profiling
bundle or device statistics, allocator statistics at exit, output
processing — which one process per benchmark would split or repeat.)
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Mapping
from pathlib import Path

from .. import names
from .._context import gather
from ..errors import UsageError
from ..lib.gbench_json import context_from_benchmark_json, runs_by_benchmark, split_benchmark_json
from ..names import ere_escape
from ..outfiles import refuse_unmeasured
from ..results import Run
from ..stats import EXTRA_STATISTICS, STATISTICS, compute_aggregates
from ..workload import FunctionInfo, Workload
from .tools import list_benchmarks, native_error_line, native_status_line, run_tool, tool_path


def named_workload(config, function: str, time_unit: str = "") -> Workload:
    """A :class:`Workload` known by its function name only, for a native run's hooks.

    It carries the function name, ``selected`` and the batch flags; the
    native tool owns the VM function and the invocation kind
    (``function.vm_function`` and ``kind`` are None).
    """
    return Workload(
        name=names.family_name(function),
        function=FunctionInfo(name=function, vm_function=None, reflection={}, cconv=""),
        kind=None,
        batch_size=config.getoption("batch_size"),
        concurrency=config.getoption("batch_concurrency"),
        time_unit=time_unit,
        selected=bool(config.getoption("function")),
    )


def aggregates(config, repetitions: list[Run], gbench: bool = True) -> list[Run]:
    """Aggregates of one benchmark's repetitions: Google Benchmark's four (unless
    ``gbench=False``, when the tool reported them), then the run's selected statistics."""
    extra = list(config.stash.get(EXTRA_STATISTICS, []))
    if not gbench and not extra:
        return []
    return compute_aggregates(repetitions, (list(STATISTICS) if gbench else []) + extra)


# The console reporter's context on stderr (the JSON report holds it too).
_CONSOLE_CONTEXT = re.compile(r"\d{4}-\d\d-\d\dT\S+|Running .*|Run on .*|CPU Caches:|  L\d .*"
                              r"|Load Average: .*|\*\*\*WARNING\*\*\* .*")


def _without_console_context(stderr: str) -> str:
    lines = (stderr or "").splitlines(keepends=True)
    count = 0
    while count < len(lines) and _CONSOLE_CONTEXT.fullmatch(lines[count].rstrip("\n")):
        count += 1
    return "".join(lines[count:])


class NativeRun:
    """One native backend run: lists the benchmarks, runs and reports each.

    :param tool: the native tool (``iree-benchmark-module``,
        ``iree-benchmark-replay``).
    :param args: its flags, without ``--benchmark_filter`` (given as
        ``user_filter``) and without output flags.
    :param what: how errors name this run (``--backend=native``, ``replay: FILE``).
    :param batch_size: logical iterations per batch, recorded on the runs.
    :param context_extra: entries added to the report context; a callable
        value is called when the context is reported, after the tool accepted
        its input and measured the first benchmark (the sha256 of a replay
        capture of gigabytes: a file the tool refuses is never read for it,
        and no hashing runs while a benchmark is measured).
    """

    def __init__(self, config, tool: str, args: list[str], *, what: str, user_filter: str = "",
                 batch_size: int = 1, context_extra: Mapping | None = None,
                 one_process: bool = False):
        self.config = config
        self.tool = tool
        self.args = list(args)
        self.what = what
        self.user_filter = user_filter
        self.batch_size = batch_size
        self.context_extra = dict(context_extra or {})
        # All benchmarks in one native process (see the module docstring).
        self.one_process = one_process or bool(
            config.getoption("benchmark_enable_random_interleaving"))
        self.groups: list[list[Run]] = []
        self.trailing_output: list[str] = []
        self.listed: list[str] = []

    def _filter_args(self, pattern: str) -> list[str]:
        return [f"--benchmark_filter={pattern}"] if pattern else []

    def list(self) -> list[str]:
        """The benchmark names the tool would run; its failure is one UsageError."""
        names_, error = list_benchmarks([*self.args, *self._filter_args(self.user_filter)],
                                        self.tool)
        if error:
            raise UsageError(f"{self.what}: {self.tool} failed: {error}")
        return names_

    def run(self, hub) -> int:
        """Measures and reports; returns the exit code. ``hub=None`` lists the names."""
        config = self.config
        listed = self.list()
        if hub is None:
            config.stdout.write("".join(f"{name}\n" for name in listed))
            return 0
        if not listed:
            # Google Benchmark's behaviour: no context, no rows, exit 0.
            pattern = self.user_filter or "."
            config.stderr.write(f"Failed to match any benchmarks against regex: {pattern}\n")
            refuse_unmeasured(config)
            return 0
        self.listed = listed
        if self.one_process:
            batches = [(None, self.user_filter)]
        else:
            batches = [(name, f"^{ere_escape(name)}$") for name in listed]
        exit_code = 0
        for index, (name, pattern) in enumerate(batches):
            code = self._run_one(hub, name, pattern, index)
            exit_code = max(exit_code, code)
        # What the tool printed after its reports (output processing) comes
        # after ours are complete, as the native tool prints it.
        hub.finalize()
        if self.trailing_output:
            config.stdout.write("".join(self.trailing_output))
            config.stdout.flush()
        return exit_code

    def _run_one(self, hub, name: str | None, pattern: str, index: int) -> int:
        config = self.config
        args = [*self.args, *self._filter_args(pattern)]
        if self.one_process:  # output processing prints after the report: both on stdout
            proc = run_tool(self.tool, ["--benchmark_format=json", *args])
            report, rest = split_benchmark_json(proc.stdout)
        else:
            # The console table on stdout, as a user runs the tool, the JSON in a file: the
            # format of stdout alone moves the tool's heap into another layout, in which
            # glibc stops trimming it (0.2 ms against 0.077 on examples/matmul.mlir), so
            # --backend=native would not give the tool's own number.
            with tempfile.TemporaryDirectory(prefix="ireebench-native-") as scratch:
                out = Path(scratch) / "report.json"
                proc = run_tool(self.tool, [*args, f"--benchmark_out={out}",
                                            "--benchmark_out_format=json"])
                report, rest = split_benchmark_json(out.read_text() if out.exists() else "")
            rest = ""  # stdout is the console table: ireebench prints its own
            proc.stderr = _without_console_context(proc.stderr)
        if report is None:
            if name is None or native_status_line(proc.stderr) is not None:
                # The tool refused to go on, saying why (a flag, an input).
                raise UsageError(f"{self.what}: {self.tool} failed: "
                                 f"{native_error_line(proc.stderr, proc.returncode)}")
            # It died (a crash, a signal): that benchmark's error row.
            self._report_context(hub, None)
            error = Run(name=name.split("/", 1)[0], run_name=name,
                        function=names.function_of(name), error_occurred=True,
                        error_message=f"{self.tool} failed: "
                                      f"{native_error_line(proc.stderr, proc.returncode)}",
                        family_index=index, time_unit=config.getoption("time_unit") or "ms",
                        batch_size=self.batch_size)
            self.groups.append([error])
            hub.report([error])
            return 1
        self._report_context(hub, report)
        exit_code = 1 if proc.returncode else 0
        unit = config.getoption("time_unit")
        for offset, runs in enumerate(runs_by_benchmark(report, self.batch_size)):
            for run in runs:
                run.family_index = index + offset
                if unit:  # Runs keep seconds: the unit only changes how they are shown.
                    run.time_unit = unit
            if any(run.error_occurred for run in runs):
                exit_code = 1
            # The statistics the run selected, after the tool's own aggregates.
            runs = runs + aggregates(config, [r for r in runs if r.run_type == "iteration"],
                                     gbench=False)
            self.groups.append(runs)
            hub.report(runs)
        if rest:
            self.trailing_output.append(rest)
        if proc.stderr and (proc.returncode == 0 or report is not None):
            config.stderr.write(proc.stderr)
            config.stderr.flush()
        return exit_code

    def _report_context(self, hub, report: dict | None) -> None:
        if hub.context is not None:
            return
        if report is not None:
            context = context_from_benchmark_json(report, self.config.benchmark_context)
        else:  # the tool died before reporting: describe this machine ourselves
            context = gather(str(tool_path(self.tool)), self.config.benchmark_context)
        context.extra.update({key: value() if callable(value) else value
                              for key, value in self.context_extra.items()})
        # The hub sizes the name column from the listed names and the plugins'
        # rows, then calls ireebench_report_context.
        hub.report_context(context, self.listed)
