"""ireebench runs only what it was asked to run.

* No shell: no ``shell=True``, no ``os.system``/``os.popen``, no command
  built as a string anywhere in core/ and plugins/ (a static check of the
  source), and a module path full of shell syntax reaches the native tool as
  one argument.
* No unpickling: a .npy file with an object dtype is refused, and a payload
  that would create a file when unpickled does not create it.
* Temporary files live in private directories that are removed, also after
  an error or an interrupt.
* ``IREEBENCH_DISABLE_PLUGIN_AUTOLOAD=1`` keeps installed plugins from being
  imported at all.
"""

from __future__ import annotations

import ast
import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT, one_error_line
from ireebench.native.tools import private_tempdir

SOURCES = sorted([*ROOT.glob("core/**/*.py"), *ROOT.glob("plugins/**/*.py")])

# --- static check of the source ----------------------------------------------

RUNNERS = {"run", "Popen", "call", "check_call", "check_output"}
FORBIDDEN_CALLS = {("os", "system"), ("os", "popen"), ("subprocess", "getoutput"),
                   ("subprocess", "getstatusoutput")}
FORBIDDEN_MODULES = {"pickle", "cPickle", "marshal", "shelve", "dill"}


def _is_string_expression(node: ast.AST) -> bool:
    """A command given as one string: literal, f-string, concatenation, format, join."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        return _is_string_expression(node.left) or _is_string_expression(node.right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr in ("format", "join") and _is_string_expression(node.func.value)
    return False


def _dotted(node: ast.AST) -> tuple[str, ...]:
    if isinstance(node, ast.Attribute):
        return (*_dotted(node.value), node.attr)
    if isinstance(node, ast.Name):
        return (node.id,)
    return ()


def unsafe_constructs(source: str, filename: str = "<source>") -> list[str]:
    """What in ``source`` could run a shell or unpickle data."""
    problems = []
    for node in ast.walk(ast.parse(source, filename)):
        where = f"{filename}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            names += [alias.name for alias in node.names]
            if any(name.split(".")[0] in FORBIDDEN_MODULES for name in names):
                problems.append(f"{where}: imports {', '.join(names)}")
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func)
        for keyword in node.keywords:
            if keyword.arg == "shell" and not (
                isinstance(keyword.value, ast.Constant) and keyword.value.value is False
            ):
                problems.append(f"{where}: shell=")
            if keyword.arg == "allow_pickle" and not (
                isinstance(keyword.value, ast.Constant) and keyword.value.value is False
            ):
                problems.append(f"{where}: allow_pickle= other than False")
        if name[-2:] in FORBIDDEN_CALLS or name in (("eval",), ("exec",)):
            problems.append(f"{where}: {'.'.join(name)}()")
        runner = (name[-1:] and name[-1] in RUNNERS and "subprocess" in name) or (
            len(name) == 2 and name[0] == "os" and name[1].startswith(("exec", "spawn"))
        )
        if runner and node.args and _is_string_expression(node.args[0]):
            problems.append(f"{where}: command built as a string")
    return problems


def test_the_static_check_finds_unsafe_code():
    """The checker itself: each of these must be reported."""
    bad = {
        "subprocess.run(cmd, shell=True)": "shell=",
        "subprocess.Popen(args, shell=flag)": "shell=",
        "os.system('ls ' + path)": "os.system()",
        "os.popen(f'ls {path}')": "os.popen()",
        "subprocess.run(f'{tool} --module={path}')": "as a string",
        "subprocess.check_output('tool ' + path)": "as a string",
        "subprocess.run(' '.join(args))": "as a string",
        "os.execv('/bin/sh -c x', [])": "as a string",
        "import pickle": "imports",
        "from shelve import open": "imports",
        "np.load(path, allow_pickle=True)": "allow_pickle",
        "eval(text)": "eval()",
    }
    for snippet, expected in bad.items():
        problems = unsafe_constructs(snippet)
        assert problems and expected in problems[0], (snippet, problems)
    assert unsafe_constructs("subprocess.run([tool, f'--module={path}'], shell=False)") == []


def test_no_shell_or_unpickling_in_core_and_plugins():
    assert len(SOURCES) > 20, SOURCES  # core/ and plugins/ were found
    problems = [p for path in SOURCES
                for p in unsafe_constructs(path.read_text(), str(path.relative_to(ROOT)))]
    assert problems == []


def test_shell_syntax_in_a_path_is_just_a_name(ireebench, compile_mlir, tmp_path):
    """A module path full of shell syntax reaches the native tool as one argument."""
    directory = tmp_path / "dir with spaces"
    directory.mkdir()
    module = directory / "m;touch PWNED;$(touch PWNED2)`touch PWNED3`.vmfb"
    module.write_bytes(compile_mlir("simple").read_bytes())
    result = ireebench(f"--module={module}", "--device=local-sync", "--backend=native",
                       "--benchmark_min_time=2x", "--benchmark_format=json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert len(result.json()["benchmarks"]) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir with spaces"]
    assert sorted(p.name for p in directory.iterdir()) == [module.name]


# --- .npy files are never unpickled -----------------------------------------


class _CreatesFileWhenUnpickled:
    """Pickles as ``open(path, "w")``: unpickling it creates ``path``."""

    def __init__(self, path: Path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def malicious_npy(npy: Path, marker: Path) -> Path:
    array = np.array([_CreatesFileWhenUnpickled(marker)], dtype=object)
    np.save(npy, array, allow_pickle=True)
    return npy


def test_malicious_payload_is_live(tmp_path):
    """The payload really does create its file when unpickled (in a child)."""
    marker = tmp_path / "created_by_unpickling"
    npy = malicious_npy(tmp_path / "live.npy", marker)
    subprocess.run([sys.executable, "-c",
                    f"import numpy; numpy.load({str(npy)!r}, allow_pickle=True)"],
                   check=True, timeout=300)
    assert marker.exists()


@pytest.mark.parametrize("flag, value", [
    ("--input", "@{npy}"),
    ("--input", "+{npy}"),
    ("--input", "*{npy}"),
    ("--expected_output", "@{npy}"),
])
def test_object_npy_is_refused_and_never_unpickled(ireebench, compile_mlir, tmp_path, flag,
                                                    value):
    marker = tmp_path / "created_by_unpickling"
    npy = malicious_npy(tmp_path / "evil.npy", marker)
    value = value.format(npy=npy)
    args = [f"--module={compile_mlir('simple')}", "--device=local-sync",
            "--benchmark_min_time=1x", "--function=add"]
    if flag == "--input":
        args += [f"--input={value}", "--input=4xf32=1"]
    else:
        args += ["--input=4xf32=1", "--input=4xf32=2", "--enable_output_processing",
                 f"--expected_output={value}"]
    result = ireebench(*args)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("ireebench: error:")]
    assert len(errors) == 1 and f"{flag}={value}" in errors[0], result.stderr
    assert not marker.exists()


# --- temporary files -----------------------------------------------------------


def test_private_tempdir_is_private_and_removed_on_failure():
    with pytest.raises(RuntimeError), private_tempdir() as scratch:
        assert stat.S_IMODE(scratch.stat().st_mode) == 0o700
        (scratch / "work.bin").write_bytes(b"x")
        kept = scratch
        raise RuntimeError("failure inside")
    assert not kept.exists()


def _env(tmpdir: Path, **extra) -> dict:
    env = dict(os.environ, TMPDIR=str(tmpdir), **extra)
    env.setdefault("IREEBENCH_DISABLE_PLUGIN_AUTOLOAD", "1")
    return env


@pytest.mark.parametrize("extra, exit_code", [
    pytest.param([], 0, id="success"),
    pytest.param(["--function=nope"], 1, id="usage-error"),
    pytest.param(["--backend=native"], 0, id="native-backend"),
    pytest.param(["--backend=native", "--function=add", "--input=4xf32=1"], 1,
                 id="native-backend-error"),
])
def test_stdin_module_scratch_is_removed(compile_mlir, tmp_path, extra, exit_code):
    """--module=- is saved to a private directory (for native passes); it goes away."""
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "ireebench", "--module=-", "--device=local-sync",
         "--benchmark_min_time=1x", *extra],
        input=compile_mlir("simple").read_bytes(), capture_output=True, env=_env(tmpdir),
        timeout=120, check=False)
    assert proc.returncode == exit_code, proc.stderr.decode()
    assert b"Traceback" not in proc.stderr
    assert list(tmpdir.iterdir()) == []


@pytest.mark.parametrize("source", ["stdin", "mmap"])
def test_module_scratch_is_removed_after_sigterm(compile_mlir, tmp_path, source):
    """A module from stdin is held in memory (no file in TMPDIR, also with the
    worker); a mapped one is a private copy in TMPDIR, removed on SIGTERM."""
    from test_faults import FAULTS_MLIR

    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    module = compile_mlir(FAULTS_MLIR)
    args = ["--module=-"] if source == "stdin" else [f"--module={module}", "--module_mode=mmap"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "ireebench", *args, "--device=local-sync",
         "--benchmark_min_time=40x", "--benchmark_filter=BM_(ok|slow)"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(tmpdir))
    try:
        if source == "stdin":
            proc.stdin.write(module.read_bytes())
        proc.stdin.close()
        for line in proc.stdout:
            if line.startswith(b"BM_ok"):
                # The worker's supervisor makes the scratch directory (its lock file
                # only: ireebench/scratch.py).
                files = [path for path in tmpdir.rglob("*") if path.is_file()
                         and path.name != ".holder.lock"]
                if source == "stdin":
                    assert files == [], "stdin is read into memory"
                else:
                    assert files, "the private copy was expected in TMPDIR"
                proc.send_signal(signal.SIGTERM)
                break
        proc.wait(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143
    assert list(tmpdir.iterdir()) == []


# --- plugin autoload ----------------------------------------------------------------

ENTRY_POINT_PLUGIN = """
# Imported only through the `ireebench` entry point group: proves it ran.
import os
from pathlib import Path

Path(os.environ["AUTOLOAD_MARKER"]).write_text("imported")
"""


@pytest.mark.parametrize("disable, blocked, imported", [
    pytest.param(None, False, True, id="autoload"),
    pytest.param("1", False, False, id="disabled"),
    pytest.param(None, True, False, id="blocked-with-p-no"),
])
def test_plugin_autoload_can_be_disabled(compile_mlir, tmp_path, disable, blocked, imported):
    """An installed plugin (an entry point) is imported unless autoload is off."""
    site = tmp_path / "site"
    dist_info = site / "planted_plugin-1.0.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: planted-plugin\n"
                                        "Version: 1.0\n")
    (dist_info / "entry_points.txt").write_text("[ireebench]\nplanted = planted_plugin\n")
    (site / "planted_plugin.py").write_text(textwrap.dedent(ENTRY_POINT_PLUGIN))
    marker = tmp_path / "marker"
    env = dict(os.environ, PYTHONPATH=str(site), AUTOLOAD_MARKER=str(marker))
    env.pop("IREEBENCH_DISABLE_PLUGIN_AUTOLOAD", None)
    if disable:
        env["IREEBENCH_DISABLE_PLUGIN_AUTOLOAD"] = disable
    args = ["-p", "no:planted"] if blocked else []
    proc = subprocess.run(
        [sys.executable, "-m", "ireebench", f"--module={compile_mlir('simple')}",
         "--device=local-sync", "--benchmark_list_tests", *args],
        capture_output=True, text=True, env=env, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert marker.exists() == imported


def test_object_npy_message_is_one_line(ireebench, compile_mlir, tmp_path):
    npy = tmp_path / "objects.npy"
    np.save(npy, np.array([1, "two", None], dtype=object), allow_pickle=True)
    line = one_error_line(ireebench(f"--module={compile_mlir('simple')}", "--device=local-sync",
                                    "--function=add", f"--input=@{npy}", "--input=4xf32=1"))
    assert f"--input=@{npy}" in line and "allow_pickle" in line
