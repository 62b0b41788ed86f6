"""The public API: what the examples and the docs' code may import, and how it changes.

The public modules are listed once, in ``ireebench._public.PUBLIC_MODULES``;
their ``__all__`` is the public surface. Every example (``examples/**/*.py``)
and every Python block of ``docs/*.md`` and ``README.md`` is parsed (AST):
each ``import``/``from ... import`` of ireebench, and each attribute read
through an imported ``ireebench`` module, must name a public module and a
name of its ``__all__`` (docs/plugins.md, "Stability").
"""

from __future__ import annotations

import ast
import importlib
import re
import sys
import types
import warnings

import ireebench
import pytest
from conftest import ROOT
from ireebench._public import PUBLIC_MODULES, deprecated_names

PUBLIC = {name: set(importlib.import_module(name).__all__) for name in PUBLIC_MODULES}
BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def _sources() -> list[tuple[str, str]]:
    """(where, Python source) of every example file and docs code block."""
    found = [(str(path.relative_to(ROOT)), path.read_text())
             for path in sorted((ROOT / "examples").rglob("*.py"))]
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = path.read_text()
        for match in BLOCK.finditer(text):
            line = text.count("\n", 0, match.start()) + 2
            found.append((f"{path.relative_to(ROOT)}:{line}", match.group(1)))
    return found


def _public_name(module: str, name: str) -> bool:
    return name in PUBLIC.get(module, ()) or f"{module}.{name}" in PUBLIC


def violations(source: str) -> list[str]:
    """What ``source`` takes from ireebench that is not public."""
    tree = ast.parse(source)
    found, aliases = [], {}  # local name -> the public module it is
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] != "ireebench":
                    continue
                if alias.name not in PUBLIC:
                    found.append(f"import {alias.name}")
                elif alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    aliases["ireebench"] = "ireebench"
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and \
                node.module.split(".")[0] == "ireebench":
            for alias in node.names:
                if node.module not in PUBLIC or not _public_name(node.module, alias.name):
                    found.append(f"from {node.module} import {alias.name}")
                elif f"{node.module}.{alias.name}" in PUBLIC:
                    aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        chain, inner = [node.attr], node.value
        while isinstance(inner, ast.Attribute):
            chain.insert(0, inner.attr)
            inner = inner.value
        if not isinstance(inner, ast.Name) or inner.id not in aliases:
            continue
        module = aliases[inner.id]
        for attribute in chain:
            if f"{module}.{attribute}" in PUBLIC:
                module = f"{module}.{attribute}"
                continue
            if not _public_name(module, attribute):
                found.append(f"{module}.{attribute}")
            break
    return list(dict.fromkeys(found))  # a chain is walked from each of its attributes


def test_the_checker_finds_internal_names():
    measure, session, runner = "ireebench._measure", "ireebench._session", "ireebench._runner"
    assert sorted(violations(f"from {measure} import new_run\n"
                             f"import {session}\n"
                             f"import ireebench\n{runner}.run_config\n"
                             "from ireebench.plugins.store import location\n")) == sorted([
        f"from {measure} import new_run", "from ireebench.plugins.store import location",
        f"import {session}", runner])
    assert violations("import ireebench\nfrom ireebench import backend\n"
                      "from ireebench.backend import forwarded_argv\n"
                      "ireebench.run([]); ireebench.backend.require; backend.aggregates\n") == []


@pytest.mark.parametrize("where, source", _sources(), ids=lambda value: value.split("\n")[0])
def test_examples_and_docs_use_public_names_only(where, source):
    assert violations(source) == [], where


def test_every_public_name_exists():
    for module_name, names in PUBLIC.items():
        module = importlib.import_module(module_name)
        missing = [name for name in names if not hasattr(module, name)]
        assert missing == [], module_name


def test_the_docs_list_the_public_modules():
    """docs/plugins.md's "Stability" lists exactly PUBLIC_MODULES."""
    text = (ROOT / "docs" / "plugins.md").read_text()
    section = text.split("## Stability", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"^\| `(ireebench[\w.]*)` \|", section, re.MULTILINE))
    assert listed == set(PUBLIC_MODULES)


def test_a_renamed_public_name_warns_for_a_minor_version(monkeypatch):
    module = types.ModuleType("ireebench_renamed_demo")
    module.__getattr__ = deprecated_names(module.__name__, {
        "old_run": ("ireebench.run", "0.3")})
    monkeypatch.setitem(sys.modules, module.__name__, module)
    with pytest.warns(ireebench.IreebenchDeprecationWarning,
                      match=r"ireebench_renamed_demo.old_run is deprecated and will be removed "
                            r"in ireebench 0\.3: use ireebench\.run"):
        assert module.old_run is ireebench.run
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError, match="has no attribute 'other'"):
            module.other  # noqa: B018


def test_the_public_modules_are_importable_without_loading_a_plugin():
    """The list is the contract: each module imports on its own."""
    for name in PUBLIC_MODULES:
        assert importlib.import_module(name).__all__, name


def test_the_plugin_authors_page_points_at_public_names():
    """docs/plugins.md's prose names only public modules and names (its "Stability"
    section lists what is internal, on purpose)."""
    text = (ROOT / "docs" / "plugins.md").read_text()
    before, _, after = text.partition("## Stability")
    prose = before + after.split("\n## ", 1)[-1] if "\n## " in after else before
    named = set(re.findall(r"`(ireebench(?:\.\w+)+)", prose))
    internal = []
    for dotted in sorted(named):
        parts = dotted.split(".")
        module = "ireebench"
        for part in parts[1:]:
            if f"{module}.{part}" in PUBLIC:
                module = f"{module}.{part}"
                continue
            if not _public_name(module, part):
                internal.append(dotted)
            break
    assert internal == []
