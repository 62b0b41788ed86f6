"""docs/guide.md's migration table names every flag of the native tool."""

from __future__ import annotations

import fnmatch
import re

from conftest import ROOT
from ireebench._cli.command import INFORMATION_FLAGS

BEGIN, END = "<!-- flags: begin -->", "<!-- flags: end -->"
# Flags of the native tool's --help that are not flags (its usage text).
NOT_FLAGS = {"--flag", "--name", "--iree"}  # "--iree-..." compiler flags in prose


def _documented() -> list[str]:
    text = (ROOT / "docs" / "guide.md").read_text()
    table = text.split(BEGIN, 1)[1].split(END, 1)[0]
    cells = [line.split("|")[1] for line in table.splitlines() if line.startswith("| `")]
    return re.findall(r"`(--[a-z0-9_*]+)`", " ".join(cells))


def test_every_native_flag_is_in_the_migration_table(native_tool):
    help_text = native_tool("iree-benchmark-module", "--help")
    flags = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9_]*)", help_text.stdout + help_text.stderr))
    flags -= NOT_FLAGS
    assert len(flags) > 60, flags  # the help was read
    documented = _documented()
    missing = sorted(flag for flag in flags
                     if not any(fnmatch.fnmatchcase(flag, pattern) for pattern in documented))
    assert missing == [], "docs/guide.md's migration table lacks these native flags"


def test_every_documented_flag_is_accepted(ireebench, compile_mlir):
    """The table names no flag ireebench would refuse as unknown: each is an
    option --help lists, an information flag that runs alone, or a flag the
    runtime takes. The last are given all in one run with a flag nobody
    knows, which must be the only one warned about (so the check ran)."""
    listed = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9_]*)", ireebench("--help").stdout))
    assert len(listed) > 50, listed  # the help was read
    others = [flag for flag in _documented()
              if "*" not in flag and flag not in listed and flag != "--flagfile"]
    information = [flag for flag in others if flag.lstrip("-") in INFORMATION_FLAGS]
    for flag in information:
        result = ireebench(flag)
        assert result.returncode == 0 and "unknown flag" not in result.stderr, result.stderr
    sentinel = "--surely_no_tool_has_this_flag"
    result = ireebench(f"--module={compile_mlir('simple')}", "--benchmark_list_tests",
                       *(f"{flag}=1" for flag in others if flag not in information),
                       f"{sentinel}=1")
    warned = re.findall(r"warning: (--[a-z0-9_]+)=1: unknown flag", result.stderr)
    assert warned == [sentinel], result.stderr
