"""The Python API: ``ireebench.run`` writes only to the streams it is given."""

from __future__ import annotations

import io

import ireebench
import pytest


@pytest.fixture
def simple(compile_mlir):
    return [f"--module={compile_mlir('simple')}", "--device=local-sync"]


def _run(argv, **kwargs):
    out, err = io.StringIO(), io.StringIO()
    result = ireebench.run(argv, stdout=out, stderr=err, **kwargs)
    return result, out.getvalue(), err.getvalue()


def test_list_tests_goes_to_the_given_stdout(simple, capfd):
    result, out, _ = _run([*simple, "--benchmark_list_tests"])
    assert result.exit_code == 0
    assert "BM_noargs/process_time/real_time\n" in out
    assert capfd.readouterr() == ("", "")


def test_output_processing_goes_to_the_given_stdout(simple, capfd):
    result, out, _ = _run([*simple, "--function=add", "--input=4xf32=1 2 3 4",
                           "--input=4xf32=1", "--benchmark_min_time=1x",
                           "--enable_output_processing"])
    assert result.exit_code == 0
    assert "result[0]: hal.buffer_view\n4xf32=2 3 4 5\n" in out
    assert capfd.readouterr() == ("", "")


def test_help_and_agents_md_go_to_the_given_stdout(capfd):
    _, out, _ = _run(["--help"])
    assert out.startswith("Usage: ireebench")
    _, out, _ = _run(["--agents_md"])
    assert out.startswith("# ireebench replay capture")
    assert capfd.readouterr() == ("", "")


def test_warnings_and_statistics_go_to_the_given_stderr(simple, capfd):
    result, _, err = _run([*simple, "--benchmark_min_time=1x", "-p", "no:nothing",
                           "--print_statistics"])
    assert result.exit_code == 0
    assert "ireebench: warning: -p no:nothing: no plugin named 'nothing'" in err
    assert "Device: local-sync" in err
    assert capfd.readouterr() == ("", "")


def test_native_backend_output_goes_to_the_given_streams(simple, capfd):
    result, out, err = _run([*simple, "--backend=native", "--function=add",
                             "--input=4xf32=1 2 3 4", "--input=4xf32=1",
                             "--benchmark_min_time=1x", "--enable_output_processing"])
    assert result.exit_code == 0, err
    assert "4xf32=2 3 4 5" in out
    assert capfd.readouterr() == ("", "")


class Collector:
    """A plugin object: given to ``ireebench.run(plugins=[...])``, registered for that run."""

    def __init__(self):
        self.rows = []
        self.finished = None

    @ireebench.hookimpl
    def ireebench_benchmark_result(self, config, run):
        self.rows.append((config.run_id, run.benchmark_name, run.real_seconds))

    @ireebench.hookimpl
    def ireebench_sessionfinish(self, exitstatus):
        self.finished = exitstatus


def test_plugin_objects_receive_the_results(simple):
    collector = Collector()
    result = ireebench.run([*simple, "--benchmark_min_time=2x", "--benchmark_repetitions=2"],
                           plugins=[collector])
    assert result.exit_code == 0 and collector.finished == 0
    assert [name for _, name, _ in collector.rows] == [run.benchmark_name for run in result.runs]
    assert len({run_id for run_id, _, _ in collector.rows}) == 1  # one run, one id
    again = Collector()
    ireebench.run([*simple, "--benchmark_min_time=2x"], plugins=[again])
    assert again.rows and collector.rows[0][0] != again.rows[0][0]  # and each run its own


def test_rows_by_name_and_repetition(simple):
    result = ireebench.run([*simple, "--benchmark_min_time=2x", "--benchmark_repetitions=3"])
    name = "BM_noargs/process_time/real_time"
    with pytest.raises(KeyError, match="3 rows are named"):
        result.by_name(name)  # one per repetition: never a silent pick
    second = result.by_name(name, repetition=1)
    assert second.repetition_index == 1
    mean = result.by_name(name + "_mean")
    assert mean.real_seconds == pytest.approx(mean.real_time * 1e-3)  # ms -> s
    with pytest.raises(KeyError, match="no row"):
        result.by_name("BM_nope")
    data = second.to_dict()
    assert data["real_seconds"] == second.real_seconds and data["extra_row"] is False
    assert data["samples"] == second.samples and data["family_name"] == "BM_noargs"
