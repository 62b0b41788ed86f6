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
