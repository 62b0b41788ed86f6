"""``--sweep NAME=V1,V2,...``: axes, ranges, and the command line of every point.

The points are the cartesian product of the axes, the last varying fastest
(as asv orders its grid); an axis is values and ranges (``1,4,16``,
``1..64:*2``, ``128..1024:+128``), a number in ``params`` when Python would
write it so. A point's command line (:func:`point_specs`): ``{NAME}`` in any
flag value replaced by its value, an axis no value mentions setting the flag
it names; options found as click reads them (:func:`scan_options`). Every
mistake (an unknown ``{NAME}``, an unused or empty axis, a bad range, a value
climbing out of its folder, :func:`check_inside_folder`, more than
:data:`~ireebench.points.MAX_POINTS` points, counted before any is made) is
one line naming it. The syntax: docs/usage.md, "Sweeps and suites".
"""

from __future__ import annotations

import itertools
import math
import os
import re
from dataclasses import dataclass

from ireebench.commands import Occurrence, parse_runtime_flag, scan_options
from ireebench.config import OptionSpec
from ireebench.errors import UsageError, printable
from ireebench.names import format_value
from ireebench.points import MAX_POINTS, PointSpec, describe_params

SWEEP_FLAG = "--sweep"
# Patterns compiled on first use (re's cache): a start that sweeps nothing pays none.
NAME = r"[A-Za-z_][A-Za-z0-9_]*"
# {NAME}, or the escaped braces {{ and }}.
PLACEHOLDER = r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}"
RANGE = r"(-?\d+)\.\.(-?\d+)(?::([+*])(\d+))?"
# What a range looks like: a number, then "..": 1..64, and 0.5..2.5 (refused:
# ranges are integers); not a path such as ../model.vmfb.
RANGE_START = r"-?\.?\d[\d.eE+-]*?\.\."
# 1-64: a range written with a dash (refused, with the spelling that works).
DASH_RANGE = r"(-?\d+)-(\d+)"
INTEGER = r"-?(0|[1-9]\d*)"
FLOAT = r"-?\d+\.\d+(e-?\d+)?|-?\d+e-?\d+"


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
    if re.fullmatch(INTEGER, text):
        return int(text)
    if re.fullmatch(FLOAT, text) and repr(float(text)) == text:
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
    match = re.fullmatch(RANGE, item)
    usage = "expected START..END, START..END:+STEP or START..END:*FACTOR (integers)"
    if not match:
        if re.search(r"\d\.\d|\d[eE]", item):  # 0.5..2.5:+0.5
            usage = ("ranges are integers (START..END, START..END:+STEP, START..END:*FACTOR); "
                     "list other values one by one: NAME=0.5,1.0,1.5")
        raise UsageError(f"{SWEEP_FLAG} {axis_text}: bad range {item!r}: {usage}")
    start, end = int(match.group(1)), int(match.group(2))
    op, amount = match.group(3) or "+", int(match.group(4) or 1)
    if (op == "+" and amount < 1) or (op == "*" and (amount < 2 or start < 1)):
        raise UsageError(f"{SWEEP_FLAG} {axis_text}: bad range {item!r}: the step must grow "
                         "the value (+N with N >= 1, *N with N >= 2 from a start >= 1)")
    if start > end:
        raise UsageError(f"{SWEEP_FLAG} {axis_text}: bad range {item!r}: it is empty "
                         f"(start {start} > end {end})")
    count = (end - start) // amount + 1 if op == "+" else _powers(start, end, amount)
    if count > MAX_POINTS:  # known before any value is made
        raise UsageError(f"{SWEEP_FLAG} {axis_text}: range {item!r} has {count} values, more "
                         f"than the {MAX_POINTS} points a run measures")
    values, value = [], start
    while value <= end:
        values.append(value)
        value = value + amount if op == "+" else value * amount
    return values


def _powers(start: int, end: int, factor: int) -> int:
    """How many of start, start*factor, start*factor**2 ... are <= end."""
    count = 0
    while start <= end:
        count, start = count + 1, start * factor
    return count


def parse_axis(text: str) -> Axis:
    """``NAME=V1,V2,...`` (values and ranges) as an :class:`Axis`."""
    name, sep, body = text.partition("=")
    if not sep or not re.fullmatch(NAME, name):
        raise UsageError(f"{SWEEP_FLAG} {text}: expected NAME=V1,V2,... (a name of letters, "
                         "digits and _, then values or ranges such as 1..64:*2)")
    if not body.strip():
        raise UsageError(f"{SWEEP_FLAG} {text}: the axis {name!r} is empty")
    values: list = []
    for item in split_items(body):
        if not item:
            raise UsageError(f"{SWEEP_FLAG} {text}: an empty value in axis {name!r}")
        if printable(item) != item:  # a line break, ESC or OSC would reach names and terminals
            raise UsageError(f"{SWEEP_FLAG} {text}: the value '{item}' has a control "
                             "character; a value names rows and files, so it is plain text")
        dash = re.fullmatch(DASH_RANGE, item)
        if dash:  # bs=1-64 means the range
            raise UsageError(f"{SWEEP_FLAG} {text}: {item!r} is not a range: write "
                             f"{dash.group(1)}..{dash.group(2)} (or {dash.group(1)}.."
                             f"{dash.group(2)}:*2 for powers of two)")
        if re.match(RANGE_START, item):  # 1..64:*2 (not a path such as ../model.vmfb)
            values.extend(expand_range(text, item))
        else:
            values.append(parse_value(item))
        if len(values) > MAX_POINTS:
            raise UsageError(f"{SWEEP_FLAG} {text[:80]}...: more than the {MAX_POINTS} points "
                             f"a run measures")
    seen: set[str] = set()
    for value in values:
        shown = format_value(value)
        if shown in seen:
            raise UsageError(f"{SWEEP_FLAG} {text}: the value {shown} appears twice in axis "
                             f"{name!r} (two points would share a name)")
        seen.add(shown)
    return Axis(name, values, text)


# --sweep itself, for a caller that knows no options (the unit tests' {}).
_SWEEP_SPEC = OptionSpec("sweep", "sweeps", "", (SWEEP_FLAG,), True, ())


def _with_sweep(option_specs: dict) -> dict:
    return option_specs if "sweep" in option_specs else {**option_specs, "sweep": _SWEEP_SPEC}


def sweep_values(argv: list[str], option_specs: dict) -> list[Occurrence]:
    """Every ``--sweep`` of the command line (``--sweep V`` and ``--sweep=V``)."""
    return [found for found in scan_options(argv, _with_sweep(option_specs))
            if SWEEP_FLAG in found.spec.flags and found.text is not None]


def parse_axes(argv: list[str], option_specs: dict) -> tuple[list[Axis], set[int]]:
    """The axes of the command line, and the argv indices that belong to ``--sweep``."""
    axes, taken = [], set()
    for found in sweep_values(argv, option_specs):
        taken |= found.indices
        axis = parse_axis(found.text)
        if any(other.name == axis.name for other in axes):
            raise UsageError(f"{SWEEP_FLAG} {found.text}: the axis {axis.name!r} is given twice")
        axes.append(axis)
    return axes, taken


def _placeholders(text: str) -> set[str]:
    return {match.group(1) for match in re.finditer(PLACEHOLDER, text) if match.group(1)}


def substitute(text: str, values: dict[str, str]) -> str:
    """``{NAME}`` replaced by ``values[NAME]``; ``{{``/``}}`` become braces."""
    def replace(match):
        if match.group(0) == "{{":
            return "{"
        if match.group(0) == "}}":
            return "}"
        return values[match.group(1)]

    return re.sub(PLACEHOLDER, replace, text)


def _template_folder(template: str) -> tuple[int, str] | None:
    """Where the path of a flag value with ``{NAME}`` starts, and the folder its
    fixed text names before the first placeholder (``--out=runs/{bs}.json``:
    ``runs``); None when it names none (``{m}``, ``--module={m}.vmfb``)."""
    first = next((match for match in re.finditer(PLACEHOLDER, template) if match.group(1)), None)
    if first is None:
        return None
    before = template[:first.start()]
    start = max(before.rfind("="), before.rfind("@")) + 1  # KEY=@dir/{v}.bin: the path
    folder, sep, _ = before[start:].rpartition("/")
    if not sep:
        return None
    return start, folder or "/"


def check_inside_folder(template: str, arg: str, point: str) -> None:
    """Refuses a value that leads out of the folder its template names.

    ``--benchmark_out=runs/{v}.json`` with ``v=../../x`` would write
    ``x.json`` two folders up. A path with ``..`` is resolved as the kernel
    resolves it (``..`` after a symbolic link climbs from the link's target,
    which plain text normalisation gets wrong) and must stay inside
    ``runs``; one without only descends (through the folder's own links,
    which are its owner's).
    """
    found = _template_folder(template)
    if found is None:
        return
    start, folder = found
    if ".." not in arg[start:].split("/"):
        return
    base = os.path.realpath(folder)
    path = os.path.realpath(arg[start:])
    if os.path.commonpath([base, path]) != base:
        raise UsageError(f"{printable(arg)} (point {printable(point)}): the value leads out of "
                         f"the folder {folder!r} its template {printable(template)} names")


def _flag_of(arg: str) -> str:
    return arg.split("=", 1)[0] if arg.startswith("--") else ""


def is_runtime_flag(name: str, value) -> bool:
    """Does the IREE runtime know ``--name``? (Asking sets it: the run sets every
    point's runtime flags again before it measures.)"""
    try:
        parse_runtime_flag(f"--{name}={format_value(value)}")
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
        if spec is not None and not spec.per_point:  # as a suite refuses `plugin`
            allowed = ", ".join(sorted(name for name, other in by_flag.items()
                                       if other.per_point and name == other.name))
            raise UsageError(f"{axis.flag}: --{axis.name} applies to the whole run, so it "
                             f"cannot be an axis (an axis sets one of: {allowed}, or a "
                             "runtime flag)")
        setting[axis.name] = spec
    return setting, used


def _axis_expressions(argv: list[str], option_specs: dict) -> set[int]:
    """The indexes in ``argv`` of the values of options marked ``axis_expression``
    (``--counter flops=2*{bs}``, ``--counter=flops=2*{bs}``): their plugin
    evaluates ``{AXIS}`` per benchmark, so they are left as they are."""
    return {found.value for found in scan_options(argv, option_specs)
            if found.spec.axis_expression and found.value is not None}


def _without_flag(argv: list[str], name: str, spec, option_specs: dict) -> list[str]:
    """``argv`` without any ``--name`` (an option in any form click reads, with its
    value; a runtime flag ``--name=value`` or ``--name``)."""
    if spec is not None:
        dropped = set().union(*(found.indices for found in scan_options(argv, option_specs)
                                if found.spec.name == spec.name))
        return [arg for index, arg in enumerate(argv) if index not in dropped]
    return [arg for arg in argv if _flag_of(arg) != f"--{name}" and arg != f"--{name}"]


def point_specs(argv: list[str], option_specs: dict, label_prefix: str = "",
                name_prefix: str = "") -> list[PointSpec] | None:
    """The command lines of the points ``argv``'s ``--sweep`` axes describe (None: no sweep).

    Each is ``argv`` without its ``--sweep`` flags, ``{NAME}`` replaced and
    the flag axes set. ``label_prefix`` starts each point's label in
    messages (a suite entry), ``name_prefix`` prefixes its rows' names.
    """
    axes, taken = parse_axes(argv, option_specs)
    if not axes:
        return None
    setting, _ = flag_axes(axes, argv, taken, option_specs)
    count = math.prod(len(axis.values) for axis in axes)
    if count > MAX_POINTS:  # said before a single point is made
        raise UsageError(f"{' '.join(axis.flag for axis in axes)}: {count} points "
                         f"({' x '.join(str(len(axis.values)) for axis in axes)}), more than "
                         f"the {MAX_POINTS} a run measures; narrow the axes or split the sweep")
    rest = [arg for index, arg in enumerate(argv) if index not in taken]
    own = _axis_expressions(rest, option_specs)
    specs = []
    for combination in itertools.product(*(axis.values for axis in axes)):
        params = {axis.name: value for axis, value in zip(axes, combination)}
        texts = {name: format_value(value) for name, value in params.items()}
        point_argv = [arg if index in own else substitute(arg, texts)
                      for index, arg in enumerate(rest)]
        for template, arg in zip(rest, point_argv):
            if arg != template:
                check_inside_folder(template, arg, describe_params(params))
        for name, spec in setting.items():
            point_argv = _without_flag(point_argv, name, spec, option_specs) + [
                f"--{name}={texts[name]}"]
        label = describe_params(params)
        specs.append(PointSpec(params, point_argv,
                               f"{label_prefix}, {label}" if label_prefix else label,
                               name_prefix))
    return specs
