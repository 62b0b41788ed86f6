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
