"""A real local Ray cluster in a network namespace of its own, for the Ray executor's tests.

Ray 2.60 binds its servers to the machine's network address whatever
``--node-ip-address`` says, so the cluster runs in a network namespace that
has only loopback up: nothing it opens can be reached from outside, nor
reach anything but loopback (Ray's lookup of its own address, a UDP probe
of 8.8.8.8, fails at once and falls back to 127.0.0.1). Every process of the
cluster and every ireebench run under test enter the same namespace.

How: a *holder* process made by ``unshare -n`` (``unshare -rn`` when not
root: a user namespace maps us to root in it) brings loopback up and then
waits on its stdin; everything else joins its namespace with
``nsenter --target PID --net`` (``--user --preserve-credentials`` too when
not root). Why not ``ip netns add``: a named namespace is a file in
/run/netns that outlives a crashed session and needs root; the holder's
namespace goes when its last process does, and the holder ends when its
stdin closes (the session that made it died).

The cluster: a head and workers started with ``ray start``, each with a
host name of its own (a UTS namespace: ``ray-head``, ``ray-worker-1`` ...,
as nodes on other machines have), the dashboard and usage statistics off,
small object stores, health checks every half second (a killed node is
known dead within about two seconds), each advertising the resources it is
given. Teardown kills every process in the
namespace (never ``ray stop``, which stops every Ray cluster of the
machine); :func:`clean_stale` does the same for the clusters of sessions
that died, found by their temporary directories.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PREFIX = "ireebench-ray-tests-"
HEAD_PORT = 6390
ADDRESS = f"127.0.0.1:{HEAD_PORT}"
# Half-second health checks: a node killed is marked dead within ~2 s (the
# default takes about 15 s, then its points are measured elsewhere).
SYSTEM_CONFIG = {"health_check_period_ms": 500, "health_check_timeout_ms": 500,
                 "health_check_failure_threshold": 3}
OBJECT_STORE_BYTES = 80_000_000  # Ray's minimum is 75 MB; points ship kilobytes
HOLDER = ("ip link set lo up && echo ready && exec cat >/dev/null")


class Unavailable(RuntimeError):
    """This machine cannot make the cluster's network namespace (a container without
    CAP_SYS_ADMIN, user namespaces turned off): the reason."""


def missing() -> str | None:
    """Why a cluster cannot be made here, or None."""
    if importlib.util.find_spec("ray") is None:
        return "Ray is not installed (pip install -e '.[dev]', or the ray extra)"
    for tool in ("unshare", "nsenter", "ip"):
        if shutil.which(tool) is None:
            return (f"{tool} is not installed (util-linux for unshare and nsenter, iproute2 "
                    "for ip)")
    return None


def _ray_binary() -> str:
    return str(Path(sys.executable).with_name("ray"))


def _netns_inode(pid: int) -> int | None:
    try:
        return os.stat(f"/proc/{pid}/ns/net").st_ino
    except OSError:
        return None


def _pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(
            errors="replace")
    except OSError:
        return ""


def _kill_namespace(inode: int, keep: int | None = None) -> None:
    """SIGKILL every process whose network namespace is ``inode`` (but ``keep``)."""
    for _ in range(3):  # a dying raylet may still start a worker
        found = [pid for pid in _pids() if pid != keep and pid != os.getpid()
                 and _netns_inode(pid) == inode]
        if not found:
            return
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.2)  # the kernel reaps; nothing to wait on for others' children


def clean_stale() -> None:
    """The clusters of test sessions that died: their processes killed, their folders gone."""
    root = Path(tempfile.gettempdir())
    for folder in root.glob(PREFIX + "*"):
        owner = folder / "owner.pid"
        try:
            pid = int(owner.read_text())
            os.kill(pid, 0)
            continue  # its session is alive
        except (OSError, ValueError):
            pass
        inodes = {_netns_inode(pid) for pid in _pids() if str(folder) in _cmdline(pid)}
        for inode in inodes - {None, _netns_inode(os.getpid())}:
            _kill_namespace(inode)
        shutil.rmtree(folder, ignore_errors=True)


class RayCluster:
    """A head and worker nodes in a network namespace of their own (see the module)."""

    def __init__(self, env: dict):
        self.folder = Path(tempfile.mkdtemp(prefix=PREFIX))
        (self.folder / "owner.pid").write_text(str(os.getpid()))
        self.env = {**env, "RAY_USAGE_STATS_ENABLED": "0"}
        # The nodes' temporary directory (one, as nodes on one machine share /tmp):
        # what they leave there is seen by node_scratch, and goes with the cluster.
        self.tmp = self.folder / "tmp"
        self.tmp.mkdir()
        self.holder = None
        self.inode = None
        self.workers: list[str] = []  # node ids, in start order
        self.started = 0  # worker nodes started so far (their host names' numbers)

    # --- the namespace ------------------------------------------------------

    def enter(self) -> list[str]:
        """The command prefix that runs a command in the cluster's namespace."""
        prefix = ["nsenter", f"--target={self.holder.pid}", "--net"]
        if os.geteuid() != 0:
            prefix += ["--user", "--preserve-credentials"]
        return [*prefix, "--"]

    def _open_namespace(self) -> None:
        unshare = ["unshare", "-n"] if os.geteuid() == 0 else ["unshare", "-rn"]
        self.holder = subprocess.Popen([*unshare, "sh", "-c", HOLDER], stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        line = self.holder.stdout.readline()
        if line.strip() != b"ready":
            said = self.holder.stderr.read().decode(errors="replace").strip()
            raise Unavailable(f"cannot make a network namespace ({' '.join(unshare)}): "
                              f"{said or 'no reason given'}")
        self.inode = _netns_inode(self.holder.pid)

    def run(self, command: list[str], timeout: float = 300, env: dict | None = None,
            cwd=None) -> subprocess.CompletedProcess:
        """``command`` in the namespace (its output captured as text)."""
        return subprocess.run([*self.enter(), *map(str, command)], capture_output=True,
                              text=True, errors="replace", timeout=timeout, cwd=cwd,
                              env={**self.env, **(env or {})}, check=False,
                              stdin=subprocess.DEVNULL)

    # --- the cluster --------------------------------------------------------

    def start(self, head: dict, workers: list[dict], cpus: list[int] | None = None
              ) -> RayCluster:
        """A head advertising ``head``, one worker node per resource dict of ``workers``
        (the ``i``-th on CPU ``cpus[i]`` alone, if given)."""
        self._open_namespace()
        self._ray_start(["--head", f"--port={HEAD_PORT}", "--include-dashboard=false",
                         "--disable-usage-stats", f"--temp-dir={self.folder}",
                         f"--system-config={json.dumps(SYSTEM_CONFIG)}"], head, "ray-head")
        for number, resources in enumerate(workers):
            self.add_worker(resources, cpu=cpus[number] if cpus else None)
        return self

    def _ray_start(self, arguments: list[str], resources: dict, host: str,
                   env: dict | None = None, cpu: int | None = None):
        """``ray start`` with a host name of its own (a UTS namespace): the node's rows
        say ``host``, as a node on another machine would say its own. ``cpu``: the node
        and everything it starts run on that CPU only (``taskset``), as a machine of
        its own would not share its CPUs with another node."""
        pinned = [] if cpu is None else ["taskset", "-c", str(cpu)]
        proc = self.run([*pinned, "unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"',
                         host, _ray_binary(), "start", *arguments, "--num-cpus=1",
                         f"--resources={json.dumps(resources)}",
                         f"--object-store-memory={OBJECT_STORE_BYTES}"],
                       env={"TMPDIR": str(self.tmp), **(env or {})})
        if proc.returncode != 0:
            raise RuntimeError(f"ray start failed: {proc.stdout[-2000:]} {proc.stderr[-2000:]}")

    def add_worker(self, resources: dict, env: dict | None = None,
                   cpu: int | None = None) -> str:
        """Starts a worker node (host name ``ray-worker-N``, on CPU ``cpu`` only if given);
        its node id."""
        before = set(self.node_ids())
        self.started += 1
        self._ray_start([f"--address={ADDRESS}"], resources, f"ray-worker-{self.started}", env,
                        cpu)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            new = set(self.node_ids()) - before
            if new:
                node_id = new.pop()
                self.workers.append(node_id)
                return node_id
            time.sleep(0.2)  # polling the cluster's own list of nodes, with a deadline
        raise RuntimeError("the new node never joined the cluster")

    def raylets(self) -> dict[str, int]:
        """Node id -> the pid of its raylet (from the raylets' command lines)."""
        found = {}
        for pid in _pids():
            if _netns_inode(pid) != self.inode:
                continue
            line = _cmdline(pid)
            if "raylet/raylet" not in line.split(" ", 1)[0]:
                continue
            for word in line.split():
                if word.startswith("--node_id="):
                    found[word.split("=", 1)[1]] = pid
        return found

    def point_processes(self) -> list[int]:
        """The point processes running on the nodes (``ireebench ... --point_index=``)."""
        return [pid for pid in _pids() if _netns_inode(pid) == self.inode
                and " -m ireebench " in (line := _cmdline(pid)) and "--point_index=" in line]

    def rank_workers(self) -> list[int]:
        """A ranking's warm workers running on the nodes (``ireebench rank ... --rank_serve=``)."""
        return [pid for pid in _pids() if _netns_inode(pid) == self.inode
                and " -m ireebench " in (line := _cmdline(pid)) and "--rank_serve=" in line]

    def node_scratch(self) -> list[str]:
        """The folders a point's task or a ranking's actor left in the nodes' temporary
        directory (core/_scratch.py)."""
        return sorted(path.name for path in self.tmp.iterdir()
                      if path.name.startswith(("ireebench-ray-", "ireebench-rank-")))

    def node_ids(self) -> list[str]:
        return list(self.raylets())

    def kill_node(self, node_id: str) -> None:
        """The node dies as a machine would: its raylet and everything it started, at once."""
        raylet = self.raylets()[node_id]
        children: dict[int, list[int]] = {}
        for pid in _pids():
            try:
                parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(parent, []).append(pid)
        tree, pending = [], [raylet]
        while pending:
            pid = pending.pop()
            tree.append(pid)
            pending += children.get(pid, [])
        # Its agents are the `ray start` launcher's, named after the node's raylet socket.
        for pid in tree:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ValueError):
            self.workers.remove(node_id)

    def kill_when_measuring(self, markers, proc, wanted=lambda name: True,
                            seconds: float = 300) -> tuple[str | None, str | None]:
        """Kills the first worker node that starts measuring a benchmark ``wanted`` takes
        (the ``point_interval`` plugin's marker files ``NODE@BENCHMARK`` in ``markers``),
        while ``proc`` (the run) still runs; ``(node id, benchmark)``, or ``(None, None)``
        if none did within ``seconds``."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and proc.poll() is None:
            for marker in os.listdir(markers):
                node_id, _, name = marker.partition("@")
                if node_id in self.workers and wanted(name):
                    self.kill_node(node_id)
                    return node_id, name
            time.sleep(0.02)  # polling for a marker file, with a deadline
        return None, None

    def stop(self) -> None:
        if self.inode is not None:
            _kill_namespace(self.inode, keep=self.holder.pid)
        if self.holder is not None:
            with contextlib.suppress(OSError):
                self.holder.stdin.close()
            try:
                self.holder.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.holder.kill()
                self.holder.wait()
            for stream in (self.holder.stdout, self.holder.stderr):
                stream.close()
        shutil.rmtree(self.folder, ignore_errors=True)
