"""Files ireebench writes, through the real CLI: never a special file replaced,
a full disk is one line, and a failed report never truncates the old one.

Device nodes are made with ``mknod`` (root only; skipped otherwise): a
private null device and a private ``/dev/full``, so the machine's own
``/dev/null`` is never at risk.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import threading

import pytest
from conftest import ireebench_lines, one_error_line

LOCAL = ["--device=local-sync", "--benchmark_min_time=2x"]
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="mknod needs root")


@pytest.fixture(scope="module")
def simple(compile_mlir):
    return f"--module={compile_mlir('simple')}"


def _device(path, minor: int):
    """A character device node (1, minor): 3 is null, 7 is full."""
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, minor))
    return path


def _is_char_device(path) -> bool:
    return stat.S_ISCHR(os.stat(path).st_mode)


@ROOT_ONLY
def test_benchmark_out_writes_through_a_null_device(ireebench, simple, tmp_path):
    null = _device(tmp_path / "null", 3)
    result = ireebench(simple, *LOCAL, f"--benchmark_out={null}")
    assert result.returncode == 0, result.stderr
    assert _is_char_device(null)  # not replaced by a regular file
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null"]  # no temporary left


@ROOT_ONLY
@pytest.mark.parametrize("flag", ["benchmark_out", "output", "profile_output",
                                  "device_replay_output"])
def test_every_output_flag_on_a_full_device_is_one_line(ireebench, compile_mlir, tmp_path,
                                                         flag):
    full = _device(tmp_path / "full", 7)
    extra = {
        "benchmark_out": [],
        "output": ["--function=add", "--input=4xf32=1", "--input=4xf32=2",
                   "--enable_output_processing"],
        "profile_output": ["--dispatch_statistics"],
        "device_replay_output": [],
    }[flag]
    value = f"@{full}" if flag == "output" else str(full)
    module = compile_mlir("two_dispatches" if flag == "profile_output" else "simple")
    result = ireebench(f"--module={module}", *LOCAL, *extra, f"--{flag}={value}")
    assert result.returncode == 1
    [line] = ireebench_lines(result)  # measured first: the context block is on stderr too
    assert f"--{flag}=" in line and str(full) in line, line
    assert "No space left on device" in line or "failed" in line, line
    assert _is_char_device(full)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full"]


def _through_fifo(fifo, run):
    """What ``run()`` (an ireebench call writing to ``fifo``) sent through the FIFO,
    read by a thread while it runs (the run must succeed)."""
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()))
    reader.start()
    result = run()
    reader.join(timeout=300)
    assert result.returncode == 0, result.stderr
    return received[0]


def test_benchmark_out_writes_through_a_fifo(ireebench, simple, tmp_path):
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    text = _through_fifo(fifo, lambda: ireebench(simple, *LOCAL, f"--benchmark_out={fifo}"))
    assert json.loads(text)["benchmarks"]  # the whole report went through
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)  # still a FIFO
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.fifo"]


def test_benchmark_out_to_dev_stdout_is_not_replaced(simple, tmp_path):
    """/dev/stdout: the report goes to the process's stdout (here a pipe)."""
    env = dict(os.environ, IREEBENCH_DISABLE_PLUGIN_AUTOLOAD="1")
    proc = subprocess.run([sys.executable, "-m", "ireebench", simple, *LOCAL,
                           "--reporter=csv", "--benchmark_out=/dev/stdout",
                           "--benchmark_out_format=json"],
                          capture_output=True, text=True, env=env, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert '"benchmarks": [' in proc.stdout and "name,iterations" in proc.stdout
    assert not os.path.isfile("/dev/stdout") or os.path.islink("/dev/stdout")


def _report_text_in(text: str) -> bool:
    """Every part of the JSON report is in ``text`` (the console's rows may sit
    between its records: both write the one descriptor, nothing overwritten)."""
    return ('"context": {' in text and '"benchmarks": [' in text
            and text.count('"run_name": "BM_noargs/process_time/real_time"') == 1
            and text.count('"run_name": "BM_entry_wrapper/process_time/real_time"') == 1
            and text.rstrip().endswith("}"))


def test_a_link_to_stdout_writes_through_a_pipe(ireebench, simple, tmp_path):
    """``--benchmark_out=/dev/stdout`` with stdout a pipe, through a link of our own."""
    link = tmp_path / "stdout"
    link.symlink_to("/proc/self/fd/1")
    result = ireebench(simple, *LOCAL, f"--benchmark_out={link}", "--benchmark_out_format=json")
    assert result.returncode == 0, result.stderr
    assert _report_text_in(result.stdout) and "BM_noargs/process_time/real_time " in result.stdout
    assert link.is_symlink() and os.readlink(link) == "/proc/self/fd/1"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stdout"]


@pytest.mark.parametrize("spelling", ["link", "/proc/self/fd/1"])
def test_stdout_redirected_to_a_file_is_written_through(simple, tmp_path, spelling):
    """``--benchmark_out=/dev/stdout > results.json``: the report lands in the file
    the shell opened (appended to the console's lines, never truncating them),
    and neither the link nor the file is replaced."""
    (tmp_path / "link").symlink_to("/proc/self/fd/1")
    out = str(tmp_path / "link") if spelling == "link" else spelling
    results = tmp_path / "results.json"
    env = dict(os.environ, IREEBENCH_DISABLE_PLUGIN_AUTOLOAD="1")
    with open(results, "wb") as stdout:
        proc = subprocess.run([sys.executable, "-m", "ireebench", simple, *LOCAL,
                               f"--benchmark_out={out}", "--benchmark_out_format=json"],
                              stdout=stdout, stderr=subprocess.PIPE, text=True, env=env,
                              timeout=120, check=False)
        inode = os.fstat(stdout.fileno()).st_ino
    assert proc.returncode == 0, proc.stderr
    text = results.read_text()
    assert _report_text_in(text), text
    assert "BM_noargs/process_time/real_time " in text  # the console's row is kept
    assert results.stat().st_ino == inode and (tmp_path / "link").is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "results.json"]


def test_a_link_to_a_regular_file_updates_the_file_and_keeps_the_link(ireebench, simple,
                                                                        tmp_path):
    """``latest.json -> runs/real.json``: runs/real.json is rewritten (atomically),
    latest.json stays a link; a link to a file not yet there creates it."""
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "real.json").write_text("previous")
    (tmp_path / "latest.json").symlink_to("runs/real.json")
    result = ireebench(simple, *LOCAL, f"--benchmark_out={tmp_path / 'latest.json'}")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "latest.json").is_symlink()
    assert json.loads((runs / "real.json").read_text())["benchmarks"]
    (tmp_path / "next.json").symlink_to(runs / "next.json")
    result = ireebench(simple, *LOCAL, f"--benchmark_out={tmp_path / 'next.json'}")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "next.json").is_symlink()
    assert json.loads((runs / "next.json").read_text())["benchmarks"]
    assert sorted(p.name for p in runs.iterdir()) == ["next.json", "real.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latest.json", "next.json", "runs"]


def test_a_link_to_a_fifo_is_written_through(ireebench, simple, tmp_path):
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    (tmp_path / "link").symlink_to(fifo)
    text = _through_fifo(
        fifo, lambda: ireebench(simple, *LOCAL, f"--benchmark_out={tmp_path / 'link'}"))
    assert json.loads(text)["benchmarks"]
    assert (tmp_path / "link").is_symlink() and stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_link_loop_is_one_line(ireebench, simple, tmp_path):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    line = one_error_line(ireebench(simple, *LOCAL, f"--benchmark_out={tmp_path / 'a'}"))
    assert line == (f"ireebench: error: --benchmark_out={tmp_path / 'a'}: cannot write: "
                    "Too many levels of symbolic links")


def test_output_and_profile_output_keep_the_atomic_rename(ireebench, compile_mlir, tmp_path):
    """Regular files: written whole; an existing file's mode is kept."""
    out = tmp_path / "result.npy"
    out.write_bytes(b"old")
    out.chmod(0o600)
    result = ireebench(f"--module={compile_mlir('simple')}", *LOCAL, "--function=add",
                       "--input=4xf32=1", "--input=4xf32=2", "--enable_output_processing",
                       f"--output=@{out}")
    assert result.returncode == 0, result.stderr
    assert out.read_bytes().startswith(b"\x93NUMPY")
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    bundle = tmp_path / ("b" * 240 + ".ireeprof")  # near NAME_MAX: the temporary still fits
    result = ireebench(f"--module={compile_mlir('two_dispatches')}", *LOCAL,
                       "--dispatch_statistics", f"--profile_output={bundle}")
    assert result.returncode == 0, result.stderr
    assert bundle.stat().st_size > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([out.name, bundle.name])


def test_a_failing_reporter_never_truncates_the_old_file(ireebench, simple, tmp_path):
    good = tmp_path / "good.json"
    good.write_text('{"benchmarks": []}')
    plugin = tmp_path / "failing_reporter.py"
    plugin.write_text("from ireebench import Reporter, hookimpl\n\n"
                      "class Failing(Reporter):\n"
                      "    def report_context(self, context):\n"
                      "        self.stream.write('{partial')\n"
                      "        raise ValueError('cannot report')\n\n"
                      "@hookimpl\n"
                      "def ireebench_reporters():\n"
                      "    return {'failing': Failing}\n")
    result = ireebench(simple, *LOCAL, f"--plugin={plugin}", f"--benchmark_out={good}",
                       "--benchmark_out_format=failing")
    assert result.returncode == 3, result.stderr
    assert good.read_text() == '{"benchmarks": []}'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["failing_reporter.py", "good.json"]


@pytest.mark.parametrize("encoding", ["utf-8", "ascii"])
def test_context_values_that_are_not_utf8(simple, tmp_path, encoding):
    """A --benchmark_context byte that is not UTF-8, in a UTF-8 or an ASCII locale:
    the report is complete and valid JSON (``\\udcff``), the display shows it."""
    good = tmp_path / "good.json"
    good.write_text("previous")
    env = dict(os.environ, IREEBENCH_DISABLE_PLUGIN_AUTOLOAD="1", PYTHONIOENCODING=encoding)
    proc = subprocess.run([os.fsencode(sys.executable), b"-m", b"ireebench",
                           os.fsencode(simple), *map(os.fsencode, LOCAL),
                           b"--benchmark_context=caf\xe9=\xff\xc3\xa9",
                           os.fsencode(f"--benchmark_out={good}")],
                          capture_output=True, env=env, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(good.read_text(encoding="utf-8"))
    assert report["context"]["caf\udce9"] == "\udcff\u00e9"
    assert b"caf\xe9: \xff" in proc.stderr  # the console's context, bytes as they came


def test_disk_full_on_a_regular_file_is_one_line(ireebench, simple, tmp_path):
    """A small tmpfs in a private mount namespace fills up while the report is written."""
    unshare = shutil.which("unshare")
    if unshare is None or os.geteuid() != 0:
        pytest.skip("needs unshare and root for a private tmpfs")
    mount = tmp_path / "small"
    mount.mkdir()
    (tmp_path / "keep").write_text("x")
    script = (f"mount -t tmpfs -o size=16k tmpfs {mount} && "
              f"printf previous > {mount}/out.json && "
              f"{sys.executable} -m ireebench {simple} {' '.join(LOCAL)} "
              f"--benchmark_context=big={'x' * 30000} --benchmark_out={mount}/out.json; "
              f"echo EXIT=$?; cat {mount}/out.json; echo; ls -a {mount}")
    env = dict(os.environ, IREEBENCH_DISABLE_PLUGIN_AUTOLOAD="1")
    proc = subprocess.run([unshare, "-m", "sh", "-c", script], capture_output=True, text=True,
                          env=env, timeout=120, check=False)
    if "mount:" in proc.stderr and "EXIT=" not in proc.stdout:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")
    assert "EXIT=1" in proc.stdout, (proc.stdout, proc.stderr)
    errors = [line for line in proc.stderr.splitlines() if line.startswith("ireebench:")]
    assert errors == [(f"ireebench: error: --benchmark_out={mount}/out.json: cannot write: "
                       "No space left on device")], proc.stderr
    assert "Traceback" not in proc.stderr
    listing = proc.stdout.split("EXIT=1", 1)[1]
    assert "previous" in listing  # the old file is kept
    assert ".tmp" not in listing  # and no temporary is left
