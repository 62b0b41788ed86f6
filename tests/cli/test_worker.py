"""The measurement survives the function it measures (core/_worker.py).

Through the real CLI, with real compiled MLIR: a function that never returns
ends on the first SIGINT/SIGTERM with the finished rows committed; a
function that crashes the process is that benchmark's error row and the
benchmarks after it still run; SIGINT/SIGTERM on the default ``local-task``
device exit 130/143. The tests wait on output markers (``START BM_x`` from
the ``worker_probe`` fixture plugin) or on the process's exit, never on a
sleep. Run with ``IREEBENCH_ISOLATION=none`` in the environment, every test
that is about the worker fails (they hang until their watchdog, or crash).
"""

from __future__ import annotations

import csv
import io
import json
import os
import pty
import select
import signal
import subprocess
import sys
import textwrap
import threading
import time

import ireebench
import pytest
from conftest import FIXTURE_PLUGINS, MLIR_DIR, TESTS_DIR, ireebench_lines

GOOD = """
func.func @{name}() -> tensor<4xf32> {{
  %c = arith.constant dense<[1.0, 2.0, 3.0, {value}.0]> : tensor<4xf32>
  %0 = arith.mulf %c, %c : tensor<4xf32>
  return %0 : tensor<4xf32>
}}"""

HANG = "\n" + (MLIR_DIR / "hang.mlir").read_text()

CRASH = "\n" + (MLIR_DIR / "crash.mlir").read_text()

SIGNALS = [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")]
PROBE = "--plugin=worker_probe"
FAST = ["--device=local-sync", "--benchmark_min_time=2x"]
# The hanging functions never return, so a run that ends at all (before
# Cli's watchdog) was cut short by the signal; how promptly (the worker's
# 0.4 s grace) is a timing question: benchmarks/interrupt_latency.py.


@pytest.fixture(scope="module")
def hang_module(compile_mlir):
    return compile_mlir(GOOD.format(name="good", value=1) + HANG)


@pytest.fixture(scope="module")
def crash_module(compile_mlir):
    return compile_mlir(GOOD.format(name="good", value=1) + CRASH
                        + GOOD.format(name="later", value=2))


@pytest.fixture(scope="module")
def four_module(compile_mlir):
    return compile_mlir("".join(GOOD.format(name=f"f{i}", value=i) for i in range(4)))


def _env() -> dict:
    return dict(os.environ, IREEBENCH_DISABLE_PLUGIN_AUTOLOAD="1",
                PYTHONPATH=os.pathsep.join([str(FIXTURE_PLUGINS),
                                            os.environ.get("PYTHONPATH", "")]))


class Cli:
    """``python -m ireebench`` running; a watchdog kills it after ``limit`` seconds
    (a test of a hang must fail, not hang, when nothing ends the run)."""

    def __init__(self, *args, cwd=None, limit: float = 300):
        self.proc = subprocess.Popen([sys.executable, "-m", "ireebench", *map(str, args)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env=_env(), cwd=cwd)
        self._watchdog = threading.Timer(limit, self.proc.kill)
        self._watchdog.daemon = True
        self._watchdog.start()
        self._stderr: list[str] = []

    def wait_for(self, marker: str) -> None:
        """Reads stderr until a line holds ``marker``."""
        for line in self.proc.stderr:
            self._stderr.append(line)
            if marker in line:
                return
        pytest.fail(f"no {marker!r} on stderr: {''.join(self._stderr)}")

    def signal(self, signum: int) -> None:
        self.proc.send_signal(signum)

    def until_delivered(self, signum: int, limit: float = 300) -> None:
        """Waits until the kernel has delivered ``signum`` to the process (it is
        no longer pending: its handler has run and noted it). Two signals sent
        back to back while the process is not scheduled are both pending, and
        Linux delivers the lower-numbered first (SIGINT before SIGTERM), so a
        test of "the first signal" must send the second only after this."""
        bit = 1 << (signum - 1)
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            with open(f"/proc/{self.proc.pid}/status") as status:
                fields = dict(line.split(":", 1) for line in status)
            if not (int(fields["SigPnd"], 16) | int(fields["ShdPnd"], 16)) & bit:
                return
            time.sleep(0.001)  # polls a condition; the kernel has no event for it
        pytest.fail(f"signal {signum} still pending after {limit} s")

    def finish(self) -> tuple[str, str]:
        """All output, once the process has ended."""
        stdout, stderr = self.proc.stdout.read(), self.proc.stderr.read()
        self.proc.wait()
        self._watchdog.cancel()
        return stdout, "".join(self._stderr) + stderr


class _Result:
    """What the conftest helpers read of a finished run."""

    def __init__(self, returncode: int, stdout: str, stderr: str):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def _leftovers(directory, *keep) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name not in keep)


def _rows(report: dict) -> list[tuple[str, str | None]]:
    return [(b["name"], b.get("error_message")) for b in report["benchmarks"]]


# --- a function that never returns ------------------------------------------

@pytest.mark.parametrize("signum, status, word", SIGNALS)
def test_a_hang_ends_on_the_first_signal_with_the_finished_rows(hang_module, tmp_path,
                                                              signum, status, word):
    out = tmp_path / "out.json"
    cli = Cli(f"--module={hang_module}", *FAST, PROBE, f"--benchmark_out={out}", cwd=tmp_path)
    cli.wait_for("REPETITION BM_hang")  # its first call: it never returns
    cli.signal(signum)
    stdout, stderr = cli.finish()
    assert cli.proc.returncode == status, stderr
    assert ireebench_lines(_Result(status, stdout, stderr)) == [f"ireebench: {word}"], stderr
    rows = _rows(json.loads(out.read_text()))
    assert [name for name, _ in rows] == ["BM_good/process_time/real_time",
                                         "BM_hang/process_time/real_time"]
    assert rows[0][1] is None
    # Acted on in Python code, or (almost always) the worker was stuck in
    # the function and killed: an error row either way.
    assert rows[1][1].startswith(f"interrupted by {signum.name} while running"), rows
    shown = [line.split()[0] for line in stdout.splitlines() if line.startswith("BM_")]
    assert shown == [name for name, _ in rows]  # the display holds the same rows
    assert _leftovers(tmp_path, "out.json") == []


@pytest.mark.parametrize("signum, status, word", SIGNALS)
def test_a_worker_that_cannot_answer_a_signal_is_killed_and_its_reports_finished(
        hang_module, tmp_path, signum, status, word):
    """--probe_deaf blocks the signals from BM_hang's start: the kill path, always."""
    out = tmp_path / "out.csv"
    cli = Cli(f"--module={hang_module}", *FAST, PROBE, "--probe_deaf=BM_hang",
              "--benchmark_format=json", f"--benchmark_out={out}", "--benchmark_out_format=csv",
              cwd=tmp_path)
    cli.wait_for("START BM_hang")
    cli.signal(signum)
    stdout, stderr = cli.finish()
    assert cli.proc.returncode == status, stderr
    assert stderr.splitlines()[-1] == f"ireebench: {word}"
    message = (f"interrupted by {signum.name} while running (the function did not return; "
               "the worker was killed)")
    display = _rows(json.loads(stdout))  # the JSON display was closed
    assert display == [("BM_good/process_time/real_time", None),
                       ("BM_hang/process_time/real_time", message)]
    text = out.read_text()
    table = list(csv.DictReader(io.StringIO(text[text.index("name,iterations,"):])))
    assert [(row["name"], row["error_message"] or None) for row in table] == display
    assert _leftovers(tmp_path, "out.csv") == []


def test_a_second_signal_to_a_hanging_worker_keeps_the_first_signals_status(hang_module,
                                                                           tmp_path):
    out = tmp_path / "out.json"
    cli = Cli(f"--module={hang_module}", *FAST, PROBE, "--probe_deaf=BM_hang",
              f"--benchmark_out={out}", cwd=tmp_path)
    cli.wait_for("START BM_hang")
    cli.signal(signal.SIGTERM)
    cli.until_delivered(signal.SIGTERM)
    cli.proc.send_signal(signal.SIGINT)  # the user insists
    _, stderr = cli.finish()
    assert cli.proc.returncode == 143, stderr
    assert [name for name, _ in _rows(json.loads(out.read_text()))] == [
        "BM_good/process_time/real_time", "BM_hang/process_time/real_time"]
    assert _leftovers(tmp_path, "out.json") == []


def test_a_worker_killed_after_closing_its_reports_ends_with_the_signal(four_module, tmp_path):
    """A signal while the run ends (a page drawn in native code, a save stuck in a C
    call) that the worker cannot acknowledge: killed, and the run exits 130 with a
    line saying what was cut short, never 0 (the reports were closed: complete)."""
    out = tmp_path / "out.json"
    cli = Cli(f"--module={four_module}", *FAST, PROBE, "--probe_deaf=sessionfinish",
              f"--benchmark_out={out}", cwd=tmp_path)
    cli.wait_for("DEAF sessionfinish")
    cli.signal(signal.SIGINT)
    _, stderr = cli.finish()
    assert cli.proc.returncode == 130, stderr
    assert stderr.splitlines()[-2:] == [
        ("ireebench: warning: the worker process did not answer SIGINT in "
        "ireebench_sessionfinish and was killed after closing its reports: what that step "
        "had not finished is lost"), "ireebench: interrupted"]
    assert len(json.loads(out.read_text())["benchmarks"]) == 4
    assert _leftovers(tmp_path, "out.json") == []


def test_a_terminal_ctrl_c_ends_a_hang(hang_module, tmp_path):
    """On a real terminal: Ctrl-C reaches the supervisor (the foreground process
    group); the worker, in a group of its own, gets it forwarded once."""
    out = tmp_path / "out.json"
    args = [sys.executable, "-m", "ireebench", f"--module={hang_module}", *FAST, PROBE,
            "--probe_deaf=BM_hang", f"--benchmark_out={out}"]
    pid, terminal = pty.fork()
    if pid == 0:  # the child: ireebench on the terminal
        try:
            os.chdir(tmp_path)
            os.execve(sys.executable, args, _env())
        finally:
            os._exit(127)
    output = _read_until(terminal, b"START BM_hang")  # from here it cannot answer
    os.write(terminal, b"\x03")  # Ctrl-C
    output += _read_until(terminal, None)
    _, wait_status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(wait_status) == 130, output
    assert b"ireebench: interrupted" in output
    assert [name for name, _ in _rows(json.loads(out.read_text()))] == [
        "BM_good/process_time/real_time", "BM_hang/process_time/real_time"]
    assert _leftovers(tmp_path, "out.json") == []


def _read_until(fd: int, marker: bytes | None, limit: float = 300) -> bytes:
    """What the terminal shows until a line holds ``marker`` (None: until it closes)."""
    data = b""
    deadline = time.monotonic() + limit
    while marker is None or marker not in data or b"\n" not in data.split(marker, 1)[1]:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            pytest.fail(f"timed out waiting for {marker!r}: {data.decode(errors='replace')}")
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the terminal's last process has gone
            chunk = b""
        if not chunk:
            if marker is None:
                return data
            pytest.fail(f"no {marker!r}: {data.decode(errors='replace')}")
        data += chunk
    return data


def test_ctrl_z_stops_the_worker_with_the_supervisor(four_module, tmp_path):
    """Ctrl-Z under a job-control shell stops both processes; `fg` resumes both."""
    args = [sys.executable, str(TESTS_DIR / "fixtures" / "jobshell.py"), sys.executable, "-m",
            "ireebench", f"--module={four_module}", "--device=local-sync",
            "--benchmark_min_time=0.2s", PROBE]
    pid, terminal = pty.fork()
    if pid == 0:
        try:
            os.execve(sys.executable, args, _env())
        finally:
            os._exit(127)
    _read_until(terminal, b"START BM_f1")
    os.write(terminal, b"\x1a")  # Ctrl-Z
    output = _read_until(terminal, b"JOB STOPPED")
    states = output.split(b"JOB STOPPED", 1)[1].split()
    assert states == [b"T", b"T"], output  # the supervisor and its one worker
    os.write(terminal, b"fg\n")
    output = _read_until(terminal, None)
    os.waitpid(pid, 0)
    assert b"JOB EXIT 0" in output, output
    assert b"BM_f3/process_time/real_time" in output


def test_the_worker_dies_with_its_supervisor(hang_module, tmp_path):
    """A supervisor killed with SIGKILL leaves no worker measuring (PR_SET_PDEATHSIG)."""
    cli = Cli(f"--module={hang_module}", *FAST, PROBE, cwd=tmp_path)
    cli.wait_for("START BM_hang")
    worker = _worker_of(cli.proc.pid)
    assert os.getpgid(worker) == worker != os.getpgid(cli.proc.pid)  # a group of its own
    handle = os.pidfd_open(worker)
    cli.proc.kill()
    cli.finish()
    ready, _, _ = select.select([handle], [], [], 10)
    os.close(handle)
    assert ready, "the worker outlived its supervisor"


def _worker_of(pid: int) -> int:
    with open(f"/proc/{pid}/task/{pid}/children") as handle:
        children = [int(child) for child in handle.read().split()]
    assert len(children) == 1, children
    return children[0]


# --- a function that crashes the process ------------------------------------

def test_a_crash_is_that_benchmarks_error_row_and_the_rest_still_run(crash_module, tmp_path):
    out = tmp_path / "out.json"
    cli = Cli(f"--module={crash_module}", *FAST, "--benchmark_format=json",
              f"--benchmark_out={out}", cwd=tmp_path)
    stdout, stderr = cli.finish()
    assert cli.proc.returncode == 1, stderr  # a failed benchmark
    assert ireebench_lines(_Result(1, stdout, stderr)) == []
    expected = CRASH_ROWS
    display = json.loads(stdout)  # one valid document: the replay was muted
    assert _rows(display) == expected
    assert [b["family_index"] for b in display["benchmarks"]] == [0, 1, 2]
    report = json.loads(out.read_text())
    assert _rows(report) == expected
    assert report["context"] == display["context"]
    assert _leftovers(tmp_path, "out.json") == []


CRASH_ROWS = [("BM_good/process_time/real_time", None),
              ("BM_crash/process_time/real_time",
               "the process crashed: SIGSEGV (Segmentation fault) while running BM_crash"),
              ("BM_later/process_time/real_time", None)]


def _ireebench(*args, stdin: bytes | None = None, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ireebench", *map(str, args)], input=stdin,
                          capture_output=True, env=_env(), cwd=cwd, timeout=120, check=False)


def test_a_saved_run_keeps_the_rows_from_before_a_crash(crash_module, tmp_path):
    """A plugin reading the whole run at its end (the results store) gets every
    row: the resumed worker replayed the first one into its hub, not to the
    streaming hook."""
    store = tmp_path / "results.sqlite"
    run = _ireebench(f"--module={crash_module}", *FAST, "--benchmark_save",
                     f"--benchmark_storage={store}", "--benchmark_format=json", cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    exported = _ireebench("store", "export", f"--benchmark_storage={store}")
    assert exported.returncode == 0, exported.stderr
    assert _rows(json.loads(exported.stdout)) == CRASH_ROWS


def test_a_crash_with_the_module_on_stdin_resumes_with_the_same_bytes(crash_module, tmp_path):
    """Standard input is read once: the resumed worker takes the bytes the first read."""
    run = _ireebench("--module=-", *FAST, "--benchmark_format=json",
                     stdin=crash_module.read_bytes(), cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    assert _rows(json.loads(run.stdout)) == CRASH_ROWS


def test_a_crash_in_a_sweep_is_that_points_error_row(crash_module, tmp_path):
    run = _ireebench(f"--module={crash_module}", *FAST, "--sweep=function=good,crash,later",
                     "--benchmark_format=json", cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    # Interleaved (a sweep's default), the crashed point's row may come first.
    rows = {row["params"]["function"]: row for row in json.loads(run.stdout)["benchmarks"]}
    assert sorted(rows) == ["crash", "good", "later"]
    assert {name: bool(row.get("error_occurred")) for name, row in rows.items()} == {
        "good": False, "crash": True, "later": False}
    assert "SIGSEGV" in rows["crash"]["error_message"]


def test_a_fifo_report_continues_after_a_crash(crash_module, tmp_path):
    """A FIFO's reader gets one whole report: the supervisor keeps the FIFO open
    while the resumed worker writes the rest (it would otherwise see the end
    when the worker died, and the next open would wait for a reader forever)."""
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()), daemon=True)
    reader.start()
    cli = Cli(f"--module={crash_module}", *FAST, f"--benchmark_out={fifo}", cwd=tmp_path)
    _, stderr = cli.finish()
    reader.join(timeout=300)
    assert cli.proc.returncode == 1, stderr
    assert [name for name, _ in _rows(json.loads(received[0]))] == [
        "BM_good/process_time/real_time", "BM_crash/process_time/real_time",
        "BM_later/process_time/real_time"]


def test_an_abort_is_an_error_row_and_the_console_continues(four_module, tmp_path):
    cli = Cli(f"--module={four_module}", *FAST, PROBE, "--probe_abort=BM_f1", cwd=tmp_path)
    stdout, stderr = cli.finish()
    assert cli.proc.returncode == 1, stderr
    lines = stdout.splitlines()
    assert [line.split()[0] for line in lines if line.startswith("BM_")] == [
        f"BM_f{i}/process_time/real_time" for i in range(4)]
    # The row names the hook (and the plugin) the process died in.
    assert "BM_f1/process_time/real_time ERROR OCCURRED: 'the process crashed: SIGABRT " \
           "(Aborted) while running BM_f1 (in ireebench_workload_start of plugin " \
           "'worker_probe')'" in lines
    # The console continued where the dead worker stopped: one header, one context.
    assert sum(line.startswith("Benchmark ") for line in lines) == 1
    assert stderr.count("Run on (") == 1
    probe = json.loads(stderr.split("PROBE ", 1)[1].splitlines()[0])
    assert probe["repetitions"] == 2  # the resumed worker measured f2 and f3 (1 each)


def test_a_worker_that_dies_before_any_benchmark_is_one_line(four_module, tmp_path):
    """In a plugin's hook: the plugin's error (exit 3), naming the hook, as if it raised."""
    out = tmp_path / "out.json"
    cli = Cli(f"--module={four_module}", *FAST, PROBE, "--probe_abort=sessionstart",
              f"--benchmark_out={out}", cwd=tmp_path)
    _stdout, stderr = cli.finish()
    assert cli.proc.returncode == 3, stderr
    # The finalizer worker still called ireebench_sessionfinish (the probe's line).
    stderr = "".join(line for line in stderr.splitlines(True) if not line.startswith("PROBE "))
    assert [line for line in stderr.splitlines() if line.strip()] == [
        ("ireebench: plugin error: plugin 'worker_probe' failed in ireebench_sessionstart: "
        "WorkerDied: the process crashed: SIGABRT (Aborted) before any benchmark ran")]
    assert _leftovers(tmp_path) == []  # no file, no temporary


def test_a_worker_that_dies_in_a_hook_after_closing_its_reports_is_the_plugins_error(
        four_module, tmp_path):
    """What the hook had to do (a save, a page) is not done: never exit 0; the reports
    are complete."""
    out = tmp_path / "out.json"
    cli = Cli(f"--module={four_module}", *FAST, PROBE, "--probe_abort=sessionfinish",
              f"--benchmark_out={out}", cwd=tmp_path)
    _, stderr = cli.finish()
    assert cli.proc.returncode == 3, stderr
    assert "ireebench: plugin error: plugin 'worker_probe' failed in ireebench_sessionfinish: " \
           "WorkerDied: the process crashed: SIGABRT (Aborted) after closing the reports" \
           in stderr.splitlines()
    assert len(json.loads(out.read_text())["benchmarks"]) == 4
    assert _leftovers(tmp_path, "out.json") == []


def test_a_worker_that_dies_in_its_teardown_keeps_its_status(four_module, tmp_path):
    out = tmp_path / "out.json"
    cli = Cli(f"--module={four_module}", *FAST, PROBE, "--probe_abort=cleanup",
              f"--benchmark_out={out}", cwd=tmp_path)
    _, stderr = cli.finish()
    assert cli.proc.returncode == 0, stderr
    assert "ireebench: warning: the worker process crashed: SIGABRT (Aborted) after closing " \
           "its reports" in stderr
    assert len(json.loads(out.read_text())["benchmarks"]) == 4
    assert _leftovers(tmp_path, "out.json") == []


def test_a_plugin_that_crashes_on_a_measured_row_keeps_the_rows_and_is_named(four_module,
                                                                             tmp_path):
    """os.abort() in ireebench_benchmark_result of BM_f1's row: BM_f0's and BM_f1's rows
    (measured) are reported, the run stops as on the plugin's exception (exit 3), and
    the line names the plugin and the hook, not 'while running BM_f1'."""
    out = tmp_path / "out.json"
    cli = Cli(f"--module={four_module}", *FAST, PROBE, "--probe_abort=result:BM_f1",
              f"--benchmark_out={out}", cwd=tmp_path)
    _, stderr = cli.finish()
    assert cli.proc.returncode == 3, stderr
    assert "ireebench: plugin error: plugin 'worker_probe' failed in ireebench_benchmark_result: " \
           "WorkerDied: the process crashed: SIGABRT (Aborted); the rows measured before are " \
           "kept" in stderr.splitlines()
    rows = json.loads(out.read_text())["benchmarks"]
    assert [(row["name"], row.get("error_occurred", False)) for row in rows] == [
        ("BM_f0/process_time/real_time", False), ("BM_f1/process_time/real_time", False)]
    assert _leftovers(tmp_path, "out.json") == []


@pytest.mark.parametrize("fd", [1, 2])
def test_a_plugin_that_closes_stdout_or_stderr_is_named_and_the_rows_kept(four_module,
                                                                          tmp_path, fd):
    """Not the console or environment plugin that writes there next: the hook's plugin,
    and the rows measured are in --benchmark_out."""
    plugin = tmp_path / "closer.py"
    plugin.write_text(textwrap.dedent(f"""
        import os
        from ireebench import hookimpl

        @hookimpl
        def ireebench_benchmark_result(config, run):
            if run.run_name.startswith("BM_f1/"):
                os.close({fd})
    """))
    out = tmp_path / "out.json"
    run = _ireebench(f"--module={four_module}", *FAST, f"--plugin={plugin}",
                     f"--benchmark_out={out}", cwd=tmp_path)
    assert run.returncode == 3, run.stderr
    stream = "standard output (fd 1)" if fd == 1 else "standard error (fd 2)"
    assert run.stderr.decode().splitlines()[-1] == (
        "ireebench: plugin error: plugin 'closer' failed in ireebench_benchmark_result: "
        f"StandardStreamClosed: closed or replaced the process's {stream}, where ireebench "
        "writes")
    assert [row["name"] for row in json.loads(out.read_text())["benchmarks"]] == [
        "BM_f0/process_time/real_time", "BM_f1/process_time/real_time"]


# --- SIGINT / SIGTERM on local-task ------------------------------------------

@pytest.mark.parametrize("isolation", ["worker", "none"])
@pytest.mark.parametrize("signum, status, word", SIGNALS)
def test_signals_on_local_task_exit_130_and_143(four_module, tmp_path, signum, status, word,
                                                isolation):
    """The default device. In process, the interrupted repetition's batch used to
    outlive the device (held by the traceback) and end the run in SIGSEGV. BM_f1's
    repetition, its batch prepared, waits for the signal (--probe_hold): it comes
    while BM_f1 runs however busy the machine (sent once BM_f1 started, a busy
    machine could let BM_f1 finish first)."""
    out = tmp_path / "out.json"
    cli = Cli(f"--module={four_module}", "--benchmark_min_time=0.01s", PROBE,
              "--probe_hold=BM_f1", f"--isolation={isolation}", f"--benchmark_out={out}",
              cwd=tmp_path)
    cli.wait_for("HOLD BM_f1")
    cli.signal(signum)
    _, stderr = cli.finish()
    assert cli.proc.returncode == status, stderr
    assert stderr.splitlines()[-1] == f"ireebench: {word}"
    rows = _rows(json.loads(out.read_text()))
    assert rows[0] == ("BM_f0/process_time/real_time", None)
    assert rows[1:] == [("BM_f1/process_time/real_time",
                         f"interrupted by {signum.name} while running")]
    assert _leftovers(tmp_path, "out.json") == []


# --- one process for a run's plugins; --isolation=none ------------------------

def test_every_hook_of_the_run_runs_in_one_worker_process(four_module, tmp_path):
    cli = Cli(f"--module={four_module}", *FAST, "--benchmark_repetitions=2", PROBE,
              cwd=tmp_path)
    _, stderr = cli.finish()
    assert cli.proc.returncode == 0, stderr
    probe = json.loads(stderr.split("PROBE ", 1)[1].splitlines()[0])
    assert probe["repetitions"] == 8  # gathered in measure_repetition, seen at sessionfinish
    pids = probe["pids"]
    assert pids.pop("configure") == cli.proc.pid  # before the fork
    assert len(set(pids.values())) == 1 and cli.proc.pid not in pids.values(), pids


def test_isolation_none_is_todays_in_process_run(crash_module, tmp_path):
    cli = Cli(f"--module={crash_module}", *FAST, "--isolation=none", "--benchmark_format=json",
              f"--benchmark_out={tmp_path / 'out.json'}", cwd=tmp_path)
    cli.finish()
    assert cli.proc.returncode == -signal.SIGSEGV  # the function took the process


def test_the_python_api_runs_in_process_and_delivers_to_plugin_objects(four_module):
    class Collector:
        def __init__(self):
            self.rows, self.pids = [], set()

        @ireebench.hookimpl
        def ireebench_benchmark_result(self, run):
            self.rows.append(run.run_name)
            self.pids.add(os.getpid())

    collector = Collector()
    result = ireebench.run([f"--module={four_module}", *FAST], plugins=[collector])
    assert result.exit_code == 0
    assert collector.rows == [run.run_name for run in result.runs] == [
        f"BM_f{i}/process_time/real_time" for i in range(4)]
    assert collector.pids == {os.getpid()}


def test_the_python_api_can_ask_for_a_worker(crash_module, tmp_path):
    """--isolation=worker from Python: the rows come back, the display reaches
    the caller's in-memory stream (in a subprocess: the test process is not forked)."""
    script = textwrap.dedent(f"""
        import io, json, ireebench
        out = io.StringIO()
        result = ireebench.run(["--module=" + {str(crash_module)!r},
                                "--device=local-sync", "--benchmark_min_time=2x",
                                "--benchmark_format=json", "--isolation=worker"], out)
        print(json.dumps({{"exit_code": result.exit_code,
                           "rows": [r.run_name for r in result.runs],
                           "errors": [r.error_message for r in result.runs],
                           "display": [b["name"] for b in json.loads(out.getvalue())["benchmarks"]]}}))
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=_env(), timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    names = ["BM_good/process_time/real_time", "BM_crash/process_time/real_time",
             "BM_later/process_time/real_time"]
    assert result["exit_code"] == 1
    assert result["rows"] == result["display"] == names
    assert result["errors"][1].startswith("the process crashed: SIGSEGV")


@pytest.mark.parametrize("args, line", [
    (["--module=/nonexistent.vmfb", "--module=-"],
     "ireebench: error: NOT_FOUND; --module=/nonexistent.vmfb: file not found"),
    (["--module=-", "--module_mode=bogus"],
     ("ireebench: error: INVALID_ARGUMENT; --module_mode=bogus: unrecognized --module_mode= "
      "value 'bogus' (one of: preload, mmap)")),
    (["--module=-"], "ireebench: error: INVALID_ARGUMENT; --module=-: standard input is empty"),
])
def test_a_stdin_module_is_checked_in_the_same_order_with_and_without_the_worker(args, line):
    """The supervisor reads standard input before the fork, after the checks a run
    without a worker makes first."""
    for isolation in ("worker", "none"):
        run = _ireebench(*args, f"--isolation={isolation}", stdin=b"")
        assert run.returncode == 1
        assert run.stderr.decode().splitlines() == [line], isolation
