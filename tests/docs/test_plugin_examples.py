"""docs/plugins.md's worked examples, one per extension point, run as written.

Each code block marked ``<!-- example: NAME.py -->`` is written to a file
and loaded as a plugin (``--plugin FILE.py``) through ``ireebench.testing``
(the ``ireebench_tester`` fixture: ireebench in this process on a compiled
test module), and what the page says it does is checked. The ten-line test
of "Testing a plugin" is itself run with this test's tester.
"""

from __future__ import annotations

import json
import os
import re
import sys

import pytest
from conftest import ROOT
from ireebench.backend import BENCHMARK_TOOL, tool_path
from ireebench.testing import TINY

PAGE = ROOT / "docs" / "plugins.md"
EXAMPLE = re.compile(r"^<!-- example: (\S+\.py) -->\n```python\n(.*?)^```",
                     re.DOTALL | re.MULTILINE)
# Extension point -> its worked example.
WORKED = {
    "sink": "rows_jsonl.py", "subcommand": "leaderboard.py", "own hook": "mycorp_tags.py",
    "own hook's implementer": "mycorp_team.py", "reporter": "tsv_reporter.py",
    "comparison reporter": "tsv_compare.py", "statistic": "trimmed_mean.py",
    "metric": "peak_rss.py", "kind": "zeros_kind.py", "backend": "ssh_backend.py",
    "executor": "pinned_executor.py",
    "a plugin's test": "test_tsv_reporter.py", "report section": "mycorp_budget.py",
}


@pytest.fixture(scope="module")
def examples(tmp_path_factory):
    """name -> the path of the worked example, written as the page has it."""
    directory = tmp_path_factory.mktemp("worked-examples")
    found = {}
    for name, code in EXAMPLE.findall(PAGE.read_text()):
        assert name not in found, f"two examples named {name}"
        found[name] = directory / name
        found[name].write_text(code)
    return found


def test_every_extension_point_has_a_worked_example(examples):
    assert set(examples) == set(WORKED.values())
    assert "## Adding a section to the HTML report" in PAGE.read_text()


def test_the_pages_show_the_collector_sink_whole():
    """plugins.md and profiling.md show examples/plugins/mycorp_sink (tested there and in
    tests/plugin_api/test_plugins.py) as it is, not a fragment that cannot run."""
    code = (ROOT / "examples" / "plugins" / "mycorp_sink" / "mycorp_sink.py").read_text()
    for page in ("plugins.md", "profiling.md"):
        assert f"```python\n{code}```" in (ROOT / "docs" / page).read_text(), page


def test_the_sink_streams_every_row(ireebench_tester, examples):
    out = ireebench_tester.tmp_path / "rows.jsonl"
    result = ireebench_tester.run("--benchmark_repetitions=2", f"--rows_jsonl={out}",
                                  plugins=[examples["rows_jsonl.py"]])
    assert result.exit_code == 0, result.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["name"] for line in lines] == [row.benchmark_name for row in result.rows]
    assert {line["run_id"] for line in lines} == {result.context.extra["ireebench_run_id"]}
    refused = ireebench_tester.run("--rows_jsonl=/nonexistent/rows.jsonl",
                                   plugins=[examples["rows_jsonl.py"]])
    assert refused.error_lines == [("ireebench: error: --rows_jsonl=/nonexistent/rows.jsonl: "
                                   "No such file or directory")]


def test_the_subcommand_ranks_stored_runs_and_files(ireebench_tester, examples, ireebench):
    leaderboard = examples["leaderboard.py"]
    report = ireebench_tester.tmp_path / "run.json"
    for extra in ([], [f"--benchmark_out={report}"]):
        saved = ireebench_tester.run("--benchmark_save", "--benchmark_repetitions=2", *extra)
        assert saved.exit_code == 0, saved.stderr
    ranked = ireebench_tester.subcommand("leaderboard", plugins=[leaderboard])
    assert ranked.exit_code == 0, ranked.stderr
    assert re.fullmatch(rf"1\. {re.escape(TINY)}  \d+\.\d{{3}} us\n", ranked.stdout)
    from_file = ireebench_tester.subcommand("leaderboard", report, "--top=1",
                                            plugins=[leaderboard])
    assert from_file.stdout.startswith(f"1. {TINY}  ")
    missing = ireebench_tester.subcommand("leaderboard", "missing.json", plugins=[leaderboard])
    assert missing.error_lines == ["ireebench: error: leaderboard: missing.json: file not found"]
    # The real command line, the plugin before the subcommand, another store by its flag.
    cli = ireebench("--plugin", leaderboard, "leaderboard", "stored:latest",
                    f"--benchmark_storage={ireebench_tester.storage}")
    assert cli.returncode == 0, cli.stderr
    assert cli.stdout.startswith(f"1. {TINY}  ")


def test_a_plugin_declares_a_hook_another_implements(ireebench_tester, examples, tmp_path):
    both = ireebench_tester.run(plugins=[examples["mycorp_tags.py"], examples["mycorp_team.py"]])
    assert both.exit_code == 0, both.stderr
    assert f"tags {TINY}: iteration,team=compilers" in both.stderr.splitlines()
    alone = ireebench_tester.run(plugins=[examples["mycorp_team.py"]])
    assert alone.exit_code == 0
    assert alone.error_lines == [
        ("ireebench: warning: plugin 'mycorp_team': ireebench_mycorp_tags is declared by no "
        "loaded plugin, so it is never called (is the plugin that declares it installed?)")]
    typo = tmp_path / "mycorp_typo.py"
    typo.write_text(examples["mycorp_team.py"].read_text().replace("mycorp_tags", "mycorp_tag"))
    refused = ireebench_tester.run(plugins=[examples["mycorp_tags.py"], typo])
    assert refused.error_lines == [("ireebench: error: plugin 'mycorp_typo': ireebench_mycorp_tag "
                                   "is not an ireebench hook (did you mean "
                                   "ireebench_mycorp_tags?)")]


def test_the_reporter_and_its_ten_line_test(ireebench_tester, examples, monkeypatch):
    monkeypatch.syspath_prepend(str(examples["tsv_reporter.py"].parent))
    monkeypatch.delitem(sys.modules, "tsv_reporter", raising=False)
    namespace = {}
    exec(compile(examples["test_tsv_reporter.py"].read_text(), "test_tsv_reporter.py", "exec"),  # noqa: S102 - the page's test, as written
         namespace)
    namespace["test_one_line_per_row"](ireebench_tester)
    assert len(examples["test_tsv_reporter.py"].read_text().strip().splitlines()) <= 12


def test_the_comparison_reporter(ireebench_tester, examples):
    files = [ireebench_tester.tmp_path / name for name in ("old.json", "new.json")]
    for path in files:
        assert ireebench_tester.run("--benchmark_repetitions=3",
                                    f"--benchmark_out={path}").exit_code == 0
    # 3 repetitions a side: inconclusive, which the gate would not pass (exit 4).
    result = ireebench_tester.subcommand("compare", *files, "--reporter=tsv",
                                         "--accept_cannot_judge",
                                         plugins=[examples["tsv_compare.py"]])
    assert result.exit_code == 0, result.stderr
    [line] = result.stdout.splitlines()
    assert line.split("\t")[0] == TINY


def test_the_statistic(ireebench_tester, examples):
    result = ireebench_tester.run("--benchmark_repetitions=10",
                                  "--benchmark_statistics=trimmed_mean",
                                  plugins=[examples["trimmed_mean.py"]])
    assert result.exit_code == 0, result.stderr
    times = sorted(row.real_seconds for row in result.rows if row.run_type == "iteration")
    trimmed = result.row(f"{TINY}_trimmed_mean")  # per iteration, as _mean
    assert trimmed.real_seconds == pytest.approx(sum(times[1:-1]) / 8)


def test_the_metric_is_a_counter_compare_gates_on(ireebench_tester, examples):
    peak_rss = examples["peak_rss.py"]
    files = [ireebench_tester.tmp_path / name for name in ("old.json", "new.json")]
    for path in files:
        result = ireebench_tester.run("--peak_rss", "--benchmark_repetitions=3",
                                      f"--benchmark_out={path}", plugins=[peak_rss])
        assert result.exit_code == 0, result.stderr
    repetitions = [row for row in result.rows if row.run_type == "iteration"]
    assert all(row.counters["peak_rss_bytes"].value > 1 << 20 for row in repetitions)
    assert all("peak_rss_bytes" in row for row in json.loads(files[1].read_text())["benchmarks"])
    # As the example gates: 5 %. The peak is this (test) process's, which only grows: the
    # second run's may exceed the first's by a little, and a counter that does not vary
    # between repetitions is compared exactly (any change without a threshold counts).
    compared = ireebench_tester.subcommand("compare", *files, "--metric=peak_rss_bytes",
                                           "--threshold=5%", "--reporter=json")
    assert compared.exit_code == 0, compared.stdout
    assert compared.json()["metric"] == "peak_rss_bytes"
    refused = ireebench_tester.run("--peak_rss", "--backend=native", plugins=[peak_rss])
    assert refused.error_lines == [
        ("ireebench: error: --peak_rss=true: needs a backend that measures in this process "
        "with the IREE runtime (capability 'in_process'); --backend=native does not have it")]


ZEROS_MODULE = """
func.func @zeros_scale(%x: tensor<4x8xf32>, %s: tensor<8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d1)>,
                                        affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32):
      %m = arith.mulf %a, %b : f32
      linalg.yield %m : f32
  } -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
"""


def test_the_kind_runs_its_functions_on_zeros(ireebench_tester, examples):
    module = ireebench_tester.compile_module(ZEROS_MODULE)
    result = ireebench_tester.run(f"--module={module}", "--dispatch_statistics",
                                  "--function=zeros_scale", "--enable_output_processing",
                                  plugins=[examples["zeros_kind.py"]])
    assert result.exit_code == 0, result.stderr
    names = [row.benchmark_name for row in result.rows]
    assert names[0] == "BM_zeros_scale/process_time/real_time" and len(names) >= 2
    assert "4x8xf32=" + "[0 0 0 0 0 0 0 0]" * 4 in result.stdout.splitlines()
    discovered = ireebench_tester.run(f"--module={module}", plugins=[examples["zeros_kind.py"]])
    assert [row.benchmark_name for row in discovered.rows] == [
        "BM_zeros_scale/process_time/real_time"]


def test_the_backend_over_ssh(ireebench_tester, examples, tmp_path, monkeypatch):
    """A stand-in for ssh runs the remote command here, with the native tools on PATH."""
    log, bin_dir = tmp_path / "ssh.log", tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "ssh").write_text(
        "#!/bin/sh\n"
        f'printf "%s\\n" "$*" >> {log}\n'
        "shift\n"
        f'PATH="{tool_path(BENCHMARK_TOOL).parent}:$PATH" exec sh -c "$*"\n')
    (bin_dir / "ssh").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    ssh = [examples["ssh_backend.py"]]
    out = tmp_path / "out.json"
    result = ireebench_tester.run("--backend=ssh", "--ssh_host=bench-host",
                                  "--benchmark_repetitions=3", "--benchmark_statistics=p90",
                                  f"--benchmark_out={out}", "--benchmark_format=csv",
                                  plugins=ssh)
    assert result.exit_code == 0, result.stderr
    names = [row.benchmark_name for row in result.rows]
    assert names.count(TINY) == 3 and names[-1] == f"{TINY}_p90"
    assert [row["name"] for row in json.loads(out.read_text())["benchmarks"]] == names
    assert result.stdout.startswith("name,iterations")
    [remote] = log.read_text().splitlines()
    assert remote.startswith("bench-host iree-benchmark-module --module=")
    assert "--benchmark_out" not in remote and "--benchmark_format=json" in remote
    assert "--benchmark_format=csv" not in remote
    outputs = ireebench_tester.run("--backend=ssh", "--ssh_host=bench-host", "--function=add",
                                   "--input=4xf32=1 2 3 4", "--input=4xf32=1",
                                   "--enable_output_processing", plugins=ssh)
    assert outputs.exit_code == 0, outputs.stderr
    assert "4xf32=2 3 4 5" in outputs.stdout  # the value with spaces arrived whole
    assert ireebench_tester.run("--backend=ssh", plugins=ssh).error_lines == [
        "ireebench: error: --backend=ssh: needs --ssh_host=HOST"]
    assert ireebench_tester.run("--backend=ssh", "--ssh_host=h", "--benchmark_cold_start",
                                plugins=ssh).error_lines == [
        ("ireebench: error: --benchmark_cold_start=true: needs a backend that measures in this "
        "process with the IREE runtime (capability 'in_process'); --backend=ssh does not have "
        "it")]


def test_the_pinned_executor(ireebench_tester, examples):
    """Each point in a process of its own on the CPU named: the rows of every point,
    each saying the CPU; a CPU the process may not use is one line before anything."""
    pinned = [examples["pinned_executor.py"]]
    cpu = max(os.sched_getaffinity(0))
    result = ireebench_tester.run("--executor=pinned", f"--pinned_cpu={cpu}",
                                  "--sweep=batch_size=1,2", plugins=pinned)
    assert result.exit_code == 0, result.stderr
    assert [(row.params, row.provenance["pinned_cpu"]) for row in result.rows] == [
        ({"batch_size": 1}, str(cpu)), ({"batch_size": 2}, str(cpu))]
    refused = ireebench_tester.run("--executor=pinned", "--pinned_cpu=4096", plugins=pinned)
    assert refused.exit_code == 1
    assert refused.stderr.strip() == ("ireebench: error: --pinned_cpu=4096: not a CPU this "
                                      "process may use")


def test_the_report_section(ireebench_tester, examples):
    """The budget section comes right after the summary, each benchmark against its
    budget in the page's unit."""
    run = ireebench_tester.tmp_path / "run.json"
    result = ireebench_tester.run(f"--benchmark_out={run}")
    assert result.exit_code == 0, result.stderr
    page = ireebench_tester.tmp_path / "report.html"
    result = ireebench_tester.subcommand("report", run, "-o", page,
                                         plugins=[str(examples["mycorp_budget.py"])])
    assert result.exit_code == 0, result.stderr
    text = page.read_text()
    assert re.findall(r'<section id="[^"]+"><h2>([^<]+)</h2>', text)[:2] == ["Summary",
                                                                            "Budgets"]
    section = text.split("Budgets</h2>", 1)[1].split("</section>", 1)[0]
    name = TINY.removesuffix("/process_time/real_time")
    assert re.search(rf"<td>{name}</td><td class=\"num\">[\d.]+ \S+</td>"
                     rf"<td class=\"num\">[\d.]+ \S+</td><td>within</td>", section), section
