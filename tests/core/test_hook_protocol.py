"""The core calls every hook it specifies, and its protocol calls them in the spec's order.

Read from the source (AST), as ``tests/core/test_imports.py`` reads imports.

A core module *calls* a hook when its code names the hook either as the
attribute after ``.hook.`` (``pm.hook.ireebench_addhooks.call_historic``)
or as a string literal given to one of the core's hook-calling helpers
(:data:`CALLERS`: ``call_hook(pm, "ireebench_configure", ...)``,
``collect_named``, ``implementations``, ``known_names``), positionally, by
keyword, or as the default of such a helper's ``hook_name`` parameter
(``add_plugin_options``' ``"ireebench_addoption"``).

The order is checked in :mod:`ireebench.protocol`, which owns the run's
phases (:data:`PHASES`, the hooks a run calls itself rather than through
another core module):

* each phase hook is called in exactly one place of the module, and read
  top to bottom those places come in the spec's order (the module reads as
  the spec does);
* on every path through every function of the module, the phase hooks come
  first in the spec's order. A path follows the statements in order: an
  ``if`` takes its body or its ``else``, a loop runs its body once or not at
  all, a ``try`` its body then (or instead, from any point) a handler,
  ``return`` and ``raise`` end the path, and a call to another function of
  the module goes through each of that function's paths where it is called
  (each function entered once per path). Only a hook's first call on a
  path counts: a loop that starts and finishes a workload per workload
  starts the next one after finishing one, which is the spec's order
  repeated, not broken.
"""

from __future__ import annotations

import ast

from conftest import ROOT

CORE = ROOT / "core"
SPECS = CORE / "hookspecs.py"
PROTOCOL = CORE / "protocol.py"
CALLERS = {"call_hook", "collect_named", "implementations", "known_names",
           "add_plugin_options"}
PHASES = ["ireebench_sessionstart", "ireebench_discovery_finish", "ireebench_workload_start",
          "ireebench_measure_cold_start", "ireebench_workload_finish",
          "ireebench_report_extra_rows", "ireebench_measurements_finish"]


def spec_order() -> list[str]:
    tree = ast.parse(SPECS.read_text())
    return [node.name for node in tree.body
            if isinstance(node, ast.FunctionDef) and node.name.startswith("ireebench_")]


def _callee(node: ast.Call) -> str:
    func = node.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")


def hook_of(node: ast.AST, hooks: set[str]) -> str | None:
    """The hook ``node`` calls (one of ``hooks``), if it is a hook call."""
    if isinstance(node, ast.Attribute) and node.attr in hooks \
            and isinstance(node.value, ast.Attribute) and node.value.attr == "hook":
        return node.attr
    if isinstance(node, ast.Call) and _callee(node) in CALLERS:
        for arg in [*node.args, *(keyword.value for keyword in node.keywords)]:
            if isinstance(arg, ast.Constant) and arg.value in hooks:
                return arg.value
    return None


def hooks_called(path, hooks: set[str]) -> set[str]:
    called = set()
    for node in ast.walk(ast.parse(path.read_text())):
        hook = hook_of(node, hooks)
        if hook:
            called.add(hook)
        if isinstance(node, ast.FunctionDef) and node.name in CALLERS:
            arguments = node.args.args[-len(node.args.defaults):] if node.args.defaults else []
            for argument, default in zip(arguments, node.args.defaults):
                if argument.arg == "hook_name" and getattr(default, "value", None) in hooks:
                    called.add(default.value)
    return called


def test_every_spec_is_called_from_the_core():
    hooks = set(spec_order())
    callers: dict[str, list[str]] = {}
    for path in sorted(CORE.rglob("*.py")):
        if path != SPECS:
            for hook in hooks_called(path, hooks):
                callers.setdefault(hook, []).append(str(path.relative_to(ROOT)))
    assert sorted(hooks - set(callers)) == []
    assert set(PHASES) == set(hooks_called(PROTOCOL, hooks))


class _Paths:
    """The first-call orders of the phase hooks on the paths through a module's functions."""

    def __init__(self, tree: ast.Module, hooks: set[str]):
        self.hooks = hooks
        self.functions = {node.name: node for node in tree.body
                          if isinstance(node, ast.FunctionDef)}
        self.entered: list[str] = []

    def of(self, name: str) -> set[tuple]:
        self.entered.append(name)
        try:
            ends = self.block(self.functions[name].body, {((), False)})
        finally:
            self.entered.pop()
        return {order for order, _ in ends}

    def block(self, statements, states: set) -> set:
        for statement in statements:
            live = {state for state in states if not state[1]}
            if not live:
                break
            states = (states - live) | self.statement(statement, live)
        return states

    def statement(self, node, live: set) -> set:
        if isinstance(node, ast.If):
            tested = self.expression(node.test, live)
            return self.block(node.body, tested) | self.block(node.orelse, tested)
        if isinstance(node, (ast.For, ast.While)):
            entered = self.expression(node.iter if isinstance(node, ast.For) else node.test,
                                      live)
            return entered | self.block(node.body, entered)
        if isinstance(node, ast.Try):
            body = self.block(node.body, live)
            tried = live | body  # a handler runs from any point of the body
            handled = set().union(*(self.block(handler.body, tried)
                                    for handler in node.handlers))
            return self.block(node.finalbody, body | handled)
        if isinstance(node, ast.With):
            for item in node.items:
                live = self.expression(item.context_expr, live)
            return self.block(node.body, live)
        if isinstance(node, (ast.Return, ast.Raise)):
            reached = self.expression(node, live)
            return {(order, True) for order, _ in reached}
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            return live
        return self.expression(node, live)

    def expression(self, node, live: set) -> set:
        for child in ast.iter_child_nodes(node):  # arguments before the call they go to
            if not isinstance(child, ast.Lambda):
                live = self.expression(child, live)
        hook = hook_of(node, self.hooks)
        if hook:
            return {(order if hook in order else (*order, hook), ended)
                    for order, ended in live}
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in self.functions and node.func.id not in self.entered:
            return {(_merged(order, callee), ended) for order, ended in live
                    for callee in self.of(node.func.id)}
        return live


def _merged(order: tuple, more: tuple) -> tuple:
    return (*order, *(hook for hook in more if hook not in order))


def test_the_protocol_calls_the_phases_in_the_spec_order():
    spec = spec_order()
    assert PHASES == [hook for hook in spec if hook in PHASES]
    tree = ast.parse(PROTOCOL.read_text())
    calls = sorted((node.lineno, hook) for node in ast.walk(tree)
                   if (hook := hook_of(node, set(PHASES))))
    assert [hook for _, hook in calls] == PHASES  # each once, top to bottom
    paths = _Paths(tree, set(PHASES))
    orders = {name: paths.of(name) for name in paths.functions}
    wrong = {name: order for name, found in orders.items() for order in found
             if list(order) != sorted(order, key=spec.index)}
    assert wrong == {}
    # The run goes through every phase: the check above is not vacuous.
    assert tuple(PHASES) in orders["run_in_process"]
