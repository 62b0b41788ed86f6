"""Issue 38's litmus for rank as an ordinary plugin: what its package imports of the core.

Public modules (``PUBLIC_MODULES``, and the shared libraries ``ireebench.lib.*``, as
benchmarks/structure.py counts them) are free; the internal modules it still imports
are listed, and the list may only shrink: a new internal import fails here.
"""

import ast
import pathlib

from ireebench._public import PUBLIC_MODULES

RANK = pathlib.Path(__file__).parents[2] / "plugins" / "rank"
# What rank still reaches inside the core (the measurement's internals): only shrinks.
STILL_INTERNAL = {"ireebench._public", "ireebench.config", "ireebench._discovery",
                  "ireebench.errors", "ireebench.inputs", "ireebench._measure",
                  "ireebench._modules", "ireebench.outfiles", "ireebench.points",
                  "ireebench.results", "ireebench._scratch", "ireebench._session",
                  "ireebench.stats", "ireebench.streams", "ireebench.workload"}
# The warm workers' machinery is the core's shared libraries, nothing internal.
MACHINERY = ("worker.py", "remote.py", "serve.py")


def _internal(path: pathlib.Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else \
            [node.module] if isinstance(node, ast.ImportFrom) and not node.level else []
        found |= {name for name in names if name.startswith("ireebench.")
                  and not name.startswith(("ireebench.lib.", "ireebench.plugins.rank"))
                  and name not in PUBLIC_MODULES}
    return found


def test_rank_imports_no_new_internal_module():
    files = sorted(RANK.glob("*.py"))
    internal = set().union(*map(_internal, files))
    assert internal <= STILL_INTERNAL, sorted(internal - STILL_INTERNAL)
    assert {name: found for name in MACHINERY
            if (found := _internal(RANK / name) - {"ireebench.errors", "ireebench.streams"})} == {}
