"""The native IREE tools shipped in iree-base-runtime, and how ireebench drives them.

The Python bindings expose neither HAL profiling nor the replay recorder, so
those features run ``iree-benchmark-module`` (and ``iree-profile``,
``iree-benchmark-replay``) as separate processes:

* :mod:`.tools`: finding and running a tool (argument lists, never a shell;
  ``BENCHMARK_*`` variables removed; stdin closed) and reading its failure;
* :mod:`.flags`: the flags that make a native run measure what ireebench
  measured (modules, devices, function, inputs, batches, Google Benchmark's
  measurement flags), derived from the configuration in one place;
* :mod:`.backend`: a native tool as a whole measurement backend
  (``--backend=native``, ``ireebench replay``).

The package gives their names on first use (PEP 562, :data:`NAMES`): a
plugin that runs a native pass writes ``from ireebench import native`` and
calls ``native.run_tool(...)`` when it runs one, so loading it (``--help``,
``ireebench plugins``, a subcommand) imports neither ``subprocess`` nor the
modules' copies (:mod:`ireebench._modules`).
"""

from .._public import lazy_names

# The native tools ireebench runs (found by :func:`.tools.tool_path`).
BENCHMARK_TOOL = "iree-benchmark-module"
PROFILE_TOOL = "iree-profile"
REPLAY_TOOL = "iree-benchmark-replay"

# Runtime flags that start the user's own profiling or capture session in a
# native run (see ireebench.plugins.device_profiling). A pass with a session
# of its own (profiling pass, replay capture) leaves them out, or it would
# write the user's outputs again or refuse to start two sessions.
USER_PASS_FLAGS = ("--device_profiling_", "--print_device_statistics", "--device_capture_")

# Each name -> the module of this package that defines it, imported when the
# name is first read.
NAMES = {
    **{name: ".tools" for name in (
        "tool_path", "tools_dir", "run_tool", "list_benchmarks", "private_tempdir",
        "native_error_line", "native_status_line", "benchmark_env")},
    **{name: ".flags" for name in (
        "NATIVE_INPUTS", "module_args", "session_args", "native_inputs", "check_native",
        "selection_args", "benchmark_flags", "flag_value")},
    **{name: ".backend" for name in ("NativeRun", "named_workload", "aggregates")},
}
__getattr__, __dir__ = lazy_names(__name__, NAMES)

__all__ = ["BENCHMARK_TOOL", "PROFILE_TOOL", "REPLAY_TOOL", "USER_PASS_FLAGS"]
__all__.extend(NAMES)  # public, imported on first use
