"""--module=x.mlir: compiled for the selected device, cached by content, compiler and flags."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from conftest import FIXTURE_PLUGINS, MLIR_DIR, one_error_line

LOCAL = ["--device=local-sync", "--benchmark_min_time=2x"]


@pytest.fixture
def cached(ireebench, tmp_path, monkeypatch):
    """Runs ireebench with a private XDG_CACHE_HOME; returns (run, cache directory)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return ireebench, tmp_path / "cache" / "ireebench"


def _compiled(result) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("ireebench: compiled")]


def test_second_run_uses_the_cache_and_changes_recompile(cached, tmp_path):
    run, cache = cached
    source = tmp_path / "two.mlir"
    source.write_text((MLIR_DIR / "two_functions.mlir").read_text())
    first = run(f"--module={source}", *LOCAL)
    assert first.returncode == 0, first.stderr
    assert len(_compiled(first)) == 1
    assert "BM_first/process_time/real_time" in first.stdout
    [vmfb] = list(cache.iterdir())
    stamp = vmfb.stat().st_mtime_ns
    second = run(f"--module={source}", *LOCAL)
    assert second.returncode == 0 and _compiled(second) == []  # a cache hit
    assert [p.stat().st_mtime_ns for p in cache.iterdir()] == [stamp]
    # A changed flag recompiles.
    flagged = run(f"--module={source}", *LOCAL, "--compile_flag=--iree-opt-level=O1")
    assert len(_compiled(flagged)) == 1 and "--iree-opt-level=O1" in _compiled(flagged)[0]
    # A changed file recompiles.
    source.write_text(source.read_text().replace("@second", "@third"))
    changed = run(f"--module={source}", *LOCAL)
    assert len(_compiled(changed)) == 1
    assert "BM_third/process_time/real_time" in changed.stdout
    assert len(list(cache.iterdir())) == 3


def test_native_passes_use_the_compiled_module(cached, tmp_path):
    run, _ = cached
    source = tmp_path / "dispatches.mlir"
    source.write_text((MLIR_DIR / "two_dispatches.mlir").read_text())
    result = run(f"--module={source}", *LOCAL, "--dispatch_statistics", "--reporter=json")
    assert result.returncode == 0, result.stderr
    names = [row["name"] for row in result.json()["benchmarks"]]
    assert len(names) == 3 and names[0] == "BM_two_dispatches/process_time/real_time"
    native = run("--backend=native", f"--module={source}", *LOCAL)
    assert native.returncode == 0 and _compiled(native) == []


def test_a_compile_error_is_one_line(cached, tmp_path):
    run, _ = cached
    source = tmp_path / "broken.mlir"
    source.write_text("func.func @f() -> i32 { return %nope : i32 }\n")
    line = one_error_line(run(f"--module={source}", *LOCAL))
    assert f"--module={source}: iree-compile failed:" in line and "error" in line


def test_without_the_compiler_one_line_says_how_to_install_it(compile_mlir, tmp_path):
    source = tmp_path / "two.mlir"
    source.write_text((MLIR_DIR / "two_functions.mlir").read_text())
    env = dict(os.environ, IREEBENCH_DISABLE_PLUGIN_AUTOLOAD="1",
               XDG_CACHE_HOME=str(tmp_path / "cache"))
    hide_compiler = ("import sys; sys.modules['iree.compiler'] = None; "
                     "sys.modules['iree.compiler.tools'] = None; "
                     "from ireebench._cli import main; main()")
    proc = subprocess.run([sys.executable, "-c", hide_compiler, f"--module={source}", *LOCAL],
                          capture_output=True, text=True, env=env, timeout=120, check=False)
    assert proc.returncode == 1
    assert proc.stderr == (f"ireebench: error: --module={source}: compiling MLIR needs "
                           'iree-base-compiler: pip install "ireebench[compiler]"\n')


# --- the cache runs only what it wrote ----------------------------------------

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="making files another user owns "
                               "needs root")
OTHER_UID = 54321


def _warnings(result) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("ireebench: warning")]


def _source(tmp_path, name="two.mlir"):
    source = tmp_path / name
    source.write_text((MLIR_DIR / "two_functions.mlir").read_text())
    return source


def test_a_corrupt_entry_is_named_and_compiled_again(cached, tmp_path):
    run, cache = cached
    source = _source(tmp_path)
    assert run(f"--module={source}", *LOCAL).returncode == 0
    [entry] = list(cache.iterdir())
    data = bytearray(entry.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte
    entry.write_bytes(bytes(data))
    again = run(f"--module={source}", *LOCAL)
    assert again.returncode == 0, again.stderr
    assert _warnings(again) == [(f"ireebench: warning: --module={source}: cache entry {entry} "
                                "is corrupt (its content does not match its checksum): "
                                "removed, compiling again")]
    assert len(_compiled(again)) == 1 and "BM_first/process_time/real_time" in again.stdout
    hit = run(f"--module={source}", *LOCAL)
    assert _compiled(hit) == [] and _warnings(hit) == []


def test_an_entry_that_is_a_link_is_never_followed(cached, tmp_path):
    """A link named like the entry, to a module of someone else's making."""
    run, cache = cached
    source = _source(tmp_path)
    assert run(f"--module={source}", *LOCAL).returncode == 0
    [entry] = list(cache.iterdir())
    planted = tmp_path / "planted.mlir"
    planted.write_text("func.func @planted() -> i32 {\n  %c = arith.constant 1 : i32\n"
                       "  return %c : i32\n}\n")
    assert run(f"--module={planted}", *LOCAL).returncode == 0
    [other] = [p for p in cache.iterdir() if p != entry]
    entry.unlink()
    entry.symlink_to(other)  # same name, the other module's (valid) content
    result = run(f"--module={source}", *LOCAL)
    assert result.returncode == 0, result.stderr
    assert _warnings(result) == [(f"ireebench: warning: --module={source}: cache entry {entry} "
                                 "is a symbolic link: removed, compiling again")]
    assert "BM_first" in result.stdout and "BM_planted" not in result.stdout
    assert not entry.is_symlink()


def test_a_cache_others_can_write_is_not_used(cached, tmp_path):
    run, cache = cached
    source = _source(tmp_path)
    cache.mkdir(parents=True)
    cache.chmod(0o777)
    result = run(f"--module={source}", *LOCAL)
    assert result.returncode == 0, result.stderr
    assert _warnings(result) == [(f"ireebench: warning: --module={source}: compile cache "
                                 f"{cache} not used: {cache} is writable by everyone (nobody "
                                 "but you, and root above it, may write there); compiling "
                                 "for this run only")]
    assert "BM_first/process_time/real_time" in result.stdout
    assert list(cache.iterdir()) == []  # nothing cached, nothing left in a shared place


@ROOT_ONLY
def test_a_cache_or_entry_of_another_user_is_not_run(cached, tmp_path):
    """Run as root (as CI does): another user's cache directory, a directory above
    it that user owns, or an entry of theirs is never run."""
    run, cache = cached
    source = _source(tmp_path)
    assert run(f"--module={source}", *LOCAL).returncode == 0
    [entry] = list(cache.iterdir())
    os.chown(entry, OTHER_UID, OTHER_UID)
    result = run(f"--module={source}", *LOCAL)
    assert result.returncode == 0, result.stderr
    assert _warnings(result) == [(f"ireebench: warning: --module={source}: cache entry {entry} "
                                 f"is owned by uid {OTHER_UID}: removed, compiling again")]
    assert entry.stat().st_uid == 0
    for owned in (cache, cache.parent):  # the cache, then XDG_CACHE_HOME above it
        os.chown(owned, OTHER_UID, OTHER_UID)
        result = run(f"--module={source}", *LOCAL)
        assert result.returncode == 0, result.stderr
        [line] = _warnings(result)
        assert f"{owned} is owned by uid {OTHER_UID}" in line and "not used" in line, line
        assert len(_compiled(result)) == 1
        os.chown(owned, 0, 0)


def test_a_long_file_name_fits_the_cache(cached, tmp_path):
    run, cache = cached
    source = _source(tmp_path, "n" * 245 + ".mlir")
    first = run(f"--module={source}", *LOCAL)
    assert first.returncode == 0, first.stderr
    second = run(f"--module={source}", *LOCAL)
    assert second.returncode == 0 and _compiled(second) == [], second.stderr
    [entry] = list(cache.iterdir())
    assert len(entry.name) <= 200


def test_a_relative_xdg_cache_home_is_ignored(ireebench, tmp_path, monkeypatch):
    home = tmp_path / "home"
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", "relative-cache")
    source = _source(tmp_path)
    result = ireebench(f"--module={source}", *LOCAL, cwd=work)
    assert result.returncode == 0, result.stderr
    assert list(work.iterdir()) == []
    assert len(list((home / ".cache" / "ireebench").iterdir())) == 1
    assert oct((home / ".cache").stat().st_mode & 0o777) == "0o700"  # the XDG spec's mode


def test_the_key_is_the_compiler_that_runs(cached, tmp_path, monkeypatch):
    """IREE_TOOL_PATH chooses another iree-compile: compiled again, then cached."""
    from iree.compiler.tools.binaries import find_tool

    run, _ = cached
    source = _source(tmp_path)
    assert len(_compiled(run(f"--module={source}", *LOCAL))) == 1
    tools = tmp_path / "tools"
    tools.mkdir()
    wrapper = tools / "iree-compile"
    wrapper.write_text(f'#!/bin/sh\necho "wrapped" >&2\nexec {find_tool("iree-compile")} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("IREE_TOOL_PATH", str(tools))
    other = run(f"--module={source}", *LOCAL)
    assert other.returncode == 0 and len(_compiled(other)) == 1, other.stderr
    assert _compiled(run(f"--module={source}", *LOCAL)) == []
    os.utime(wrapper, ns=(1, 1))  # a rebuilt compiler at the same path
    assert len(_compiled(run(f"--module={source}", *LOCAL))) == 1


def test_the_key_holds_the_host_cpu(cached, tmp_path):
    """--iree-llvmcpu-target-cpu=host: another CPU (a /proc/cpuinfo of other
    features, bound over the real one in a private mount namespace) misses the
    cache; a generic CPU target does not depend on it."""
    unshare = shutil.which("unshare")
    if unshare is None or os.geteuid() != 0:
        pytest.skip("needs unshare and root for a private mount namespace")
    run, _ = cached
    source = _source(tmp_path)
    fake = tmp_path / "cpuinfo"
    fake.write_text("processor\t: 0\nvendor_id\t: OtherVendor\nmodel name\t: Other CPU\n"
                    "flags\t\t: fpu sse sse2\n\n")
    generic = "--compile_flag=--iree-llvmcpu-target-cpu=generic"

    def elsewhere(*args):
        script = f'mount --bind {fake} /proc/cpuinfo && exec "$@"'
        env = dict(os.environ, IREEBENCH_DISABLE_PLUGIN_AUTOLOAD="1",
                   PYTHONPATH=str(FIXTURE_PLUGINS))
        proc = subprocess.run([unshare, "-m", "sh", "-c", script, "sh", sys.executable, "-m",
                               "ireebench", *args], capture_output=True, text=True, env=env,
                              timeout=300, check=False)
        if "mount:" in proc.stderr:
            pytest.skip(f"cannot bind-mount here: {proc.stderr.strip()}")
        return proc

    for flags in ([], [generic]):
        assert len(_compiled(run(f"--module={source}", *LOCAL, *flags))) == 1
    host = elsewhere(f"--module={source}", *LOCAL)
    assert host.returncode == 0 and len(_compiled(host)) == 1, host.stderr
    assert _compiled(elsewhere(f"--module={source}", *LOCAL, generic)) == []
    assert _compiled(run(f"--module={source}", *LOCAL)) == []  # this machine's entry is kept
