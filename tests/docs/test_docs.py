"""The docs stay in step with the code.

* docs/plugins.md's hook reference is generated from core/hookspecs.py
  (phase, name, signature, call order, first-result) and from the hooks the
  built-in plugins declare: the test renders it and compares; on a mismatch
  the message holds the tables to paste.
* docs/architecture.md names every module of core/ and plugins/, and every
  module it names exists.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re

from conftest import ROOT
from ireebench import hookspecs
from ireebench._pluginmanager import BUILTIN_PLUGINS, ESSENTIAL_PLUGINS

BEGIN, END = "<!-- hook reference: begin -->", "<!-- hook reference: end -->"


def _phases() -> dict[str, str]:
    """Hook name -> the phase banner above it in hookspecs.py."""
    lines = (ROOT / "core" / "hookspecs.py").read_text().splitlines()
    phases, phase = {}, ""
    for index, line in enumerate(lines):
        if line.startswith("# ") and index and lines[index - 1].startswith("# ---"):
            phase = line[2:].split(":", 1)[0].rstrip(".")
        match = re.match(r"def (ireebench_\w+)\(", line)
        if match:
            phases[match.group(1)] = phase
    return phases


def hook_names() -> list[str]:
    tree = ast.parse((ROOT / "core" / "hookspecs.py").read_text())
    return [node.name for node in tree.body
            if isinstance(node, ast.FunctionDef) and node.name.startswith("ireebench_")]


def _summary(function) -> str:
    summary = inspect.getdoc(function).split("\n\n", 1)[0].replace("\n", " ")
    return re.sub(r":\w+:`", "`", summary)  # Sphinx roles read as code


def _result(function) -> str:
    options = function.ireebench_spec
    result = "first non-None" if options.get("firstresult") else "all"
    if options.get("historic"):
        result += ", historic"
    if hookspecs.is_per_plugin(function):
        result += ", per plugin (no wrappers)"
    return result


class _SpecHolders:
    """Stands in for the plugin manager in a plugin's ireebench_addhooks."""

    def __init__(self):
        self.holders = []

    def add_hookspecs(self, holder):
        self.holders.append(holder)


def builtin_declared_hooks() -> dict[str, list]:
    """Built-in plugin name -> the hook spec functions its ireebench_addhooks declares."""
    declared = {}
    for name, module_name in BUILTIN_PLUGINS.items():
        addhooks = getattr(importlib.import_module(module_name), "ireebench_addhooks", None)
        if addhooks is None:
            continue
        recorder = _SpecHolders()
        addhooks(pluginmanager=recorder)
        declared[name] = [getattr(holder, attr) for holder in recorder.holders
                          for attr in dir(holder)
                          if getattr(getattr(holder, attr), "ireebench_spec", None) is not None]
    return declared


def render_hook_reference() -> str:
    """The hook tables of docs/plugins.md: the core's, from hookspecs.py, then the
    hooks the built-in plugins declare."""
    phases = _phases()
    rows = ["| phase | hook | result | what for |", "| --- | --- | --- | --- |"]
    for name in hook_names():
        function = getattr(hookspecs, name)
        rows.append(f"| {phases[name]} | `{name}{inspect.signature(function)}` | "
                    f"{_result(function)} | {_summary(function)} |")
    rows += ["", "Declared by built-in plugins (`ireebench_addhooks`):", "",
             "| plugin | hook | result | what for |", "| --- | --- | --- | --- |"]
    for plugin, functions in builtin_declared_hooks().items():
        for function in functions:
            rows.append(f"| {plugin} | `{function.__name__}{inspect.signature(function)}` | "
                        f"{_result(function)} | {_summary(function)} |")
    return "\n".join(rows)


def test_plugins_md_hook_reference_is_generated_from_the_specs():
    text = (ROOT / "docs" / "plugins.md").read_text()
    found = text.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    expected = render_hook_reference()
    assert found == expected, f"paste this between the markers of docs/plugins.md:\n{expected}"


def test_every_hook_has_a_docstring():
    for name in hook_names():
        assert (getattr(hookspecs, name).__doc__ or "").strip(), name


def _modules() -> set[str]:
    return {str(path.relative_to(ROOT)) for directory in ("core", "plugins")
            for path in (ROOT / directory).rglob("*.py")}


def test_architecture_names_every_module_and_only_real_ones():
    text = (ROOT / "docs" / "architecture.md").read_text()
    named = set(re.findall(r"`((?:core|plugins)/[\w/]+\.py)`", text))
    assert sorted(_modules() - named) == [], "modules missing from docs/architecture.md"
    assert sorted(named - _modules()) == [], "docs/architecture.md names missing modules"


def test_architecture_lists_the_builtin_plugins():
    text = (ROOT / "docs" / "architecture.md").read_text()
    for name, module in BUILTIN_PLUGINS.items():
        path = "plugins/" + module.removeprefix("ireebench.plugins.").replace(".", "/")
        assert f"| {name} |" in text, name
        assert f"`{path}.py`" in text or f"`{path}/__init__.py`" in text, path
    for name in ESSENTIAL_PLUGINS:
        assert f"| {name} | essential |" in text, name


def test_readme_commands_name_real_files():
    readme = (ROOT / "README.md").read_text()
    assert "examples/matmul.mlir" in readme and (ROOT / "examples" / "matmul.mlir").is_file()
    ci = (ROOT / ".ci" / "run").read_text()
    test_command = next(line for line in readme.splitlines() if "pytest" in line)
    assert test_command.strip() in ci
