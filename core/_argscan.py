"""Options found in a command line as click will read them, before it is parsed.

For code that must look at the text of a command line (a sweep's
``{NAME}`` substitution, the flags a native tool is handed) rather than at
click's parsed values: each option is found with where its value is, in
every form click accepts, so that ``--counter v``, ``--counter=v`` and a
flag file's lines (expanded before, one argument a line) behave alike.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Occurrence:
    """One option on a command line, found as click reads it.

    :ivar spec: its :class:`~ireebench.config.OptionSpec`.
    :ivar flag: the index of the argument that names it.
    :ivar value: the index of the argument that holds its value: ``flag``
        itself for ``--opt=v`` and ``-pv``, the next one for ``--opt v``,
        None when it has no value (``--benchmark_save``).
    :ivar text: the value (None when it has none).
    """

    spec: object
    flag: int
    value: int | None
    text: str | None

    @property
    def indices(self) -> set[int]:
        return {self.flag} if self.value is None else {self.flag, self.value}


def _looks_like_option(arg: str) -> bool:
    return arg.startswith("-") and len(arg) > 1


def scan_options(argv: list[str], option_specs: dict) -> list[Occurrence]:
    """Every option of ``argv`` that ``option_specs`` knows, with where its value is.

    The forms click accepts, read as click reads them: ``--opt=v``, ``--opt
    v`` (the next argument is the value, whatever it looks like, unless the
    value may be left out and the next argument looks like an option:
    ``--benchmark_save --sweep=...``), ``-pv`` and ``-p v``; ``--`` ends the
    options. Flag files are expanded before (one argument a line), so they
    give the same forms. Arguments nobody knows (runtime flags) are left out.
    """
    long_flags, short_flags = {}, {}
    for spec in option_specs.values():
        for flag in spec.flags:
            table = long_flags if flag.startswith("--") else short_flags
            table.setdefault(flag, spec)
    found, index = [], 0
    while index < len(argv):
        arg = argv[index]
        if arg == "--":
            break
        if arg.startswith("--"):
            name, sep, text = arg.partition("=")
            spec, attached = long_flags.get(name), text if sep else None
        elif _looks_like_option(arg):
            spec, attached = short_flags.get(arg[:2]), arg[2:] or None
        else:
            spec = None
        if spec is not None:
            if attached is not None or not spec.takes_value:
                found.append(Occurrence(spec, index, None if attached is None else index,
                                        attached))
            elif index + 1 < len(argv) and not (spec.optional_value
                                                 and _looks_like_option(argv[index + 1])):
                found.append(Occurrence(spec, index, index + 1, argv[index + 1]))
                index += 1
            else:
                found.append(Occurrence(spec, index, None, None))
        index += 1
    return found
