"""Resources are released: device buffers after each workload, the VM
context and every runtime object after each run, and long runs (over a
hundred workloads, tens of thousands of batches) do not grow memory.

The measurements run in one fresh Python process (``RESOURCES_SCRIPT``)
through the Python API, ``ireebench.run([...])``, so RSS is not disturbed by
pytest. A probe plugin reads the device allocator's statistics, which count
every byte the HAL allocates and frees, so a single leaked buffer shows.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# Ten functions with no arguments: ten workloads per run. The bodies are the
# same, so the compiler emits one executable and compiles quickly.
TEN_FUNCTIONS = "\n".join(f"""
func.func @f{i}() -> tensor<1024xf32> {{
  %c = util.unfoldable_constant dense<1.0> : tensor<1024xf32>
  %0 = arith.addf %c, %c : tensor<1024xf32>
  return %0 : tensor<1024xf32>
}}""" for i in range(10))

PROBE_PLUGIN = '''
"""Records the live bytes of the first device during a run, and keeps the
device so they can be read again after the run."""
from ireebench import hookimpl

RECORD = []
DEVICES = []


def live_bytes(device):
    s = device.allocator.statistics
    return (s["device_bytes_allocated"] - s["device_bytes_freed"]
            + s["host_bytes_allocated"] - s["host_bytes_freed"])


@hookimpl
def ireebench_sessionstart(session):
    DEVICES[:] = [session.device]
    RECORD[:] = [("start", live_bytes(session.device))]


@hookimpl
def ireebench_benchmark_result(run):
    RECORD.append((run.name, live_bytes(DEVICES[0])))


@hookimpl
def ireebench_sessionfinish(session, exitstatus):
    RECORD.append(("finish", live_bytes(DEVICES[0])))
'''

RESOURCES_SCRIPT = r'''
import gc, json, sys
import ireebench
from ireebench.inputs import PreparedInputs
from ireebench.kinds import Batch
from ireebench.reporting.hub import ReportHub
from ireebench._session import Session
from ireebench.workload import Workload

paths = json.loads(sys.argv[1])
results = {}


def rss():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024


def run(*args):
    result = ireebench.run([*args, "--device=local-sync"])
    assert result.exit_code == 0, result.exit_code
    return result


def probed(name, *args):
    """Runs with the probe; records its numbers and the live bytes after."""
    run(*args, f"--plugin={paths['probe']}")
    probe = sys.modules["ireebench_plugin_probe"]
    device = probe.DEVICES.pop()
    gc.collect()
    stats = device.allocator.statistics
    results[name] = {"during": probe.RECORD[:], "after": probe.live_bytes(device),
                     "allocated": stats["device_bytes_allocated"] + stats["host_bytes_allocated"]}


ten, simple, stateful = paths["ten"], paths["simple"], paths["async"]
add = ["--function=add", "--input=4xf32=1 2 3 4", "--input=4xf32=5"]
probed("ten_workloads", f"--module={ten}", "--benchmark_min_time=20x")
probed("inputs", f"--module={simple}", *add, "--benchmark_min_time=20x")
probed("async_state", f"--module={stateful}", "--benchmark_min_time=20x",
       "--batch_size=4", "--batch_concurrency=2")

# Over a hundred workloads, each run opening and closing a whole session.
for _ in range(2):
    run(f"--module={ten}", "--benchmark_min_time=2x")
before = rss()
for _ in range(12):
    run(f"--module={ten}", "--benchmark_min_time=2x")
results["rss_120_workloads"] = rss() - before

# Tens of thousands of batches: sync (one call each) and async (fences).
for name, module, extra in [
    ("rss_sync_batches", simple, ["--benchmark_min_time=10000x"]),
    ("rss_async_batches", stateful, ["--benchmark_min_time=20000x", "--batch_size=2",
                                     "--batch_concurrency=2"]),
]:
    run(f"--module={module}", *add, *extra)  # warm-up: one-off allocations
    before = rss()
    for _ in range(2):
        run(f"--module={module}", *add, *extra)
    results[name] = rss() - before

gc.collect()
kinds = (Session, Workload, Batch, PreparedInputs, ReportHub)
results["survivors"] = sorted(
    type(o).__name__ for o in gc.get_objects() if isinstance(o, kinds)
)
print(json.dumps(results))
'''

MIB = 1024 * 1024


@pytest.fixture(scope="module")
def measurements(compile_mlir, tmp_path_factory) -> dict:
    directory = tmp_path_factory.mktemp("resources")
    probe = directory / "probe.py"
    probe.write_text(PROBE_PLUGIN)
    paths = {
        "ten": str(compile_mlir(TEN_FUNCTIONS)),
        "simple": str(compile_mlir("simple")),
        "async": str(compile_mlir("async", "--iree-execution-model=async-external")),
        "probe": str(probe),
    }
    env = dict(os.environ)
    env.setdefault("IREEBENCH_DISABLE_PLUGIN_AUTOLOAD", "1")
    proc = subprocess.run([sys.executable, "-c", RESOURCES_SCRIPT, json.dumps(paths)],
                          capture_output=True, text=True, env=env, timeout=300, check=False,
                          cwd=Path(__file__).parent)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_device_buffers_released_after_each_workload(measurements):
    during = measurements["ten_workloads"]["during"]
    start = during[0][1]
    assert [name for name, _ in during[1:-1]] == [f"BM_f{i}" for i in range(10)]
    # Each workload's outputs are gone once it is reported: nothing piles up.
    assert all(live == start for _, live in during), during
    assert measurements["ten_workloads"]["after"] == 0
    # ... although every one of the 200 invocations allocated a 4 KiB output
    # (the statistics do count).
    assert measurements["ten_workloads"]["allocated"] >= 200 * 4096


def test_input_buffers_released_after_the_run(measurements):
    during = measurements["inputs"]["during"]
    (_, start), (name, measuring), (_, finish) = during
    assert name == "BM_add"
    assert measuring == start + 2 * 4 * 4  # the two 4xf32 inputs, nothing more
    assert finish == start
    assert measurements["inputs"]["after"] == 0


def test_vm_context_released_after_the_run(measurements):
    """The stateful module's global lives in the context: 0 bytes after means
    the context (and its modules) were released, not just the buffers."""
    during = measurements["async_state"]["during"]
    assert during[0][1] > 0  # the global counter, allocated by the context
    assert all(live == during[0][1] for _, live in during), during
    assert measurements["async_state"]["after"] == 0


def test_no_runtime_object_survives(measurements):
    assert measurements["survivors"] == []


def test_memory_does_not_grow_over_120_workloads(measurements):
    assert measurements["rss_120_workloads"] < 4 * MIB, measurements


@pytest.mark.parametrize("name", ["rss_sync_batches", "rss_async_batches"])
def test_memory_does_not_grow_over_20000_batches(measurements, name):
    # 20,000 batches: a leak of 64 bytes per batch would show as 1.2 MiB.
    assert measurements[name] < 1 * MIB, measurements
