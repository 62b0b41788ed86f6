"""Scratch folders, which a holder killed before its cleanup leaves to the next.

A run's scratch directory (``Config.scratch_dir``: compiled modules, module
copies, the native tool's inputs), a Ray point's task and a ranking's actor
on a node (the modules and inputs the driver ships) each copy files into a
folder of the temporary directory and remove it when they end. A holder
that is killed never gets there: a run killed by SIGKILL or the OOM killer,
a task that Ctrl-C on the driver force-cancels, an actor ``ray.kill`` ends,
a node whose machine dies. Its copies would stay for good (a tuner's
candidates, ranking after ranking). So each folder holds an ``flock`` on
its own lock file for as long as its holder lives (its forked workers share
the lock; a program it executes does not), and whoever makes a new folder
of the same prefix removes those whose lock it can take: their holder is
gone. pytest removes
its numbered temporary folders the same way (``make_numbered_dir_with_cleanup``
in ``_pytest/pathlib.py``), by a pid in the lock file; the kernel's lock
cannot be fooled by a pid that a restarted node or another namespace reuses.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat

LOCK = ".holder.lock"


class Scratch:
    """A folder of the temporary directory, held while this process (or one it forked)
    lives; ``prefix`` names what makes it, and which stale folders it removes."""

    def __init__(self, prefix: str):
        self.prefix = prefix
        self.pid = os.getpid()  # its maker (a forked child shares the folder)
        import tempfile
        self.path = os.path.realpath(tempfile.mkdtemp(prefix=prefix))
        # Locked before it has its name, so that no sweeper ever finds it unlocked. A
        # child this process forks shares the lock; a program it executes does not (the
        # descriptor is not inheritable), so it never outlives its holder's death.
        fresh = os.path.join(self.path, LOCK + ".new")
        self._fd: int | None = os.open(fresh, os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o600)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # a file system without locks (some NFS): a folder as mkdtemp's,
            os.close(self._fd)  # which no sweeper takes for a stale one
            self._fd = None
            return
        os.rename(fresh, os.path.join(self.path, LOCK))
        sweep(prefix, keep=self.path)

    def remove(self) -> None:
        import shutil
        shutil.rmtree(self.path, ignore_errors=True)
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None


def sweep(prefix: str, keep: str = "") -> None:
    """Removes this user's folders ``prefix*`` of the temporary directory whose holder
    is gone (their lock is free). A folder without a lock file is left: not one of
    ours to judge."""
    import shutil
    import tempfile
    base = os.path.realpath(tempfile.gettempdir())
    try:
        names = os.listdir(base)
    except OSError:
        return
    for name in names:
        if not name.startswith(prefix):
            continue
        path = os.path.join(base, name)  # not followed: a link planted there is no folder
        if path == keep:
            continue
        try:
            info = os.lstat(path)
            if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
                continue
            fd = os.open(os.path.join(path, LOCK), os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # its holder lives
            os.close(fd)
            continue
        try:
            shutil.rmtree(path, ignore_errors=True)
        finally:
            os.close(fd)
