"""One wrong path never destroys the store, a report, an input or the module.

Every output of a run, and of the commands that read reports, is refused in
one line, before anything is measured or written, when it is the same file
(device and inode, links resolved; or the same path, not there yet) as one of
the run's inputs, the results store (and its ``-wal``/``-shm`` files) or
another of its outputs (``core/outfiles.py``'s ``RunFiles``, which the core
and each plugin register into). The file refused is left as it was.
"""

from __future__ import annotations

import hashlib
import io
import json
import os

import ireebench as ireebench_api
import numpy as np
import pytest
from conftest import one_error_line

QUICK = ["--device=local-sync", "--function=noargs", "--benchmark_min_time=1x"]
ADD = ["--device=local-sync", "--function=add", "--benchmark_min_time=1x"]


@pytest.fixture(scope="module")
def module(compile_mlir):
    return compile_mlir("simple")


@pytest.fixture()
def copy(module, tmp_path):
    """A copy of the module in the test's directory (the test may ask to overwrite it)."""
    path = tmp_path / "m.vmfb"
    path.write_bytes(module.read_bytes())
    return path


@pytest.fixture(scope="module")
def store(tmp_path_factory, module):
    """A results store with one saved run."""
    path = tmp_path_factory.mktemp("store") / "results.sqlite"
    result = ireebench_api.run([f"--module={module}", *QUICK, "--benchmark_save",
                                f"--benchmark_storage={path}"])
    assert result.exit_code == 0
    return path


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def refused(*args) -> str:
    """The message of a command refused before it ran (the Python API: the real
    plugin manager, no interpreter started)."""
    with pytest.raises(ireebench_api.UsageError) as caught:
        ireebench_api.run([str(arg) for arg in args])
    return str(caught.value)


def test_the_cli_refuses_a_report_over_the_module_and_the_store(ireebench, copy, store,
                                                                tmp_path):
    """The issue's cases through the CLI: --benchmark_report=<the module>, and
    --benchmark_out=<the store> --benchmark_save (which printed 'saved run' and left
    "database disk image is malformed"); store export --out=<the store>."""
    before = _digest(copy)
    result = ireebench(f"--module={copy}", *QUICK, f"--benchmark_report={copy}")
    assert one_error_line(result) == (
        f"ireebench: error: --benchmark_report={copy}: is the same file as --module={copy} "
        "(an input of this run): refusing to overwrite it; choose another path")
    assert result.stdout == "" and _digest(copy) == before
    store_before = _digest(store)
    result = ireebench(f"--module={copy}", *QUICK, f"--benchmark_out={store}",
                       "--benchmark_save", f"--benchmark_storage={store}")
    assert one_error_line(result) == (
        f"ireebench: error: --benchmark_out={store}: is the same file as the results store "
        f"sqlite:///{store} (an input of this run): refusing to overwrite it; choose "
        "another path")
    result = ireebench("store", "export", f"--out={store}", f"--benchmark_storage={store}")
    assert "--out=" in one_error_line(result) and "the results store" in result.stderr
    assert _digest(store) == store_before
    assert ireebench("history", f"--benchmark_storage={store}").returncode == 0


def test_outputs_of_a_run_are_checked_against_its_inputs_and_each_other(copy, store, tmp_path):
    """Each pair of the run's files, in one line naming both: an input (module, .npy
    and @file inputs, parameter archive, the store's WAL), another output (even
    through a hard link or a symbolic link)."""
    inputs = tmp_path / "in.npy"
    np.save(inputs, np.arange(4, dtype=np.float32))
    raw = tmp_path / "in.bin"
    raw.write_bytes(bytes(16))
    archive = tmp_path / "w.irpa"
    archive.write_bytes(b"irpa")
    linked = tmp_path / "link.json"
    linked.symlink_to(copy)
    hard = tmp_path / "hard.vmfb"
    os.link(copy, hard)
    out = tmp_path / "out.json"
    cases = [
        ([f"--module={copy}", *QUICK, f"--benchmark_out={linked}"],
         f"--benchmark_out={linked}: is the same file as --module={copy}"),
        ([f"--module={copy}", *QUICK, f"--benchmark_out={hard}"],
         f"--benchmark_out={hard}: is the same file as --module={copy}"),
        ([f"--module={copy}", *ADD, f"--input=@{inputs}", "--input=4xf32=1",
          f"--benchmark_out={inputs}"],
         f"--benchmark_out={inputs}: is the same file as --input=@{inputs}"),
        ([f"--module={copy}", *ADD, f"--input=4xf32=@{raw}", "--input=4xf32=1",
          "--enable_output_processing", f"--output=@{raw}"],
         f"--output=@{raw}: is the same file as --input=4xf32=@{raw}"),
        ([f"--module={copy}", *QUICK, f"--parameters=model={archive}",
          f"--benchmark_out={archive}"],
         f"--benchmark_out={archive}: is the same file as --parameters=model={archive}"),
        ([f"--module={copy}", *QUICK, "--benchmark_save", f"--benchmark_storage={store}",
          f"--benchmark_report={store}-wal"],
         f"--benchmark_report={store}-wal: is the same file as the results store's -wal file"),
        ([f"--module={copy}", *QUICK, f"--benchmark_out={out}", f"--benchmark_report={out}"],
         (f"--benchmark_report={out}: is the same file as --benchmark_out={out} (another "
          "output of this run)")),
        ([f"--module={copy}", *QUICK, f"--benchmark_out={out}", "--dispatch_statistics",
          f"--profile_output={tmp_path / '.' / 'out.json'}"],
         "is the same file as --benchmark_out="),
    ]
    for args, message in cases:
        assert message in refused(*args), args
    assert not out.exists()
    # A sweep of modules: each point's module is an input.
    other = tmp_path / "other.vmfb"
    other.write_bytes(copy.read_bytes())
    assert f"is the same file as --module={other}" in refused(
        "--sweep", f"m={copy},{other}", "--module={m}", *QUICK, f"--benchmark_out={other}")
    # Not the same file: two paths to new files, special files, stdout.
    ok = ireebench_api.run([f"--module={copy}", *QUICK, "--benchmark_out=/dev/null",
                            "--benchmark_report=/dev/null"])
    assert ok.exit_code == 0


def test_commands_that_read_reports_never_write_over_them(store, tmp_path):
    """report -o, merge -o, compare --out and store export --out: not over an input
    report, nor over the store a stored: reference reads."""
    report = tmp_path / "x.json"
    stream = io.StringIO()
    ireebench_api.run(["store", "export", f"--benchmark_storage={store}"], stdout=stream)
    report.write_text(stream.getvalue())
    before = _digest(report)
    storage = f"--benchmark_storage={store}"
    assert refused("report", report, "-o", report) == (
        f"--output={report}: is the same file as {report} (an input of this run): refusing "
        "to overwrite it; choose another path")
    assert f"--output={report}: is the same file as {report}" in refused(
        "merge", report, "-o", report)
    assert f"--out={report}: is the same file as {report}" in refused(
        "compare", report, report, f"--out={report}")
    assert f"--out={store}: is the same file as the results store" in refused(
        "compare", "stored:latest", report, f"--out={store}", storage, "--any_machine")
    assert f"--output={store}-shm: is the same file as the results store's -shm file" in \
        refused("merge", "stored:latest", "-o", f"{store}-shm", storage)
    assert _digest(report) == before
    assert json.loads(report.read_text())["benchmarks"]
