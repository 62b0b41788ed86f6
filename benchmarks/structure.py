"""The structure's numbers (issue 38), for a closing note's before and after.

Plugin pairs that import each other, plugin files importing core modules
outside ``PUBLIC_MODULES`` (``ireebench.lib.*`` counts as public), the hooks
of core/hookspecs.py called from core/ (by name in a string or as
``.hook.NAME``), and the lines of core + plugins. No timing: the numbers of
a checkout. Usage: ``python benchmarks/structure.py [CHECKOUT]``.
"""

import ast
import collections
import pathlib
import re
import sys

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")


def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    parts = ["ireebench", *parts[1:]] if parts[0] == "core" else ["ireebench", *parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(dotted: str) -> bool:
    parts = dotted.split(".")[1:]
    path = ROOT.joinpath(*(parts if parts[:1] == ["plugins"] else ["core", *parts]))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def imports(path: pathlib.Path):
    me = module_name(path)
    package = me if path.name == "__init__.py" else me.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            subs = [f"{module}.{alias.name}" for alias in node.names
                    if module.startswith("ireebench") and is_module(f"{module}.{alias.name}")]
            yield from subs or [module]


def main() -> None:
    public_text = (ROOT / "core" / "_public.py").read_text()
    public = ast.literal_eval(re.search(r"PUBLIC_MODULES = (\(.*?\n\))", public_text, re.DOTALL)[1])

    def is_public(dotted: str) -> bool:
        return dotted.startswith("ireebench.lib") or any(
            dotted == name or (name != "ireebench" and dotted.startswith(name + "."))
            for name in public)

    pairs, files, internal = set(), set(), collections.Counter()
    plugin_files = sorted(ROOT.glob("plugins/**/*.py"))
    for path in plugin_files:
        me = module_name(path)
        mine = me.split(".")[2] if me.count(".") >= 2 else None
        for dotted in imports(path):
            parts = dotted.split(".")
            if parts[0] != "ireebench":
                continue
            if parts[1:2] == ["plugins"]:
                if len(parts) > 2 and parts[2] != mine:
                    pairs.add((mine, parts[2]))
            elif not is_public(dotted):
                files.add(me)
                internal[dotted.removeprefix("ireebench.")] += 1
    print(f"plugin pairs that import each other: {len(pairs)} {sorted(pairs)}")
    print(f"plugin files importing internal core modules: {len(files)} of {len(plugin_files)}")
    print(f"internal core modules they import: {len(internal)}: "
          + ", ".join(f"{name} ({count})" for name, count in internal.most_common()))
    spec = [node.name for node in ast.parse((ROOT / "core" / "hookspecs.py").read_text()).body
            if isinstance(node, ast.FunctionDef) and node.name.startswith("ireebench_")]
    called = set()
    for path in ROOT.glob("core/**/*.py"):
        text = path.read_text()
        called |= set(re.findall(r"[\"'](ireebench_\w+)[\"']", text))
        called |= set(re.findall(r"\.hook\.(ireebench_\w+)", text))
    print(f"hooks in core/hookspecs.py: {len(spec)}; called from core/: "
          f"{sum(name in called for name in spec)}; not: {[n for n in spec if n not in called]}")
    for folder in ("core", "plugins"):
        lines = sum(len(p.read_text().splitlines()) for p in ROOT.glob(f"{folder}/**/*.py"))
        print(f"lines in {folder}/: {lines}")


if __name__ == "__main__":
    main()
