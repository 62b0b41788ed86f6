"""The ``replay`` backend: ``ireebench replay FILE.ireereplay`` timed by iree-benchmark-replay.

The capture (written with ``--device_replay_output``) is timed by the native
``iree-benchmark-replay`` shipped in iree-base-runtime; its JSON report
(never its console table) becomes ireebench runs that go through the same
reporters and plugins as a module benchmark (see
:mod:`ireebench.native.backend`). The subcommand's command line is parsed
by :mod:`ireebench.cli.replay`, which selects this backend and sets the
``replay_file`` option.
"""

from __future__ import annotations

from pathlib import Path

from ireebench import hookimpl
from ireebench.errors import UsageError
from ireebench.modules import file_sha256
from ireebench.native.backend import NativeRun
from ireebench.native.flags import benchmark_flags
from ireebench.native.tools import REPLAY_TOOL
from ireebench.session import device_uris


def replay_tool_args(config, path: str) -> list[str]:
    """iree-benchmark-replay flags for this replay (the file last, no filter)."""
    args = [f"--device={d}" for d in device_uris(config)]
    if config.getoption("replay_scope"):
        args.append(f"--replay_scope={config.getoption('replay_scope')}")
    args += [f"--replay_file_remap={v}" for v in config.getoption("replay_file_remap") or []]
    args += [f"--replay_executable_substitution={v}"
             for v in config.getoption("replay_executable_substitution") or []]
    args += list(config.runtime_flags)
    return args + benchmark_flags(config, user_filter=False) + [path]


def run_replay(config, hub) -> int:
    """Runs iree-benchmark-replay on the ``replay_file``; reports its JSON through ``hub``."""
    path = config.getoption("replay_file")
    if not path:
        raise UsageError("--backend=replay: benchmark a capture with "
                         "`ireebench replay FILE.ireereplay`")
    native = NativeRun(
        config, REPLAY_TOOL, replay_tool_args(config, path), what=f"replay: {path}",
        user_filter=config.getoption("benchmark_filter"),
        context_extra={"iree_replay_file": str(Path(path).resolve()),
                       "iree_replay_sha256": file_sha256(path),
                       "iree_replay_scope": config.getoption("replay_scope") or ""})
    return native.run(hub)


@hookimpl
def ireebench_backends(config):
    """Provides the ``replay`` backend (selected by ``ireebench replay``)."""
    return {"replay": run_replay}
