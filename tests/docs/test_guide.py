"""docs/guide.md's migration table names every flag of the native tool."""

from __future__ import annotations

import fnmatch
import re

from conftest import ROOT

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
    """The table names no flag ireebench would refuse as unknown."""
    module = f"--module={compile_mlir('simple')}"
    for flag in _documented():
        if "*" in flag or flag in ("--agents_md", "--module", "--benchmark_list_tests"):
            continue
        result = ireebench(module, "--benchmark_list_tests", f"{flag}=1")
        assert "unknown flag" not in result.stderr, (flag, result.stderr)
