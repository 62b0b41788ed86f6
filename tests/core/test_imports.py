"""The import graph of core/ and plugins/: no cycle, and every import at module level.

Read from the source (AST), so an import hidden inside a function counts
like any other: a cycle cannot hide there, and there is nothing to hide.

The exceptions are :data:`LAZY_IMPORTS`: a costly dependency (the IREE
runtime and numpy, importlib.metadata, an extra of pyproject.toml) is
imported at the top of modules of its own (the heavy modules), and the
few functions that first need one of them import that module inside the
function, so that ``--help``, the subcommands and the loading of the
plugins never pay for it. Each entry names the module, the module it
imports lazily, and the packages that keeps out; the import must be
exactly that, loading the plugins must not load those packages, and no
module a run or ``--help`` imports may reach them through module-level
imports (checked below). The public packages whose names are imported on
first use (PEP 562, ``ireebench._public.lazy_names``) are
:data:`LAZY_NAMES`, and the built-ins' subcommands whose code is imported
when they run (``ireebench._cli.commands.DeferredCommand``) are checked in
``tests/cli/test_startup.py`` with what each command imports.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT
from ireebench._pluginmanager import BUILTIN_PLUGINS

PACKAGES = {"core": "ireebench", "plugins": "ireebench.plugins"}



def _modules() -> dict[str, Path]:
    found = {}
    for directory, package in PACKAGES.items():
        for path in sorted((ROOT / directory).rglob("*.py")):
            parts = list(path.relative_to(ROOT / directory).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join([package, *parts])] = path
    return found


MODULES = _modules()

# module -> {module it imports inside a function: the packages that keeps out of
# startup} (an ireebench module, or a third-party one imported where it is used).
# The documented way to add a lazy import: add it here.
RUNTIME = ("iree", "numpy")  # iree.runtime imports numpy
LAZY_IMPORTS = {
    # The IREE runtime: a run imports it when it first reads a module's functions
    # (its discovery) or hands the runtime a flag ireebench does not own.
    "ireebench._discovery": {"ireebench._session": RUNTIME},
    "ireebench._cli.command": {"ireebench._session": RUNTIME},
    # Parsing --input and element types needs neither (a kind's plugin imports them
    # at startup: ireebench.parse_inputs); making values and device buffers does.
    "ireebench.inputs": {"numpy": RUNTIME, "iree.runtime": RUNTIME},
    "ireebench.dtypes": {"numpy": RUNTIME, "iree.runtime": RUNTIME},
    # The built-in plugins' work with the runtime, imported when a run first needs it:
    # the in-process backend's run, the kinds' inputs and batches, output processing.
    "ireebench.plugins.runtime_backend": {"ireebench.protocol": RUNTIME},
    "ireebench.plugins.kinds": {"ireebench.plugins.kinds.batches": RUNTIME},
    "ireebench.plugins.output_processing": {"ireebench.plugins.output_processing.process":
                                            RUNTIME},
    # The run's machinery (the worker, the report hub, the modules' copies), imported
    # when a run starts: --help and the subcommands that measure nothing never need it.
    "ireebench._cli.commands": {"ireebench._runner": ("ireebench._runner", "ireebench._worker",
                                                    "ireebench.reporting.hub")},
    # Several .mlir modules compiled at once: a thread pool (concurrent.futures, logging).
    "ireebench.plugins.mlir_modules": {"ireebench.plugins.mlir_modules.parallel":
                                       ("concurrent.futures", "logging")},
    # The U test's interval sorts the pairwise differences of large samples with numpy.
    "ireebench.comparison.utest": {"ireebench.comparison.pairs": ("numpy",)},
    # importlib.metadata (email, zipfile, csv), only when a distribution declares
    # ireebench entry points or a version is asked for.
    "ireebench._installed": {"ireebench._distributions": ("importlib.metadata",)},
    # The results store's database code is the `store` extra (SQLAlchemy, psycopg):
    # opened only by --benchmark_save, `ireebench history`, stored: references.
    "ireebench.plugins.store.location": {"ireebench.plugins.store.database": ("sqlalchemy",
                                                                             "psycopg")},
    # The report's drawing is the `report` extra (matplotlib): only when a report is made.
    "ireebench.plugins.report.render": {"ireebench.plugins.report.build": ("matplotlib",)},
    # The report's reading of a run's rows (3 dataclasses, the comparison's inputs: ~3 ms
    # of every start) only when a run with --benchmark_report ends.
    "ireebench.plugins.report": {"ireebench.plugins.report.data": ("ireebench.plugins.report.data",)},
    # The rank plugin's measuring modules (its coordinator, workers and benchmark_module:
    # the IREE runtime and numpy), and the run it measures in, only when a ranking runs
    # or its Python API is used; tests/builtin_plugins/test_rank.py checks the modules.
    # On a cluster's node, a worker of one device (--rank_serve) is a ranking's command
    # line too; the ranking on a cluster (--executor=ray) is the `ray` extra.
    "ireebench.plugins.rank.command": {"ireebench.plugins.rank.schedule": RUNTIME,
                                       "ireebench.plugins.rank.serve": RUNTIME},
    "ireebench.plugins.rank.schedule": {"ireebench.plugins.rank.remote": ("ray",)},
    # The Ray executor's driver is the `ray` extra: only when a run measures on a cluster;
    # what the nodes are shipped (2 dataclasses) only with --ray_node_files.
    "ireebench.plugins.ray_executor": {"ireebench.lib.ray_cluster.cluster": ("ray",),
                                       "ireebench.lib.ray_cluster.shipping":
                                       ("ireebench.lib.ray_cluster.shipping",)},
    # The serving plugins' work with the IREE runtime and numpy, imported when a run first
    # measures a scenario or builds an LLM workload.
    "ireebench.plugins.scenarios": {"ireebench.plugins.scenarios.measurement": RUNTIME,
                                    # a scenario's row (~1 ms of every start): its run's.
                                    "ireebench.plugins.scenarios.summary":
                                        ("ireebench.plugins.scenarios.summary",)},
    # A comparison against a history (~3 ms of `ireebench compare a.json b.json`) only
    # when its old side is one.
    "ireebench.plugins.compare.run": {"ireebench.comparison.history":
                                      ("ireebench.comparison.history",)},
    # The compare reporters (textwrap, ~2 ms of every start) when a command asks for them.
    "ireebench.plugins.compare": {"ireebench.plugins.compare.reporters":
                                  ("ireebench.plugins.compare.reporters",)},
    "ireebench.plugins.llm": {"ireebench.plugins.llm.generation": RUNTIME,
                              # --llm_config's reading (~1.5 ms of every start): an LLM run's.
                              "ireebench.plugins.llm.service_config":
                                  ("ireebench.plugins.llm.service_config",)},
    # statistics (~3 ms of every start) only when a run computes the LLM rows.
    "ireebench.plugins.llm.metrics": {"statistics": ("statistics",)},
    # Standard modules that every start paid for (issue 39: ~15 ms together with their own
    # imports) though only a run, an error or a rare path uses them: hashlib (OpenSSL)
    # where a digest is taken, tempfile (random, shutil) where a scratch or temporary file
    # is made, ctypes for a libc call, subprocess (locale) where a process is started,
    # traceback (linecache, tokenize) only for the debug traceback of a plugin's error.
    "ireebench._cli": {"traceback": ("traceback",)},
    "ireebench._measure": {"traceback": ("traceback",)},
    "ireebench._context": {"ctypes": ("ctypes",)},
    # The machine's description (platform, 2 dataclasses): a run's, or a native report's
    # read back; the JSON reporter that every start imports writes only what it is given.
    "ireebench.lib.gbench_json": {"ireebench._context": ("ireebench._context",)},
    "ireebench.plugins.allocator": {"ctypes": ("ctypes",)},
    "ireebench._scratch": {"tempfile": ("tempfile",), "shutil": ("shutil",)},
    "ireebench._modules": {"tempfile": ("tempfile",), "hashlib": ("hashlib",)},
    "ireebench.outfiles": {"tempfile": ("tempfile",)},
    "ireebench.lib.compile_cache": {"tempfile": ("tempfile",), "hashlib": ("hashlib",)},
    "ireebench.comparison.machine": {"hashlib": ("hashlib",)},
    "ireebench.lib.ray_cluster.shipping": {"hashlib": ("hashlib",)},
    "ireebench.plugins.mlir_modules.key": {"hashlib": ("hashlib",)},
    "ireebench.plugins.store.records": {"hashlib": ("hashlib",)},
    "ireebench.plugins.local_executor": {"subprocess": ("subprocess",)},
    # The store's git state and records (5 dataclasses, ~3 ms of every start) only
    # when a saved run reports its context and ends; the comparison's inputs (2 more)
    # when stored:history is read.
    "ireebench.plugins.store": {"ireebench.plugins.store.git": ("ireebench.plugins.store.git",),
                                "ireebench.plugins.store.records":
                                    ("ireebench.plugins.store.records",),
                                "ireebench.comparison.inputs": ("ireebench.comparison.inputs",)},
}
# The packages kept out of startup: never reached from it but through LAZY_IMPORTS.
KEPT_OUT = tuple(sorted({package for lazy in LAZY_IMPORTS.values()
                         for packages in lazy.values() for package in packages}))
# Public packages whose names are imported on first use (PEP 562): the package ->
# the packages (and engine modules) an import of the package keeps out.
LAZY_NAMES = {
    # ireebench.RUNTIME_NAMES: the input and signature helpers, element_type.
    "ireebench": RUNTIME,
    # The comparison engine (its statistics, verdicts, history), for compare only.
    "ireebench.comparison": ("ireebench.comparison.judgement", "ireebench.comparison.model",
                             "ireebench.comparison.utest", "statistics"),
    # The rank plugin: its command line, typed results and benchmark_module (the
    # runtime) only for a ranking or its Python API.
    "ireebench.plugins.rank": (*RUNTIME, "ireebench.plugins.rank.command",
                               "ireebench.plugins.rank.results",
                               "ireebench.plugins.rank.api"),
}


def kept_out(name: str, packages=KEPT_OUT) -> bool:
    """Whether the module ``name`` is one of ``packages`` or inside one."""
    return any(name == package or name.startswith(package + ".") for package in packages)


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _resolve(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if not _is_package(module):
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(module: str, top_level_only: bool = False,
             everything: bool = False) -> list[tuple[str, ast.AST]]:
    """(imported ireebench module, node) for each import in ``module`` (``everything``:
    other packages' too)."""
    tree = ast.parse(MODULES[module].read_text())
    found = []
    for node in (tree.body if top_level_only else ast.walk(tree)):
        if isinstance(node, ast.Import):
            found += [(alias.name, node) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, node)
            for alias in node.names:
                # `from pkg import submodule` imports the submodule.
                candidate = f"{target}.{alias.name}"
                found.append((candidate if candidate in MODULES else target, node))
    return [(name, node) for name, node in found if everything or name in MODULES]


def _graph() -> dict[str, set[str]]:
    return {module: {name for name, _ in _imports(module) if name != module}
            for module in MODULES}


def test_the_graph_was_read():
    graph = _graph()
    assert "ireebench._cli.command" in graph and "ireebench.plugins.kinds" in graph
    assert "ireebench.errors" in graph["ireebench._cli.command"]


def test_no_import_cycle():
    graph = _graph()
    state: dict[str, int] = {}  # 1 visiting, 2 done
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                cycle = stack[stack.index(target):] + [target]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if target not in state:
                visit(target)
        stack.pop()
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module)


def _lazily_allowed(module: str, node: ast.AST) -> bool:
    allowed = LAZY_IMPORTS.get(module, {})
    targets = [name for name, found in _imports(module, everything=True)
               if found.lineno == node.lineno]
    return bool(targets) and all(target in allowed for target in targets)


def test_every_import_is_at_module_level():
    """No import inside a function or class (to dodge a cycle, or otherwise), except
    the documented lazy imports of optional extras (:data:`LAZY_IMPORTS`)."""
    nested = []
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text())
        top = {id(node) for node in tree.body}
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in top:
                if isinstance(node, ast.ImportFrom) and node.module == "__future__":
                    continue
                if _lazily_allowed(module, node):
                    continue
                nested.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert nested == []


def test_lazy_imports_stay_out_of_a_plain_start():
    """Loading every built-in plugin (what --help and every run do) loads none of the
    packages the lazy imports keep out (the runtime, numpy, the extras)."""
    code = ("import sys, ireebench._pluginmanager as pm; "
            "pm.build_plugin_manager(pm.PluginSelection(), autoload=False); "
            f"print([m for m in {list(KEPT_OUT)!r} if m in sys.modules])")
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True).stdout.strip()
    assert found == "[]"


@pytest.mark.parametrize("package", sorted(LAZY_NAMES))
def test_lazy_names_are_imported_on_first_use(package):
    """Importing a package of LAZY_NAMES loads none of what it keeps out; every name
    of its ``__all__`` is then there (``dir()`` lists them all)."""
    code = (f"import sys, importlib; module = importlib.import_module({package!r}); "
            f"print([m for m in sys.modules if any(m == p or m.startswith(p + '.') "
            f"for p in {list(LAZY_NAMES[package])!r})]); "
            "print(sorted(set(module.__all__) - set(dir(module)))); "
            "print([n for n in module.__all__ if getattr(module, n, None) is None])")
    lines = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True).stdout.splitlines()
    assert lines == ["[]", "[]", "[]"]


def test_the_input_helpers_import_neither_numpy_nor_the_runtime():
    """What a kind imports for its inputs (docs/plugins.md's example) costs nothing at
    startup: the helpers import numpy and the runtime when they make values."""
    code = ("import sys; from ireebench import (declared_input_types, element_type, "
            "parse_inputs, parse_tensor_type, prepare_inputs); "
            "parse_tensor_type('tensor<2xf32>'); element_type('f32'); "
            "print([m for m in ('numpy', 'iree.runtime') if m in sys.modules])")
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True).stdout.strip()
    assert found == "[]"


def test_core_never_imports_the_plugins():
    """core/ is mechanism: it finds built-in plugins by name, never by import."""
    graph = _graph()
    for module, targets in graph.items():
        if module.startswith("ireebench.plugins"):
            continue
        assert not [t for t in targets if t.startswith("ireebench.plugins")], module


def test_every_package_is_in_pyproject():
    """A sub-package missing from pyproject.toml works installed editable, not from a wheel."""
    text = (ROOT / "pyproject.toml").read_text()
    listed = set(text.split("packages = [", 1)[1].split("]", 1)[0].replace('"', "").split())
    listed = {name.strip(",") for name in listed}
    packages = {name for name in MODULES if _is_package(name)}
    assert packages == listed


def test_the_lazy_imports_exist():
    """Every allowance names a real nested import (none outlives its reason)."""
    for module, targets in LAZY_IMPORTS.items():
        tree = ast.parse(MODULES[module].read_text())
        top = {id(node) for node in tree.body}
        for target in targets:
            nested = [node for name, node in _imports(module, everything=True) if name == target
                      and id(node) not in top]
            assert nested, (module, target)


def _startup_modules() -> set[str]:
    """The ireebench modules ``import ireebench``, the CLI and the built-in plugins reach
    through module-level imports (a package's parents included)."""
    start = ["ireebench", "ireebench._cli"] + list(BUILTIN_PLUGINS.values())
    seen, stack = set(), list(start)
    while stack:
        module = stack.pop()
        if module in seen:
            continue
        seen.add(module)
        parent = module.rpartition(".")[0]
        if parent in MODULES:
            stack.append(parent)
        stack.extend(name for name, _ in _imports(module, top_level_only=True) if name in MODULES)
    return seen


def test_heavy_packages_stay_out_of_startup():
    """No module that a run or --help imports (the core, the built-in plugins)
    reaches the runtime, numpy, importlib.metadata or an extra's library through
    module-level imports: only through LAZY_IMPORTS."""
    seen = _startup_modules()
    for module in sorted(seen):
        for name, _ in _imports(module, top_level_only=True, everything=True):
            assert not kept_out(name), \
                f"{module} imports {name} at startup: import it lazily (LAZY_IMPORTS)"
    assert "ireebench.plugins.report" in seen and "ireebench.plugins.kinds" in seen
    heavy = {target for lazy in LAZY_IMPORTS.values() for target in lazy}
    assert not seen & heavy, "a lazily imported module is imported at startup"
    assert "ireebench.plugins.report.charts" not in seen
