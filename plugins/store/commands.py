"""``ireebench history`` and ``ireebench store import|export``: the store's subcommands.

``history [REGEX]`` lists, per stored benchmark whose name the regex finds,
its runs oldest first: when, run id, machine and devices, module and its
sha256 (those of the benchmark's own rows: a sweep over devices or a suite
of modules differs by row), commit and branch, tags, the median of its
repetitions with the median's 95 % interval, repetitions and status
(``--json`` for machines). ``--changes``
lists instead where each benchmark's level shifted
(:mod:`ireebench.comparison.changes`), machine by machine, with the
commits around each shift.

``store import FILES...`` stores Google Benchmark JSON reports (ireebench's
or the native tool's: a team's archive), each once; ``store export
[REFERENCE]`` writes a stored run's report back, byte for byte as it was
written.
"""

from __future__ import annotations

import datetime
import json
import os
import re

import click
from ireebench.comparison.changes import RunValues, change_points, commit_of, judge_change
from ireebench.comparison.inputs import METRICS, benchmark_file, read_report
from ireebench.errors import UsageError
from ireebench.outfiles import RunFiles, check_output_path, write_to
from ireebench.results import TIME_UNIT_MULTIPLIER
from ireebench.stats import median, median_ci
from tabulate import tabulate

from .location import open_store, register_store, storage_url
from .records import IMPORTED, record_of_report
from .references import PREFIX, is_stored, parse_filter, parse_reference

DEFAULT_LIMIT = 20
CONFIDENCE = 0.95

_STORAGE = click.option("--benchmark_storage", "benchmark_storage", default="",
                        envvar="IREEBENCH_STORAGE", show_envvar=True, metavar="URL",
                        help="The results store (default: $XDG_DATA_HOME/ireebench/"
                             "results.sqlite); a path, sqlite:///PATH or postgresql://...")
_WHERE = click.option("--where", "where", multiple=True, metavar="KEY=VALUE",
                      help="Only runs with KEY=VALUE (branch, commit, host, status, "
                           "fingerprint, or a --benchmark_context key); repeatable.")


def _time(seconds: float | None, unit: str) -> str:
    if seconds is None:
        return "-"
    value = seconds * TIME_UNIT_MULTIPLIER.get(unit, 1.0)
    return f"{value:.4g} {unit}"


def _when(run_time: float) -> str:
    return datetime.datetime.fromtimestamp(run_time).strftime("%Y-%m-%d %H:%M:%S")


def _module(summary) -> str:
    """``matmul.vmfb 1a6b23038c37``: the module a benchmark's rows measured."""
    name = os.path.basename(summary.module)
    return " ".join(part for part in (name, summary.module_sha256[:12]) if part) or "-"


def _tags(tags: dict) -> str:
    return ",".join(f"{key}={value}" for key, value in sorted(tags.items()))


def _point(summary, rows: list[dict], name: str, metric: str) -> dict:
    """One run of one benchmark: its median, the median's interval, its count."""
    benchmarks = benchmark_file(summary.label, {"benchmarks": rows}).benchmarks
    found = benchmarks.get(name)
    values, source = found.values(metric) if found else ([], "")
    interval = median_ci(values, CONFIDENCE) if len(values) > 1 else None
    return {
        "summary": summary,
        "time_unit": found.time_unit if found else "ns",
        "values": values,
        "source": source,
        "median": median(values) if values else None,
        "low": interval[0] if interval else None,
        "high": interval[1] if interval else None,
        "errors": list(found.errors) if found else [],
    }


def _readable_points(series: dict, metric: str, stderr) -> dict[str, list[dict]]:
    """Each benchmark's points; a stored run whose rows ``compare`` cannot read (stored
    before imports were checked) is left out, one warning line per run."""
    points: dict[str, list[dict]] = {}
    unreadable: dict[str, str] = {}
    for name, runs in series.items():
        for summary, rows in runs:
            try:
                point = _point(summary, rows, name, metric)
            except UsageError as exc:
                unreadable.setdefault(summary.label, str(exc).split(": ", 2)[-1])
                continue
            points.setdefault(name, []).append(point)
    for label, reason in unreadable.items():
        stderr.write(f"ireebench: warning: history: {label}: left out, its rows cannot be "
                     f"read: {reason}\n")
    return points


def _run_json(point: dict) -> dict:
    summary = point["summary"]
    return {
        "run_id": summary.run_id, "date": summary.date, "status": summary.status,
        "source": summary.source, "host": summary.host_name, "machine": summary.machine,
        "fingerprint": summary.fingerprint, "module": summary.module,
        "module_sha256": summary.module_sha256, "commit": summary.git_commit,
        "branch": summary.git_branch, "tags": summary.tags,
        "median_seconds": point["median"], "low_seconds": point["low"],
        "high_seconds": point["high"], "repetitions": len(point["values"]),
        "time_unit": point["time_unit"], "errors": point["errors"],
    }


def _history_table(points: list[dict]) -> str:
    rows = []
    for point in points:
        summary, unit = point["summary"], point["time_unit"]
        interval = (f"[{_time(point['low'], unit)}, {_time(point['high'], unit)}]"
                    if point["low"] is not None else "-")
        rows.append([_when(summary.run_time), summary.run_id[:12], summary.machine,
                     _module(summary), summary.git_commit[:10] or "-", summary.git_branch or "-",
                     _tags(summary.tags) or "-", _time(point["median"], unit), interval,
                     str(len(point["values"])) if point["values"] else "failed",
                     summary.status])
    return tabulate(rows, headers=["When", "Run", "Machine", "Module", "Commit", "Branch",
                                   "Tags", "Median", "95% CI", "Reps", "Status"],
                    tablefmt="simple", disable_numparse=True)


def _commit(summary) -> str:
    """The commit a stored run measured, read as ``ireebench report`` reads it: the
    user's ``git_commit`` tag (``--benchmark_context``) first, then the checkout's."""
    return commit_of({**summary.tags, "ireebench_git_commit": summary.git_commit})


def _changes(name: str, points: list[dict]) -> list[dict]:
    """The change points of a benchmark, machine by machine (never across machines),
    each judged as ``ireebench report`` judges it
    (:func:`ireebench.comparison.changes.judge_change`)."""
    found = []
    by_machine: dict[str, list[dict]] = {}
    for point in points:
        if point["values"] and point["median"] and point["median"] > 0 \
                and point["summary"].status == "complete":
            by_machine.setdefault(point["summary"].fingerprint, []).append(point)
    for series in by_machine.values():
        runs = [RunValues(p["summary"].label, p["values"]) for p in series]
        for change in change_points(runs):
            before, after = series[change.index - 1]["summary"], series[change.index]["summary"]
            judged = judge_change(name, runs, change)
            found.append({
                "benchmark": name, "machine": after.machine, "time_unit": series[0]["time_unit"],
                "before_run": before.run_id, "before_commit": _commit(before),
                "after_run": after.run_id, "after_commit": _commit(after),
                "date": after.date, "run_time": after.run_time,
                "before_seconds": change.before, "after_seconds": change.after,
                "change": judged.change, "change_low": judged.low,
                "change_high": judged.high, "pvalue": judged.pvalue,
                "verdict": judged.verdict,
                "runs_before": change.runs_before, "runs_after": change.runs_after})
    return found


def _percent(value) -> str:
    return "-" if value is None else f"{value * 100:+.2f}%"


def _changes_table(changes: list[dict]) -> str:
    rows = []
    for c in changes:
        unit = c["time_unit"]
        commits = f"{c['before_commit'][:10] or '?'} -> {c['after_commit'][:10] or '?'}"
        runs = f"{c['before_run'][:12]} -> {c['after_run'][:12]}"
        pvalue = "n/a" if c["pvalue"] is None else (
            "<0.0001" if c["pvalue"] < 1e-4 else f"{c['pvalue']:.4f}")
        interval = ("n/a" if c["change_low"] is None else
                    f"[{_percent(c['change_low'])}, {_percent(c['change_high'])}]")
        rows.append([c["benchmark"], c["machine"], _when(c["run_time"]), runs, commits,
                     f"{_time(c['before_seconds'], unit)} ({c['runs_before']} runs)",
                     f"{_time(c['after_seconds'], unit)} ({c['runs_after']} runs)",
                     _percent(c["change"]), interval, pvalue, c["verdict"]])
    return tabulate(rows, headers=["Benchmark", "Machine", "When", "Runs", "Commits", "Before",
                                   "After", "Change", "95% CI", "p-value", "Verdict"],
                    tablefmt="simple", disable_numparse=True)


def _pattern(text: str):
    try:
        return re.compile(text)
    except (re.error, RecursionError) as exc:
        raise UsageError(f"history: {text}: invalid regex: {exc}") from None


@click.command("history")
@click.argument("pattern", required=False, default="", metavar="[REGEX]")
@_WHERE
@click.option("--json", "as_json", is_flag=True, help="JSON for machines.")
@click.option("--changes", is_flag=True,
              help="List where each benchmark's level shifted (PELT change points, machine "
                   "by machine) and the commits around each shift.")
@click.option("--limit", type=click.IntRange(min=0), default=DEFAULT_LIMIT, show_default=True,
              help="Show each benchmark's last N runs (0: all).")
@click.option("--metric", type=click.Choice(METRICS), default="real_time", show_default=True)
@_STORAGE
@click.pass_obj
def history(invocation, pattern, where, as_json, changes, limit, metric, benchmark_storage):
    """The stored runs of each benchmark whose name REGEX finds (all without one): when,
    run id, machine and devices, module and sha256 (the benchmark's own), commit, branch,
    tags, the median of the repetitions and its 95% interval. See docs/store.md."""
    regex = _pattern(pattern)
    filters = tuple(parse_filter(text) for text in where)
    results = open_store(storage_url(benchmark_storage), create=False, write=False)
    try:
        series = results.benchmarks(filters, regex.search, 0 if changes else limit)
    finally:
        results.close()
    out = invocation.stdout
    points = _readable_points(series, metric, invocation.stderr)
    if not points:
        shown = f" matching {pattern!r}" if pattern else ""
        raise UsageError(f"history: no stored benchmark{shown} in {results.display}"
                         + (f" with {'&'.join(f'{k}={v}' for k, v in filters)}"
                            if filters else ""))
    if changes:
        found = {name: _changes(name, runs) for name, runs in points.items()}
        if as_json:
            out.write(json.dumps({"storage": results.display, "metric": metric, "benchmarks": [
                {"name": name, "changes": found[name]} for name in points]}, indent=2) + "\n")
            return 0
        listed = [change for name in points for change in found[name]]
        out.write("Change points (PELT on the runs' log medians, the noise learned from the "
                  "runs; machine by machine), each judged by ireebench compare's engine between "
                  "the two levels' pooled repetitions, as ireebench report judges it\n\n")
        out.write((_changes_table(listed) if listed else
                   f"No change point in {len(points)} benchmark(s).") + "\n")
        return 0
    if as_json:
        out.write(json.dumps({"storage": results.display, "metric": metric, "benchmarks": [
            {"name": name, "runs": [_run_json(p) for p in runs]}
            for name, runs in points.items()]}, indent=2) + "\n")
        return 0
    blocks = [f"{name}\n{_history_table(runs)}" for name, runs in points.items()]
    out.write("\n\n".join(blocks) + "\n")
    return 0


@click.group("store")
def store():
    """The results store (docs/store.md): import Google Benchmark JSON reports, export
    a stored run back to JSON."""


def _report_text(path: str) -> tuple[str, dict]:
    """A report file's text (up to the end of its JSON) and the parsed report, checked
    as ``compare`` reads it (every row: a name, a time unit, finite times), so that
    nothing stored is a run no command can read."""
    try:
        report = read_report(path)
        benchmark_file(path, report)
    except UsageError as exc:
        raise UsageError(str(exc).replace("compare: ", "store import: ", 1)) from None
    with open(path, "rb") as handle:
        text = handle.read().decode("utf-8", errors="replace")
    stripped = text.lstrip()
    _, end = json.JSONDecoder().raw_decode(stripped)
    if stripped[end:].strip():  # text a tool printed after the report
        text = stripped[:end] + "\n"
    return text, report


@store.command("import")
@click.argument("files", nargs=-1, required=True, metavar="FILES...")
@_STORAGE
@click.pass_obj
def import_reports(invocation, files, benchmark_storage):
    """Store Google Benchmark JSON reports (ireebench's or iree-benchmark-module's), each
    once: a file already stored is named, not stored again."""
    loaded = [(path, *_report_text(path)) for path in files]  # every file read first
    target = open_store(storage_url(benchmark_storage), create=True)
    try:
        for path, text, report in loaded:
            record = record_of_report(text, report, source=IMPORTED,
                                      source_path=os.path.abspath(path))
            run_id, stored = target.save(record)
            if stored:
                invocation.stdout.write(f"stored {path} as run {run_id[:12]} "
                                        f"({len(record.rows)} rows)\n")
            else:
                invocation.stdout.write(f"{path}: already stored as run {run_id[:12]}\n")
    finally:
        target.close()
    return 0


@store.command("export")
@click.argument("reference", required=False, default="stored:latest", metavar="[RUN]")
@click.option("--out", "-o", "out", default="", metavar="FILE",
              help="Write to FILE (atomically) instead of stdout.")
@_WHERE
@_STORAGE
@click.pass_obj
def export_report(invocation, reference, out, where, benchmark_storage):
    """Write a stored run's JSON report (RUN: an id, stored:latest, stored:latest~N ...;
    default stored:latest), byte for byte as --benchmark_out wrote it."""
    parsed = parse_reference(reference if is_stored(reference) else PREFIX + reference)
    if parsed.selector == "history":
        raise UsageError("store export: stored:history names several runs: export one")
    url = storage_url(benchmark_storage)
    if out:
        check_output_path("out", out)
        files = RunFiles()
        register_store(files, url)
        files.add_output(f"--out={out}", out)  # never over the store it reads
    filters = parsed.filters + tuple(parse_filter(text) for text in where)
    source = open_store(url, create=False, write=False)
    try:
        _, text = source.run(parsed.selector, filters, offset=parsed.offset,
                             reference=parsed.text)
    finally:
        source.close()
    if not out:
        invocation.stdout.write(text)
        invocation.stdout.flush()
        return 0
    write_to(out, "out", text)
    return 0
