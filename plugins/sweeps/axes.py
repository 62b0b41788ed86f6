"""``--sweep NAME=V1,V2,...``: axes, ranges, and the command line of every point.

The points are the cartesian product of the axes, the last axis varying
fastest (as asv orders its parameter grid). An axis is a comma-separated
list of values and ranges:

* ``bs=1,4,16`` — values; ``\\,`` is a comma inside a value;
* ``bs=1..64:*2`` — 1, 2, 4 ... 64 (a factor); ``seq=128..1024:+128`` —
  128, 256 ... 1024 (a step); ``n=1..4`` — step 1. Integers; the end is
  included when the sequence meets it.

A value that is an integer or a float as Python writes it (``4``, ``0.5``)
is a number in ``params`` (and in the JSON report); anything else is a
string (``local-sync``, ``007``).

How a point's command line is made (:func:`point_specs`): ``{NAME}`` in
any flag value is replaced by the point's value (``{{`` and ``}}`` are
braces); an axis that no value mentions must name a flag, which the point
then sets (every ``--NAME`` of the command line replaced by the point's
one): a core flag (``device``, ``batch_size``, ``function``, ``module``
...), a plugin's (``compile_flag``) or a runtime flag
(``task_topology_max_group_count``). An unknown ``{NAME}``, an axis used
nowhere, an empty axis, a repeated value or a bad range is one line naming it.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

import iree.runtime as rt
from ireebench.errors import UsageError
from ireebench.names import format_value
from ireebench.points import PointSpec, describe_params

SWEEP_FLAG = "--sweep"
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# {NAME}, or the escaped braces {{ and }}.
PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")
RANGE = re.compile(r"(-?\d+)\.\.(-?\d+)(?::([+*])(\d+))?")
RANGE_START = re.compile(r"-?\d+\.\.")
INTEGER = re.compile(r"-?(0|[1-9]\d*)")
FLOAT = re.compile(r"-?\d+\.\d+(e-?\d+)?|-?\d+e-?\d+")
MAX_RANGE_VALUES = 100_000


@dataclass
class Axis:
    """One ``--sweep`` axis: its name and values (numbers as numbers), in order."""

    name: str
    values: list
    text: str  # as given, for messages

    @property
    def flag(self) -> str:
        return f"{SWEEP_FLAG} {self.text}"


def parse_value(text: str):
    """``4`` -> 4, ``0.5`` -> 0.5 (when Python writes them so), anything else as text."""
    if INTEGER.fullmatch(text):
        return int(text)
    if FLOAT.fullmatch(text) and repr(float(text)) == text:
        return float(text)
    return text


def split_items(text: str) -> list[str]:
    """Comma-separated items; ``\\,`` is a comma inside an item."""
    items, current, index = [], [], 0
    while index < len(text):
        char = text[index]
        if char == "\\" and text[index + 1:index + 2] == ",":
            current.append(",")
            index += 2
            continue
        if char == ",":
            items.append("".join(current))
            current = []
        else:
            current.append(char)
        index += 1
    items.append("".join(current))
    return items


def expand_range(axis_text: str, item: str) -> list[int]:
    """``1..64:*2`` -> [1, 2, 4, ..., 64]; a bad range is one line naming it."""
    match = RANGE.fullmatch(item)
    usage = "expected START..END, START..END:+STEP or START..END:*FACTOR (integers)"
    if not match:
        raise UsageError(f"{SWEEP_FLAG} {axis_text}: bad range {item!r}: {usage}")
    start, end = int(match.group(1)), int(match.group(2))
    op, amount = match.group(3) or "+", int(match.group(4) or 1)
    if (op == "+" and amount < 1) or (op == "*" and (amount < 2 or start < 1)):
        raise UsageError(f"{SWEEP_FLAG} {axis_text}: bad range {item!r}: the step must grow "
                         "the value (+N with N >= 1, *N with N >= 2 from a start >= 1)")
    if start > end:
        raise UsageError(f"{SWEEP_FLAG} {axis_text}: bad range {item!r}: it is empty "
                         f"(start {start} > end {end})")
    values, value = [], start
    while value <= end:
        values.append(value)
        if len(values) > MAX_RANGE_VALUES:
            raise UsageError(f"{SWEEP_FLAG} {axis_text}: range {item!r} has more than "
                             f"{MAX_RANGE_VALUES} values")
        value = value + amount if op == "+" else value * amount
    return values


def parse_axis(text: str) -> Axis:
    """``NAME=V1,V2,...`` (values and ranges) as an :class:`Axis`."""
    name, sep, body = text.partition("=")
    if not sep or not NAME.fullmatch(name):
        raise UsageError(f"{SWEEP_FLAG} {text}: expected NAME=V1,V2,... (a name of letters, "
                         "digits and _, then values or ranges such as 1..64:*2)")
    if not body.strip():
        raise UsageError(f"{SWEEP_FLAG} {text}: the axis {name!r} is empty")
    values: list = []
    for item in split_items(body):
        if not item:
            raise UsageError(f"{SWEEP_FLAG} {text}: an empty value in axis {name!r}")
        if RANGE_START.match(item):  # 1..64:*2 (not a path such as ../model.vmfb)
            values.extend(expand_range(text, item))
        else:
            values.append(parse_value(item))
    seen: set[str] = set()
    for value in values:
        shown = format_value(value)
        if shown in seen:
            raise UsageError(f"{SWEEP_FLAG} {text}: the value {shown} appears twice in axis "
                             f"{name!r} (two points would share a name)")
        seen.add(shown)
    return Axis(name, values, text)


def sweep_values(argv: list[str]) -> list[tuple[int, str]]:
    """``(index of the value in argv, value)`` of every ``--sweep`` of the command line."""
    found = []
    for index, arg in enumerate(argv):
        if arg == SWEEP_FLAG and index + 1 < len(argv):
            found.append((index + 1, argv[index + 1]))
        elif arg.startswith(SWEEP_FLAG + "="):
            found.append((index, arg[len(SWEEP_FLAG) + 1:]))
    return found


def parse_axes(argv: list[str]) -> tuple[list[Axis], set[int]]:
    """The axes of the command line, and the argv indices that belong to ``--sweep``."""
    axes, taken = [], set()
    for index, text in sweep_values(argv):
        taken.update({index, index - 1} if argv[index] == text else {index})
        axis = parse_axis(text)
        if any(other.name == axis.name for other in axes):
            raise UsageError(f"{SWEEP_FLAG} {text}: the axis {axis.name!r} is given twice")
        axes.append(axis)
    return axes, taken


def _placeholders(text: str) -> set[str]:
    return {match.group(1) for match in PLACEHOLDER.finditer(text) if match.group(1)}


def substitute(text: str, values: dict[str, str]) -> str:
    """``{NAME}`` replaced by ``values[NAME]``; ``{{``/``}}`` become braces."""
    def replace(match):
        if match.group(0) == "{{":
            return "{"
        if match.group(0) == "}}":
            return "}"
        return values[match.group(1)]

    return PLACEHOLDER.sub(replace, text)


def _flag_of(arg: str) -> str:
    return arg.split("=", 1)[0] if arg.startswith("--") else ""


def is_runtime_flag(name: str, value) -> bool:
    """Does the IREE runtime know ``--name``? (Asking sets it: the run sets every
    point's runtime flags again before it measures.)"""
    try:
        rt.flags.parse_flags(f"--{name}={format_value(value)}")
    except ValueError:
        return False
    return True


def flag_axes(axes: list[Axis], argv: list[str], taken: set[int],
              option_specs: dict) -> tuple[dict[str, object], set[str]]:
    """The axes that set a flag (name -> the spec, or None for a runtime flag),
    and the names used as ``{NAME}`` in the command line."""
    used: set[str] = set()
    for index, arg in enumerate(argv):
        if index not in taken:
            used |= _placeholders(arg)
    known = {axis.name for axis in axes}
    for name in sorted(used - known):
        arg = next(a for i, a in enumerate(argv) if i not in taken and name in _placeholders(a))
        raise UsageError(f"{arg}: unknown sweep axis {{{name}}} (axes: "
                         f"{', '.join(sorted(known))})")
    by_flag = {flag.lstrip("-"): spec for spec in option_specs.values() for flag in spec.flags
               if flag.startswith("--")}
    setting: dict[str, object] = {}
    for axis in axes:
        if axis.name in used:
            continue
        spec = by_flag.get(axis.name)
        if spec is None and not is_runtime_flag(axis.name, axis.values[0]):
            raise UsageError(f"{axis.flag}: {axis.name!r} is neither a flag nor used as "
                             f"{{{axis.name}}} in a flag value")
        setting[axis.name] = spec
    return setting, used


def _axis_expressions(argv: list[str], option_specs: dict) -> set[int]:
    """The indexes in ``argv`` of the values of options marked ``axis_expression``
    (``--counter flops=2*{bs}``): their plugin evaluates ``{AXIS}`` per benchmark,
    so they are left as they are."""
    flags = {flag for spec in option_specs.values() if spec.axis_expression
             for flag in spec.flags}
    found = set()
    for index, arg in enumerate(argv):
        if _flag_of(arg) in flags:
            found.add(index)
        elif arg in flags:
            found |= {index, index + 1}
    return found


def _without_flag(argv: list[str], name: str, spec) -> list[str]:
    """``argv`` without any ``--name`` (and its value when it is the next argument)."""
    flags = {f"--{name}"} | (set(spec.flags) if spec is not None else set())
    takes_value = spec is None or spec.takes_value
    result, skip = [], False
    for arg in argv:
        if skip:
            skip = False
            continue
        if _flag_of(arg) in flags or arg in flags:
            skip = takes_value and "=" not in arg and spec is not None
            continue
        result.append(arg)
    return result


def point_specs(argv: list[str], option_specs: dict, label_prefix: str = "",
                name_prefix: str = "") -> list[PointSpec] | None:
    """The command lines of the points ``argv``'s ``--sweep`` axes describe (None: no sweep).

    Each is ``argv`` without its ``--sweep`` flags, ``{NAME}`` replaced and
    the flag axes set. ``label_prefix`` starts each point's label in
    messages (a suite entry), ``name_prefix`` prefixes its rows' names.
    """
    axes, taken = parse_axes(argv)
    if not axes:
        return None
    setting, _ = flag_axes(axes, argv, taken, option_specs)
    rest = [arg for index, arg in enumerate(argv) if index not in taken]
    own = _axis_expressions(rest, option_specs)
    specs = []
    for combination in itertools.product(*(axis.values for axis in axes)):
        params = {axis.name: value for axis, value in zip(axes, combination)}
        texts = {name: format_value(value) for name, value in params.items()}
        point_argv = [arg if index in own else substitute(arg, texts)
                      for index, arg in enumerate(rest)]
        for name, spec in setting.items():
            point_argv = _without_flag(point_argv, name, spec) + [f"--{name}={texts[name]}"]
        label = describe_params(params)
        specs.append(PointSpec(params, point_argv,
                               f"{label_prefix}, {label}" if label_prefix else label,
                               name_prefix))
    return specs
