"""``ireebench merge A.json B.json ... -o ALL.json``: join shard reports into one.

Reads each Google Benchmark JSON report (a file, or what a plugin resolves
through ``ireebench_load_reports``, such as ``stored:RUN_ID``) and writes
one report with every benchmark, in the order of the files. Each row is
kept as it was written (every field, ``params`` included); only
``family_index`` and ``per_family_instance_index`` are numbered again over
the merged report (a family per function, an instance per point), as one
run would have numbered them. The context is the first file's; where the
files' contexts differ (the host, the date, the shard), ``merged_from``
keeps each file's values, ``iree_devices`` and ``iree_modules`` list every
file's (as one run of all the points would), and a row that does not say
its devices, module or host itself (:data:`~ireebench.comparison.machine.ROW_KEYS`)
gets its file's. A benchmark name in two files is an error naming
both; an empty file (a shard left with nothing to measure, which writes an
empty ``--benchmark_out`` as Google Benchmark does) adds nothing.
"""

from __future__ import annotations

import json
import os

import click
from ireebench import names
from ireebench.commands import mark_reads_reports
from ireebench.comparison.inputs import load_reports
from ireebench.comparison.machine import ROW_KEYS, combined_provenance
from ireebench.errors import UsageError
from ireebench.outfiles import register_inputs, register_output, write_to
from ireebench.reporting.humanize import finite_json

HELP = """Join Google Benchmark JSON reports (the shards of a sweep) into one.

Rows keep every field; family indices are numbered again; contexts that differ are kept per
file under "merged_from". A benchmark in two files is an error.
"""


def _is_empty_file(reference: str) -> bool:
    try:
        return os.path.isfile(reference) and os.path.getsize(reference) == 0
    except OSError:
        return False


def _family(run_name: str) -> tuple[str, str]:
    """(prefix, function) of a row's name: its family across points."""
    prefix = run_name.split(names.PREFIX, 1)[0] if names.PREFIX in run_name else ""
    return prefix, names.function_of(run_name)


def _run_as_a_whole(context: dict, contexts: list[dict]) -> None:
    """The merged context's devices and modules: every file's, in file order."""
    devices, modules = combined_provenance(contexts)
    if devices:
        context["iree_devices"] = devices
    if len(modules) > 1 or "iree_modules" in context:
        context["iree_modules"] = modules


def merge_reports(reports: list[tuple[str, dict]]) -> dict:
    """One report of all ``(label, report)`` pairs (see the module docstring)."""
    if not reports:
        raise UsageError("merge: every input is empty; nothing to merge")
    owners: dict[str, int] = {}  # benchmark name -> the index of its report
    benchmarks = []
    contexts = [(label, report.get("context") if isinstance(report.get("context"), dict)
                 else {}) for label, report in reports]
    # The row keys the files' contexts differ in: a row says its own file's.
    own_keys = [key for key in ROW_KEYS
                if len({json.dumps(c.get(key), sort_keys=True) for _, c in contexts}) > 1]
    for number, (label, report) in enumerate(reports):
        entries = report.get("benchmarks")
        if not isinstance(entries, list):
            raise UsageError(f"merge: {label}: not a Google Benchmark JSON report "
                             '(no "benchmarks" list)')
        mine = set()
        for entry in entries:
            if not isinstance(entry, dict):
                raise UsageError(f"merge: {label}: a benchmark that is not a JSON object")
            name = str(entry.get("run_name") or entry.get("name") or "")
            if name in owners and owners[name] != number:
                raise UsageError(f"merge: {name} is in both {reports[owners[name]][0]} and "
                                 f"{label}")
            mine.add(name)
            row = dict(entry)
            file_context = contexts[number][1]
            for key in own_keys:
                if key not in row and key in file_context:
                    row[key] = file_context[key]
            benchmarks.append(row)
        for name in mine:
            owners[name] = number
    families: dict[tuple[str, str], list] = {}
    for entry in benchmarks:
        run_name = str(entry.get("run_name") or entry.get("name") or "")
        family = families.setdefault(_family(run_name), [len(families), []])
        if run_name not in family[1]:
            family[1].append(run_name)
        if "family_index" in entry:
            entry["family_index"] = family[0]
        if "per_family_instance_index" in entry:
            entry["per_family_instance_index"] = family[1].index(run_name)
    context = dict(contexts[0][1])
    keys = []
    for _, other in contexts:
        keys += [key for key in other if key not in keys]
    differing = [key for key in keys
                 if len({json.dumps(c.get(key), sort_keys=True) for _, c in contexts}) > 1]
    if differing and len(contexts) > 1:
        context["merged_from"] = [{"file": label, **{key: c.get(key) for key in differing
                                                     if key in c}}
                                  for label, c in contexts]
    _run_as_a_whole(context, [c for _, c in contexts])
    return {"context": context, "benchmarks": benchmarks}


@mark_reads_reports  # it takes the readers' options: a store's --benchmark_storage ...
@click.command("merge", help=HELP)
@click.argument("reports", nargs=-1, required=True, metavar="A.json B.json ...")
@click.option("-o", "--output", "output", required=True, metavar="ALL.json",
              help="The merged report (written atomically; - for stdout).")
@click.pass_obj
def command(config, reports, output):
    """``ireebench merge``, registered by the plugin as a DeferredCommand (each run
    gets a copy with the options of the report readers, as ``compare`` has)."""
    return merge_files(config, reports, output)


def merge_files(config, reports, output) -> int:
    """``ireebench merge A.json B.json ... -o ALL.json``."""
    register_inputs(config, reports)
    if output != "-":
        register_output(config, "output", output)  # never over an input or the store
    loaded = []
    for reference in reports:
        if _is_empty_file(reference):
            continue
        try:
            loaded.extend(load_reports(config, reference))
        except UsageError as exc:  # the reader says "compare:"; this is merge
            raise UsageError("merge: " + str(exc).removeprefix("compare: ")) from None
    merged = merge_reports(loaded)
    # A native report's NaN or Infinity becomes null: the merged file is valid JSON.
    text = json.dumps(finite_json(merged), indent=2, allow_nan=False) + "\n"
    if output == "-":
        config.stdout.write(text)
        return 0
    write_to(output, "output", text)
    return 0
