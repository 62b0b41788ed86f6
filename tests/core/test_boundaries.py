"""Built-in plugins never import each other (issue 38).

``plugins/X.py`` and ``plugins/X/`` are the plugin X; read from the source
(AST), so an import inside a function counts too. What one plugin needs of
another's work goes through a hook, a documented stash key or a library of
``ireebench.lib`` (core/lib/), so that ``-p no:X`` means what it says.
"""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import ROOT

PLUGINS = ROOT / "plugins"


def _imported(path: Path, root: Path, node: ast.AST) -> list[str]:
    """The dotted modules (and ``module.name`` for ``from``) an import node names."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    module = node.module or ""
    if node.level:  # relative: resolved against the file's package
        package = ["ireebench", "plugins", *path.relative_to(root).parts[:-1]]
        base = package[:len(package) - (node.level - 1)]
        module = ".".join(base + ([module] if module else []))
    return [module] + [f"{module}.{alias.name}" for alias in node.names]


def cross_plugin_imports(root: Path = PLUGINS) -> list[str]:
    """``file:line imports module`` for each import of another plugin's module."""
    found = []
    for path in sorted(root.rglob("*.py")):
        me = path.relative_to(root).parts[0].removesuffix(".py")  # plugins/X.py, plugins/X/
        if me == "__init__":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            for name in _imported(path, root, node):
                parts = name.split(".")
                if parts[:2] == ["ireebench", "plugins"] and len(parts) > 2 and parts[2] != me:
                    found.append(f"{path.relative_to(root.parent)}:{node.lineno} imports {name}")
                    break
    return found


def test_no_builtin_plugin_imports_another():
    assert cross_plugin_imports() == []


def test_the_scan_finds_a_cross_import(tmp_path):
    """The checker itself: absolute, relative and nested imports are all found."""
    root = tmp_path / "plugins"
    (root / "alpha").mkdir(parents=True)
    (root / "alpha" / "__init__.py").write_text("from ..beta import thing\n")
    (root / "alpha" / "own.py").write_text("from . import other\nfrom .sub import x\n")
    (root / "gamma.py").write_text("def f():\n    import ireebench.plugins.alpha.own\n")
    (root / "beta.py").write_text("from ireebench.plugins import beta, kinds\n")
    assert cross_plugin_imports(root) == [
        "plugins/alpha/__init__.py:1 imports ireebench.plugins.beta",
        "plugins/beta.py:1 imports ireebench.plugins.kinds",
        "plugins/gamma.py:2 imports ireebench.plugins.alpha.own",
    ]


CORE = ROOT / "core"


def _is_core_module(dotted: str, core: Path) -> bool:
    """Whether ``ireebench.a.b`` is a module or package of core/ (not a name inside one)."""
    path = core.joinpath(*dotted.split(".")[1:])
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _public(dotted: str) -> bool:
    """Public: no ``_x`` component, and a public module or a submodule of a public package."""
    from ireebench._public import PUBLIC_MODULES
    parts = dotted.split(".")
    if any(p.startswith("_") and p not in ("__init__", "__main__") for p in parts):
        return False
    return any(dotted == m or (m != "ireebench" and dotted.startswith(m + ".")) for m in PUBLIC_MODULES)


def nonpublic_core_imports(root: Path = PLUGINS, core: Path = CORE) -> list[str]:
    """``file:line imports module`` for each import of a core module that is not public."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = _imported(path, root, node)
            if isinstance(node, ast.ImportFrom) and all(
                    _is_core_module(name, core) and _public(name) for name in names[1:]):
                names = names[1:]  # `from ireebench.lib import statistics`: the public module
            for name in names:
                if (name.split(".")[:2] != ["ireebench", "plugins"] and name.startswith("ireebench")
                        and _is_core_module(name, core) and not _public(name)):
                    found.append(f"{path.relative_to(root.parent)}:{node.lineno} imports {name}")
    return found


def test_plugins_import_only_the_public_api():
    assert nonpublic_core_imports() == []


def test_rank_imports_only_the_public_api():
    """rank is the litmus: it would work moved into its own distribution."""
    assert nonpublic_core_imports(PLUGINS / "rank") == []


def test_the_scan_finds_a_private_import(tmp_path):
    root, core = tmp_path / "plugins", tmp_path / "core"
    (core / "lib").mkdir(parents=True)
    for name in ("errors.py", "unlisted.py", "_measure.py", "_x.py", "lib/__init__.py",
                 "lib/outputs.py"):
        (core / name).write_text("")
    (root / "alpha").mkdir(parents=True)
    (root / "alpha" / "a.py").write_text(
        "from ireebench import errors, unlisted, _measure as measure, Run\n"
        "from ireebench.lib.outputs import v\nfrom ireebench.lib import outputs\n"
        "def f():\n    import ireebench._x\n")
    assert nonpublic_core_imports(root, core) == [
        "plugins/alpha/a.py:1 imports ireebench.unlisted",  # not in PUBLIC_MODULES
        "plugins/alpha/a.py:1 imports ireebench._measure",
        "plugins/alpha/a.py:5 imports ireebench._x",
    ]
