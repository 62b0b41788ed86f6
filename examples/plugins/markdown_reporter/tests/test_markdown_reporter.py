"""The Markdown reporter's tests, through ireebench.testing (pip install the example first)."""

import ireebench_markdown
from ireebench.testing import TINY


def test_the_display_is_one_markdown_table(ireebench_tester):
    result = ireebench_tester.run("--reporter=markdown", plugins=[ireebench_markdown])
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("| benchmark")
    assert any(line.startswith(f"| {TINY}") for line in lines)


def test_the_subcommand_prints_a_saved_report_as_the_same_table(ireebench_tester):
    report = ireebench_tester.tmp_path / "run.json"
    shown = ireebench_tester.run("--reporter=markdown", f"--benchmark_out={report}",
                                 plugins=[ireebench_markdown])
    table = ireebench_tester.subcommand("markdown", report, plugins=[ireebench_markdown])
    assert table.exit_code == 0, table.stderr
    assert table.stdout.splitlines()[0] == shown.stdout.splitlines()[0]
    assert TINY in table.stdout
    missing = ireebench_tester.subcommand("markdown", "missing.json",
                                          plugins=[ireebench_markdown])
    assert missing.exit_code == 1
    assert missing.error_lines[0].startswith("ireebench: error: markdown: missing.json: not a "
                                             "readable JSON report")
