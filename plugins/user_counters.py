"""``--counter NAME=EXPR``: a quantity per iteration, reported as a rate (FLOP/s, bytes/s, tokens/s).

Every repetition row gets the counter NAME = EXPR x iterations / real seconds,
a Google Benchmark rate counter, added at ``ireebench_workload_finish``
(first), before anyone else sees the rows. EXPR is arithmetic on numbers and
``{axis}`` values (``workload.params``), parsed by a small grammar of its own,
never ``eval``, bounded by :data:`MAX_TOKENS` and :data:`MAX_NESTING`; a
mistake is one line naming the flag, at configure or, for every point at
once, before anything is measured. The grammar and the rows:
docs/usage.md, "Metrics beyond wall time".
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ireebench import StashKey, hookimpl
from ireebench.backend import IN_PROCESS, require
from ireebench.errors import UsageError, flag_error
from ireebench.results import RUN_KEYS, Counter
from ireebench.stats import EXTRA_STATISTICS, STATISTICS, aggregate_counters

GROUP = "Metrics: device time, memory, counters"
# Counters ireebench or its built-in plugins set themselves.
TAKEN_COUNTERS = ("items_per_second", "device_bytes_peak", "host_bytes_peak", "calls",
                  "percent")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# Bounds of one expression (far beyond any FLOP count): the parser and the
# evaluation recurse, so 2,000 nested parentheses or 1,000 terms are one line
# naming --counter, never a RecursionError.
MAX_TOKENS = 200
MAX_NESTING = 32
MAX_CHARACTERS = 2000
SHOWN_CHARACTERS = 80  # of a refused expression, in its error line
_TOKEN = re.compile(r"\s*(?:(?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)"
                    r"|\{(?P<axis>[^{}]*)\}|(?P<op>[-+*/()]))")


class ExpressionError(ValueError):
    """What is wrong with an expression, in words for the user."""


@dataclass(frozen=True)
class Expression:
    """A parsed ``EXPR``: a tree of ``("num", x)``, ``("axis", name)``, ``("neg", e)``
    and ``(op, left, right)``."""

    text: str
    tree: tuple

    @property
    def axes(self) -> list[str]:
        found: list[str] = []

        def walk(node):
            if node[0] == "axis":
                if node[1] not in found:
                    found.append(node[1])
            elif node[0] == "neg":
                walk(node[1])
            elif node[0] != "num":
                walk(node[1])
                walk(node[2])

        walk(self.tree)
        return found

    def evaluate(self, params: dict) -> float:
        """The value with ``{axis}`` taken from ``params``; ExpressionError otherwise."""
        return _evaluate(self.tree, params)


def _tokens(text: str) -> list[tuple[str, str]]:
    tokens, position = [], 0
    while position < len(text):
        if text[position:].strip() == "":
            break
        match = _TOKEN.match(text, position)
        if match is None:
            raise ExpressionError(f"unexpected {text[position:].lstrip()[:1]!r} at "
                                  f"position {position + 1}")
        kind = match.lastgroup
        value = match.group(kind)
        if kind == "axis":
            value = value.strip()
            if not value:
                raise ExpressionError("empty {} (write {axis}, an axis of the benchmark)")
        tokens.append((kind, value))
        if len(tokens) > MAX_TOKENS:
            raise ExpressionError(f"longer than {MAX_TOKENS} numbers, axes and operators")
        position = match.end()
    return tokens


class _Parser:
    def __init__(self, tokens):
        self.tokens = tokens
        self.index = 0
        self.depth = 0  # parentheses and signs around the factor being read

    def peek(self):
        return self.tokens[self.index] if self.index < len(self.tokens) else (None, None)

    def take(self):
        token = self.peek()
        self.index += 1
        return token

    def expression(self):
        node = self.term()
        while self.peek() in (("op", "+"), ("op", "-")):
            node = (self.take()[1], node, self.term())
        return node

    def term(self):
        node = self.factor()
        while self.peek() in (("op", "*"), ("op", "/")):
            node = (self.take()[1], node, self.factor())
        return node

    def nested(self, read):
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise ExpressionError(f"parentheses and signs nested more than {MAX_NESTING} deep")
        try:
            return read()
        finally:
            self.depth -= 1

    def factor(self):
        kind, value = self.take()
        if (kind, value) in (("op", "+"), ("op", "-")):
            operand = self.nested(self.factor)
            return ("neg", operand) if value == "-" else operand
        if kind == "number":
            number = float(value)
            if not math.isfinite(number):  # 1e999: Infinity would reach the reports
                raise ExpressionError(f"{value} is not a finite number")
            return ("num", number)
        if kind == "axis":
            return ("axis", value)
        if (kind, value) == ("op", "("):
            node = self.nested(self.expression)
            if self.take() != ("op", ")"):
                raise ExpressionError("a '(' is not closed")
            return node
        where = "at the end" if kind is None else f"before {value!r}"
        raise ExpressionError(f"expected a number, {{axis}} or '(' {where}")


def parse_expression(text: str) -> Expression:
    """Parses ``EXPR``; raises ExpressionError saying what is wrong."""
    tokens = _tokens(text)
    if not tokens:
        raise ExpressionError("empty expression")
    parser = _Parser(tokens)
    tree = parser.expression()
    if parser.index < len(tokens):
        raise ExpressionError(f"unexpected {tokens[parser.index][1]!r}")
    return Expression(text, tree)


def _number(name: str, params: dict) -> float:
    if name not in params:
        known = ", ".join(sorted(map(str, params))) or "none: it is not a sweep point"
        raise ExpressionError(f"{{{name}}}: the benchmark has no axis {name!r} "
                              f"(its axes: {known})")
    value = params[name]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ExpressionError(f"{{{name}}} is {value!r}, not a number")
    return float(value)


def _evaluate(node: tuple, params: dict) -> float:
    kind = node[0]
    if kind == "num":
        return node[1]
    if kind == "axis":
        return _number(node[1], params)
    if kind == "neg":
        return -_evaluate(node[1], params)
    left, right = _evaluate(node[1], params), _evaluate(node[2], params)
    if kind == "+":
        value = left + right
    elif kind == "-":
        value = left - right
    elif kind == "*":
        value = left * right
    else:
        if right == 0:
            raise ExpressionError("division by zero")
        value = left / right
    if not math.isfinite(value):
        raise ExpressionError("the value is not a finite number")
    return value


@dataclass(frozen=True)
class UserCounter:
    """One ``--counter NAME=EXPR``."""

    flag_value: str  # as given, for messages
    name: str
    expression: Expression

    def value(self, params: dict, benchmark: str = "") -> float:
        """The quantity per iteration for a benchmark of these ``params``."""
        try:
            return self.expression.evaluate(params)
        except ExpressionError as exc:
            where = f"{benchmark}: " if benchmark else ""
            raise flag_error("counter", self.flag_value, f"{where}{exc}") from None


STATE = StashKey[list]()  # the run's UserCounters


@hookimpl
def ireebench_addoption(parser):
    """Adds --counter (repeatable)."""
    parser.addoption(
        "--counter", "counter", multiple=True, group=GROUP, metavar="NAME=EXPR",
        requires=IN_PROCESS,
        help="A quantity per iteration (FLOPs, bytes, tokens), reported as the rate counter "
             "NAME (per second: flops=12.3G/s). EXPR: numbers, + - * /, parentheses and "
             "{axis} (a sweep's axis), e.g. flops=2*{bs}*512*256. Repeatable.",
        module_run=True, axis_expression=True)


def parse_counter(text: str) -> UserCounter:
    """``NAME=EXPR`` checked; one UsageError line naming the flag otherwise."""
    name, separator, expression = str(text).partition("=")
    name = name.strip()
    if not separator:
        raise flag_error("counter", text, "expected NAME=EXPR, e.g. flops=2*24*256*1024")
    if not _NAME.match(name):
        raise flag_error("counter", text, f"the name {name!r} must be letters, digits and _ "
                                          "(not starting with a digit)")
    if name in TAKEN_COUNTERS or name in RUN_KEYS:
        raise flag_error("counter", text, f"{name!r} is a field or counter ireebench sets "
                                          "itself; choose another name")
    try:
        if len(expression) > MAX_CHARACTERS:
            raise ExpressionError(f"longer than {MAX_CHARACTERS} characters")
        parsed = parse_expression(expression)
    except ExpressionError as exc:
        shown = text if len(text) <= SHOWN_CHARACTERS else f"{text[:SHOWN_CHARACTERS]}..."
        raise flag_error("counter", shown, str(exc)) from None
    counter = UserCounter(str(text), name, parsed)
    if not parsed.axes:
        counter.value({})  # a constant: its mistakes (1/0) are known now
    return counter


@hookimpl
def ireebench_configure(config):
    """Parses every --counter; a name given twice is refused."""
    texts = list(config.getoption("counter") or [])
    if not texts:
        return
    require(config, IN_PROCESS, "counter", texts[0])
    counters, seen = [], set()
    for text in texts:
        counter = parse_counter(text)
        if counter.name in seen:
            raise flag_error("counter", text, f"the counter {counter.name!r} is given twice")
        seen.add(counter.name)
        counters.append(counter)
    config.stash[STATE] = counters


@hookimpl(trylast=True)
def ireebench_generate_points(config, points):
    """Every counter evaluates for every point (its parameters) before anything is
    measured: ``--sweep v=1,a --counter=flops={v}`` is one line, not a measured
    point and then an error row. (``trylast``: after the plugins that add points.)"""
    for counter in config.stash.get(STATE, []):
        for point in points:
            if not set(counter.expression.axes) <= set(point.params):
                continue  # a plugin may still give its workloads those (discovery_finish)
            try:
                counter.value(point.params)
            except UsageError as exc:
                raise UsageError(f"{exc} (point {point.label})") from None


@hookimpl
def ireebench_discovery_finish(config, workloads):
    """Every counter evaluates for every benchmark before anything is measured."""
    for counter in config.stash.get(STATE, []):
        for workload in workloads:
            counter.value(workload.params, workload.name)


@hookimpl
def ireebench_report_context(config, context):
    """Lists the rate counters in the context (``rate_counters``): Google Benchmark's JSON
    does not say which counters are rates, and ``ireebench compare`` judges a rate
    higher-is-better."""
    counters = config.stash.get(STATE, None)
    if counters:
        context.extra["rate_counters"] = [counter.name for counter in counters]


@hookimpl(tryfirst=True)
def ireebench_workload_finish(config, workload, runs):
    """Adds each counter to the repetition rows (the quantity x iterations / real
    seconds), then to the aggregates (the statistics of the repetitions' rates)."""
    counters = config.stash.get(STATE, None)
    if not counters:
        return
    repetitions = [r for r in runs if r.run_type == "iteration" and not r.extra_row
                   and not r.error_occurred]
    for run in repetitions:
        seconds = run.real_accumulated_time
        for counter in counters:
            quantity = counter.value(workload.params, workload.name) * run.iterations
            run.counters[counter.name] = Counter(quantity / seconds if seconds else 0.0,
                                                 is_rate=True)
    statistics = STATISTICS + list(config.stash.get(EXTRA_STATISTICS, []))
    aggregate_counters(runs, [r for r in runs if r.run_type == "aggregate"],
                       [counter.name for counter in counters], statistics)


__all__ = ["Expression", "ExpressionError", "UserCounter", "parse_counter", "parse_expression"]
