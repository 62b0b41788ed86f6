"""A command that measures nothing imports nothing heavy (issue 27.3).

Each cheap command runs through the real CLI in process (``ireebench.run``)
in a fresh interpreter, one after the other, and after each the heavy
packages it does not need must be absent from ``sys.modules``: a
deterministic check of what ``import ireebench``, the loading of every
built-in plugin and the command itself import, not a timing (the timing is
``benchmarks/startup.py``, docs/performance.md). What each command may
import, and why:

- ``--help``, ``--version``, ``plugins``, ``compare`` (10 repetitions: the
  U test in plain Python), ``merge``: none of them;
- ``history``: SQLAlchemy (the store is a database), nothing else;
- ``report``: matplotlib, which imports numpy (it draws), nothing else.

A watcher on ``sys.meta_path`` records who first imported each heavy
package (the frames of the import), so a failure names the file and line,
and the plugin that file belongs to. The loaded plugins are listed (the
built-ins, all of them: a plugin merged later is checked without changing
this test). ``history`` and ``report`` run in separate interpreters: each
imports what the other must not.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import _env
from ireebench._pluginmanager import BUILTIN_PLUGINS

# The comparison engine (statistics, the U test) is for the commands that compare.
ENGINE = "ireebench.comparison.model"
HEAVY = ("iree.runtime", "numpy", "sqlalchemy", "matplotlib", "ray", ENGINE)
# What each command needs of HEAVY (the module docstring says why).
NEEDS = {"history": {"sqlalchemy", ENGINE}, "report": {"matplotlib", "numpy", ENGINE},
         "compare": {ENGINE}, "merge": {ENGINE}}
# Each command's exit status: compare finds b.json's regressions (1).
EXIT_CODES = {"compare": 1}


# Runs each command line of argv[1] (JSON) in process, printing one JSON line: the
# loaded plugins (name -> file) and, per command, its exit status, its stderr, the
# HEAVY packages then imported and who imported each first.
PROBE = r"""
import io, json, sys, traceback

HEAVY = %(heavy)r
first_import = {}


class Watcher:
    '''Notes the frames that import a HEAVY package first; finds nothing itself.'''

    def find_spec(self, name, path=None, target=None):
        if name in HEAVY and name not in first_import:
            frames = [frame for frame in traceback.extract_stack()[:-1]
                      if not frame.filename.startswith("<frozen")]
            first_import[name] = [f"{frame.filename}:{frame.lineno}" for frame in frames[-6:]]
        return None


sys.meta_path.insert(0, Watcher())
import ireebench

plugins, results = {}, []
for argv in json.loads(sys.argv[1]):
    stdout, stderr = io.StringIO(), io.StringIO()
    code = ireebench.run(argv, stdout=stdout, stderr=stderr).exit_code
    if argv == ["plugins", "--json"] and code == 0:
        plugins = {entry["name"]: entry["path"] for entry in json.loads(stdout.getvalue())}
    results.append({"argv": argv, "exit_code": code, "stderr": stderr.getvalue()[-2000:],
                    "imported": {name: first_import.get(name, ["?"])
                                 for name in HEAVY if name in sys.modules}})
print(json.dumps({"plugins": plugins, "results": results}))
"""


def probe(commands: list[list[str]]) -> dict:
    """What a fresh interpreter imported after each of ``commands`` (run in order)."""
    proc = subprocess.run([sys.executable, "-c", PROBE % {"heavy": HEAVY},
                           json.dumps(commands)], capture_output=True, text=True,
                          env=_env(), timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def owner(frames: list[str], plugins: dict[str, str]) -> str:
    """The loaded plugin whose code is in ``frames`` (innermost first), or ''."""
    folders = {name: path.rpartition("/")[0] + "/" if path.endswith("/__init__.py") else path
               for name, path in plugins.items() if path}
    for frame in reversed(frames):
        for name, folder in folders.items():
            if frame.startswith(folder):
                return name
    return ""


@pytest.fixture(scope="module")
def inputs(compile_mlir, ireebench, tmp_path_factory):
    """A real report of two benchmarks (a.json, and b.json three times slower: compare
    finds regressions), its two halves as shards, and a SQLite store holding the run."""
    work = tmp_path_factory.mktemp("startup")
    module = compile_mlir("startup_two_functions")
    store = work / "results.sqlite"
    result = ireebench(f"--module={module}", "--device=local-sync",
                       "--benchmark_min_time=10x", "--benchmark_repetitions=10",
                       f"--benchmark_out={work / 'a.json'}", "--benchmark_save",
                       f"--benchmark_storage={store}")
    assert result.returncode == 0, result.stderr
    report = json.loads((work / "a.json").read_text())
    slower = json.loads(json.dumps(report))
    for row in slower["benchmarks"]:
        for key in ("real_time", "cpu_time"):
            row[key] = row.get(key, 0) * 3
    (work / "b.json").write_text(json.dumps(slower))
    for index, function in enumerate(("first", "second")):
        shard = {"context": report["context"],
                 "benchmarks": [row for row in report["benchmarks"]
                                if row["name"].startswith(f"BM_{function}/")]}
        assert shard["benchmarks"]
        (work / f"shard{index}.json").write_text(json.dumps(shard))
    return work, store


@pytest.fixture(scope="module")
def probed(inputs) -> dict:
    """Every cheap command's imports: history last in one interpreter, report alone."""
    work, store = inputs
    cheap = [["--help"], ["--version"], ["plugins", "--json"],
             ["compare", str(work / "a.json"), str(work / "b.json")],
             ["merge", str(work / "shard0.json"), str(work / "shard1.json"),
              "-o", str(work / "merged.json")],
             ["history", f"--benchmark_storage={store}"]]
    first = probe(cheap)
    second = probe([["report", str(work / "a.json"), "-o", str(work / "r.html")]])
    return {"plugins": first["plugins"], "results": first["results"] + second["results"]}


def test_every_builtin_plugin_is_loaded(probed):
    """The check below covers every built-in plugin (those merged later too)."""
    assert sorted(probed["plugins"]) == sorted(BUILTIN_PLUGINS)


@pytest.mark.parametrize("command", ["--help", "--version", "plugins", "compare", "merge",
                                     "history", "report"])
def test_a_cheap_command_imports_nothing_heavy_it_does_not_need(probed, command):
    result = next(r for r in probed["results"] if r["argv"][0] == command)
    assert result["exit_code"] == EXIT_CODES.get(command, 0), result["stderr"]
    allowed = NEEDS.get(command, set())
    unneeded = {name: frames for name, frames in result["imported"].items()
                if name not in allowed}
    blame = []
    for name, frames in unneeded.items():
        plugin = owner(frames, probed["plugins"])
        by = f"the plugin {plugin!r}" if plugin else "ireebench's core"
        blame.append(f"{name} imported by {by}: " + " <- ".join(reversed(frames)))
    assert not blame, (f"`ireebench {' '.join(result['argv'])}` (plugins loaded: "
                       f"{', '.join(sorted(probed['plugins']))}):\n" + "\n".join(blame))
    # What the command does need, it did import (the check sees real imports).
    assert allowed <= set(result["imported"]), result["imported"]


def test_version_reads_the_versions_importlib_metadata_finds_without_it():
    """``--version`` reads the IREE packages' versions from their metadata directories
    as importlib.metadata finds them, without its import (~10 ms of the command)."""
    code = ("import io, sys, ireebench; out = io.StringIO(); "
            "ireebench.run(['--version'], stdout=out); "
            "print('importlib.metadata' in sys.modules); "
            "import importlib.metadata as m; print(out.getvalue().splitlines()[1:3]); "
            "print([f'{n} {m.version(n)}' for n in ('iree-base-runtime', 'iree-base-compiler')])")
    lines = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, env=_env()).stdout.splitlines()
    assert lines[0] == "False"
    assert lines[1] == lines[2]
