"""Scratch folders (core/_scratch.py: a run's, a Ray node's): one whose holder was
killed before its cleanup is removed by the next made beside it; a held one, or one
that is not ireebench's, stays. Real processes holding real locks."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile

from ireebench._scratch import Scratch, sweep

PREFIX = "ireebench-ray-"
# Holds a folder until its stdin closes; its child (every descriptor it may pass on,
# passed) outlives it, as a ranking's worker may outlive its killed actor for a moment.
HOLD = ("import subprocess, sys\n"
        "from ireebench._scratch import Scratch\n"
        "path = Scratch(sys.argv[1]).path\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import sys; sys.stdin.read()'],\n"
        "                         stdin=subprocess.PIPE, close_fds=False)\n"
        "print(path, child.pid, flush=True)\n"
        "sys.stdin.read()\n")


def _holder(tmp_path) -> tuple[subprocess.Popen, str, int]:
    """A process holding a scratch folder, the folder, and the pid of its child."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD, PREFIX], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "TMPDIR": str(tmp_path)})
    path, child = proc.stdout.readline().split()
    return proc, path, int(child)


def test_a_killed_holders_folder_goes_with_the_next_and_a_live_ones_stays(tmp_path,
                                                                         monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    killed, killed_path, orphan = _holder(tmp_path)
    alive, alive_path, alive_child = _holder(tmp_path)
    try:
        (tmp_path / PREFIX / "not-ours").mkdir(parents=True)  # no lock file: left alone
        # A link planted under the prefix is not followed, to a folder that looks stale.
        precious = tmp_path / "precious"
        precious.mkdir()
        (precious / ".holder.lock").touch()
        (tmp_path / f"{PREFIX}link").symlink_to(precious)
        os.kill(killed.pid, signal.SIGKILL)
        killed.wait()
        assert os.path.isdir(killed_path)  # a holder killed cleans nothing up
        mine = Scratch(PREFIX)
        assert not os.path.exists(killed_path)
        assert os.path.isdir(alive_path) and os.path.isdir(tmp_path / PREFIX / "not-ours")
        assert (tmp_path / f"{PREFIX}link").is_symlink() and precious.is_dir()
        assert os.path.dirname(mine.path) == str(tmp_path)
        # The killed holder's child still runs, and did not keep its folder held: the
        # lock's descriptor is not inherited.
        os.kill(orphan, 0)
        mine.remove()
        assert not os.path.exists(mine.path)
    finally:
        for pid in (orphan, alive_child):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        alive.stdin.close()
        alive.wait()
    # Its holder ended (its own cleanup is not what is tested: it never ran it).
    assert os.path.isdir(alive_path)
    sweep(PREFIX)
    assert not os.path.exists(alive_path)
