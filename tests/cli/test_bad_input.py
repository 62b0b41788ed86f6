"""The catalogue of bad inputs: each one, through the real CLI, ends with exit
code 1 and exactly one ``ireebench: error:`` line on stderr that names the
flag and the value, and never a traceback (docs/reliability.md lists them).

Every case runs in its own process. Starting ``python -m ireebench`` costs
about half a second of CPU, mostly imports, which for ~75 cases is more than
this suite may spend; so the cases run in processes forked from a helper
that has already imported ireebench (see ``forked_cli``): each child runs
``ireebench._cli.run_cli`` (what ``python -m ireebench`` runs) with its own
stdin, stdout and stderr and exits with its return code. A few cases also
go through ``python -m ireebench`` itself, to show both agree.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import FIXTURE_PLUGINS, MLIR_DIR, CliResult, one_error_line

SIMPLE_ARGS = ["--module={simple}", "--device=local-sync", "--benchmark_min_time=1x"]
ADD = [*SIMPLE_ARGS, "--function=add"]
GOOD = "--input=4xf32=1"


def case(id_, args, *expected, stdin=None):
    """One catalogue entry: CLI args (templates), substrings of the error line."""
    return pytest.param(args, expected, stdin, id=id_)


CATALOGUE = [
    # --- the module -------------------------------------------------------
    case("no-module", ["--device=local-sync"], "--module"),
    case("module-missing", ["--module={dir}/missing.vmfb", "--device=local-sync"],
         "--module={dir}/missing.vmfb", "not found"),
    case("module-empty", ["--module={dir}/empty.vmfb", "--device=local-sync"],
         "--module={dir}/empty.vmfb", "empty"),
    case("module-corrupt", ["--module={dir}/corrupt.vmfb", "--device=local-sync"],
         "--module={dir}/corrupt.vmfb", "not a valid IREE module"),
    case("module-not-vmfb", ["--module={dir}/notes.txt", "--device=local-sync"],
         "--module={dir}/notes.txt", "not a valid IREE module"),
    case("module-stdin-empty", ["--module=-", "--device=local-sync"], "--module=-", "empty",
         stdin=b""),
    case("module-is-directory", ["--module={dir}", "--device=local-sync"], "--module={dir}",
         "directory"),
    case("module-for-other-device", ["--module={vulkan}", "--device=local-sync"],
         "--module={vulkan}", "--device=local-sync"),
    # --- device and function ---------------------------------------------
    case("unknown-driver", ["--module={simple}", "--device=nosuchdriver"],
         "--device=nosuchdriver", "unknown driver"),
    case("unknown-device", ["--module={simple}", "--device=local-sync://7"],
         "--device=local-sync://7"),
    case("unknown-function", [*SIMPLE_ARGS, "--function=nope"], "--function=nope"),
    # --- how many inputs --------------------------------------------------
    case("too-few-inputs", [*ADD, GOOD], "--input", "takes 2"),
    case("too-many-inputs", [*ADD, GOOD, GOOD, "--input=4xf32=3"], "--input=4xf32=3",
         "fewer"),
    case("no-inputs", ADD, "--input", "takes 2"),
    # --- inputs that do not match the declared signature -----------------
    case("wrong-dim", [*ADD, "--input=5xf32=1", GOOD], "--input=5xf32=1", "tensor<4xf32>"),
    case("wrong-rank", [*ADD, "--input=2x2xf32=1", GOOD], "--input=2x2xf32=1",
         "tensor<4xf32>"),
    case("wrong-element-type", [*ADD, GOOD, "--input=4xi32=1"], "--input=4xi32=1",
         "tensor<4xf32>"),
    case("npy-wrong-dtype", [*ADD, "--input=@{dir}/f64.npy", GOOD], "--input=@{dir}/f64.npy",
         "4xf64"),
    case("scalar-for-tensor", [*ADD, "--input=42", GOOD], "--input=42", "tensor"),
    case("tensor-for-scalar", [*SIMPLE_ARGS, "--function=scalar", "--input=4xf32=1"],
         "--input=4xf32=1", "i32"),
    case("non-numeric-scalar", [*SIMPLE_ARGS, "--function=scalar", "--input=seven"],
         "--input=seven", "i32"),
    case("scalar-out-of-range", [*SIMPLE_ARGS, "--function=scalar", "--input=99999999999"],
         "--input=99999999999"),
    # --- malformed --input strings ----------------------------------------
    case("empty-input", [*ADD, "--input=", GOOD], "--input=", "no value"),
    case("bad-dtype", [*ADD, "--input=4xq32=1", GOOD], "--input=4xq32=1", "q32"),
    case("bad-shape", [*ADD, "--input=axf32=1", GOOD], "--input=axf32=1", "dimension"),
    case("negative-dim", [*ADD, "--input=-4xf32=1", GOOD], "--input=-4xf32=1"),
    case("non-ascii-dim", [*ADD, "--input=\u00b2xf32=1", GOOD], "--input=\u00b2xf32=1"),
    case("non-numeric-value", [*ADD, "--input=4xf32=1 2 x 4", GOOD],
         "--input=4xf32=1 2 x 4", "`x`"),
    case("unbalanced-open", [*ADD, "--input=4xf32=[1 2 3 4", GOOD],
         "--input=4xf32=[1 2 3 4", "brackets"),
    case("unbalanced-close", [*ADD, "--input=4xf32=1 2 3 4]]", GOOD],
         "--input=4xf32=1 2 3 4]]", "brackets"),
    case("value-count", [*ADD, "--input=4xf32=1 2 3", GOOD], "--input=4xf32=1 2 3", "count"),
    case("int-out-of-range", [*SIMPLE_ARGS, "--function=ints", "--input=2x2xi32=1",
                              "--input=3xi8=1 2 300"], "--input=3xi8=1 2 300", "range"),
    case("no-shape", [*ADD, "--input=f32", GOOD], "--input=f32"),
    # --- files named by --input -------------------------------------------
    case("missing-npy", [*ADD, "--input=@{dir}/missing.npy", GOOD],
         "--input=@{dir}/missing.npy", "not found"),
    case("missing-raw", [*ADD, "--input=4xf32=@{dir}/missing.bin", GOOD],
         "--input=4xf32=@{dir}/missing.bin", "not found"),
    case("short-raw", [*ADD, "--input=4xf32=@{dir}/three.bin", GOOD],
         "--input=4xf32=@{dir}/three.bin", "bytes"),
    case("not-npy-extension", [*ADD, "--input=@{dir}/three.bin", GOOD],
         "--input=@{dir}/three.bin", ".npy"),
    case("corrupt-npy", [*ADD, "--input=@{dir}/corrupt.npy", GOOD],
         "--input=@{dir}/corrupt.npy", "cannot load"),
    case("object-npy", [*ADD, "--input=@{dir}/object.npy", GOOD],
         "--input=@{dir}/object.npy", "cannot load"),
    # --- batch size and concurrency ---------------------------------------
    case("batch-size-zero", [*SIMPLE_ARGS, "--batch_size=0"], "--batch_size=0",
         "batch size and concurrency must be positive"),
    case("batch-size-negative", [*SIMPLE_ARGS, "--batch_size=-3"], "--batch_size=-3"),
    case("batch-size-text", [*SIMPLE_ARGS, "--batch_size=many"], "--batch_size", "many"),
    case("concurrency-zero", [*SIMPLE_ARGS, "--batch_concurrency=0"], "--batch_concurrency=0"),
    case("concurrency-negative", [*SIMPLE_ARGS, "--batch_concurrency=-1"],
         "--batch_concurrency=-1"),
    case("concurrency-text", [*SIMPLE_ARGS, "--batch_concurrency=two"],
         "--batch_concurrency", "two"),
    # --- measurement flags --------------------------------------------------
    *[case(f"min-time-{value}", ["--module={simple}", f"--benchmark_min_time={value}"],
           f"--benchmark_min_time={value}")
      for value in ("abc", "1y", "-1s", "0x", "1.5x", "x", "nan")],
    case("warmup-text", [*SIMPLE_ARGS, "--benchmark_min_warmup_time=soon"],
         "--benchmark_min_warmup_time=soon"),
    case("repetitions-zero", [*SIMPLE_ARGS, "--benchmark_repetitions=0"],
         "--benchmark_repetitions=0"),
    case("invalid-regex", [*SIMPLE_ARGS, "--benchmark_filter=BM_(["], "--benchmark_filter=BM_(["),
    case("time-unit-s", [*SIMPLE_ARGS, "--time_unit=s"], "--time_unit=s"),
    case("bool-flag-value", [*SIMPLE_ARGS, "--benchmark_dry_run=maybe"], "--benchmark_dry_run",
         "maybe"),
    case("context-no-value", [*SIMPLE_ARGS, "--benchmark_context=novalue"],
         "--benchmark_context=novalue"),
    case("max-element-count", [*SIMPLE_ARGS, "--output_max_element_count=-1"],
         "--output_max_element_count=-1"),
    # --- output processing ---------------------------------------------------
    case("threshold-text", [*ADD, GOOD, GOOD, "--enable_output_processing",
                            "--expected_f32_threshold=abc"],
         "--expected_f32_threshold=abc", "a number >= 0"),
    case("threshold-negative", [*SIMPLE_ARGS, "--expected_f16_threshold=-0.1"],
         "--expected_f16_threshold=-0.1", "a number >= 0"),
    case("rtol-nan", [*SIMPLE_ARGS, "--expected_rtol=nan"], "--expected_rtol=nan"),
    case("equality-mode", [*SIMPLE_ARGS, "--equality_mode=fuzzy"], "--equality_mode=fuzzy",
         "approximate, exact"),
    case("output-count", [*ADD, GOOD, GOOD, "--enable_output_processing", "--output=-",
                          "--output=-"],
         "--output", "2 outputs specified but the provided variant list only has 1 elements"),
    case("expected-output-too-many", [*ADD, GOOD, GOOD, "--enable_output_processing",
                                      "--expected_output=4xf32=2", "--expected_output=1"],
         "--expected_output=1", "fewer"),
    # --- reporters and output files --------------------------------------
    case("unknown-reporter", [*SIMPLE_ARGS, "--reporter=nope"], "--reporter=nope"),
    case("unknown-format", [*SIMPLE_ARGS, "--benchmark_format=nope"], "--benchmark_format=nope"),
    case("unknown-out-format", [*SIMPLE_ARGS, "--benchmark_out={dir}/out.json",
                                "--benchmark_out_format=nope"], "--benchmark_out_format=nope"),
    case("out-is-directory", [*SIMPLE_ARGS, "--benchmark_out={dir}"], "--benchmark_out={dir}",
         "directory"),
    case("out-parent-missing", [*SIMPLE_ARGS, "--benchmark_out={dir}/nodir/out.json"],
         "--benchmark_out={dir}/nodir/out.json", "does not exist"),
    case("out-parent-is-file", [*SIMPLE_ARGS, "--benchmark_out={simple}/out.json"],
         "--benchmark_out={simple}/out.json", "not a directory"),
    # --- plugins, backends, unknown flags ----------------------------------
    case("unknown-plugin-module", [*SIMPLE_ARGS, "--plugin=no_such_plugin_module"],
         "--plugin=no_such_plugin_module"),
    case("unknown-plugin-file", [*SIMPLE_ARGS, "--plugin={dir}/missing_plugin.py"],
         "--plugin={dir}/missing_plugin.py", "not found"),
    case("plugin-raises-at-import", [*SIMPLE_ARGS, "--plugin={dir}/raising_plugin.py"],
         "--plugin={dir}/raising_plugin.py", "boom at import"),
    case("unknown-backend", [*SIMPLE_ARGS, "--backend=nope"], "--backend=nope"),
    # Passed over with a warning by default (as the native tool does): see
    # tests/cli/test_drop_in.py; refused with --strict_flags.
    case("unknown-flag", [*SIMPLE_ARGS, "--strict_flags=true", "--no_such_flag=1"],
         "--no_such_flag=1"),
    case("positional-argument", [*SIMPLE_ARGS, "--strict_flags=true", "stray"], "stray"),
    case("missing-flagfile", ["--flagfile={dir}/missing.flags"], "--flagfile={dir}/missing.flags"),
    # --- conflicting flags ---------------------------------------------------
    case("output-processing-several-functions", [*SIMPLE_ARGS, "--enable_output_processing"],
         "--enable_output_processing", "one function"),
    # --- memory bombs, refused before anything is allocated -------------------
    case("input-shape-bomb", [*ADD, "--input=4000000000xf32=1", GOOD],
         "--input=4000000000xf32=1", "argument 0 of @add is tensor<4xf32>"),
    case("batch-concurrency-bomb", ["--module={async}", "--device=local-sync",
                                    "--batch_concurrency=1073741824"],
         "--batch_concurrency=1073741824", "async invocations"),
    case("batch-concurrency-int32", ["--module={async}", "--device=local-sync",
                                     "--batch_concurrency=2147483647"],
         "--batch_concurrency=2147483647"),
    case("flagfile-dev-zero", ["--flagfile=/dev/zero"], "--flagfile=/dev/zero",
         "not a regular file"),
    case("module-stdin-not-a-module", ["--module=-", "--device=local-sync"], "--module=-",
         "not an IREE module", stdin=b"\0" * 4096),
    # --- output flags checked before measuring --------------------------------
    case("expected-output-typo", [*ADD, GOOD, GOOD, "--enable_output_processing",
                                  "--expected_output=4xf32=1 2 x"],
         "--expected_output=4xf32=1 2 x", "parsing value `x`"),
    case("output-in-missing-directory", [*ADD, GOOD, GOOD, "--enable_output_processing",
                                         "--output=@{dir}/nodir/out.npy"],
         "--output={dir}/nodir/out.npy", "does not exist"),
    case("benchmark-out-trailing-slash", [*SIMPLE_ARGS, "--benchmark_out={dir}/out/"],
         "--benchmark_out={dir}/out/", "not a file"),
    # --- inputs that used to reach a traceback --------------------------------
    case("filter-nested-too-deeply", [*SIMPLE_ARGS, "--benchmark_filter=" + "(" * 1000
                                      + ")" * 1000], "--benchmark_filter=((", "nested too deeply"),
    case("flagfile-not-utf8", ["--flagfile={dir}/latin1.flags"], "--flagfile={dir}/latin1.flags",
         "not valid UTF-8"),
    case("flagfile-includes-itself", ["--flagfile={dir}/loop.flags"],
         "--flagfile={dir}/loop.flags", "includes itself"),
    # --- what --module names --------------------------------------------------
    case("module-is-fifo", ["--module={dir}/fifo.vmfb", "--device=local-sync"],
         "--module={dir}/fifo.vmfb", "not a regular file"),
    case("module-is-dev-zero", ["--module=/dev/zero", "--device=local-sync"],
         "--module=/dev/zero", "not a regular file"),
]


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory, compile_mlir) -> dict[str, str]:
    """The files the catalogue names; ``{dir}``, ``{simple}``, ``{vulkan}``."""
    from iree.compiler import tools

    directory = tmp_path_factory.mktemp("bad_input")
    (directory / "empty.vmfb").write_bytes(b"")
    (directory / "corrupt.vmfb").write_bytes(b"\x00garbage" * 64)
    source = (MLIR_DIR / "simple.mlir").read_text()
    (directory / "notes.txt").write_text("not a module\n")
    np.save(directory / "f64.npy", np.ones(4, dtype=np.float64))
    (directory / "three.bin").write_bytes(b"\x01\x02\x03")
    (directory / "corrupt.npy").write_bytes(b"\x93NUMPY\x01\x00" + b"\xff" * 40)
    np.save(directory / "object.npy", np.array([1, "a", None], dtype=object), allow_pickle=True)
    (directory / "raising_plugin.py").write_text('raise RuntimeError("boom at import")\n')
    (directory / "latin1.flags").write_bytes(b"--benchmark_context=caf\xe9=1\n")
    (directory / "loop.flags").write_text(f"--flagfile={directory / 'loop.flags'}\n")
    os.mkfifo(directory / "fifo.vmfb")
    # The same functions compiled for Vulkan only: the module loads, but no
    # selected device can run it.
    vulkan = directory / "vulkan.vmfb"
    vulkan.write_bytes(tools.compile_str(source, extra_args=["--iree-hal-target-device=vulkan"],
                                         input_type="auto"))
    return {"dir": str(directory), "simple": str(compile_mlir("simple")), "vulkan": str(vulkan),
            "async": str(compile_mlir("async", "--iree-execution-model=async-external"))}


# Reads one JSON request per line ({argv, stdin, dir}), forks, and in the
# child points fds 0/1/2 at files and runs the CLI; answers {returncode}.
_FORK_SERVER = r"""
import io, json, os, sys, traceback
from ireebench._cli import run_cli
import ireebench._discovery, ireebench._runner, ireebench._session  # warm imports
import ireebench.plugins.kinds, iree.runtime
protocol_in, protocol_out = sys.stdin.buffer, sys.stdout
for line in protocol_in:
    request = json.loads(line)
    out, err = request["dir"] + "/stdout", request["dir"] + "/stderr"
    pid = os.fork()
    if pid == 0:
        code = 99
        try:
            stdin = request["dir"] + "/stdin"
            with open(stdin, "wb") as handle:
                handle.write(request["stdin"].encode("latin-1"))
            for fd, path, flags in ((0, stdin, os.O_RDONLY),
                                    (1, out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                                    (2, err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
                os.dup2(os.open(path, flags, 0o600), fd)
            sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, closefd=False)))
            sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), line_buffering=True)
            sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), line_buffering=True)
            code = run_cli(request["argv"])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:
            traceback.print_exc()
            code = 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    protocol_out.write(json.dumps({"returncode": code}) + "\n")
    protocol_out.flush()
"""


@pytest.fixture(scope="module")
def forked_cli(tmp_path_factory):
    """forked_cli(*args, input=None) -> CliResult, one forked process per call."""
    scratch = tmp_path_factory.mktemp("forked_cli")
    env = dict(os.environ)
    env.setdefault("IREEBENCH_DISABLE_PLUGIN_AUTOLOAD", "1")
    env["OPENBLAS_NUM_THREADS"] = "1"  # no helper threads in the process that forks
    env["PYTHONPATH"] = os.pathsep.join(
        [str(FIXTURE_PLUGINS), env.get("PYTHONPATH", "")]
    )
    server = subprocess.Popen([sys.executable, "-c", _FORK_SERVER], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, env=env, text=True)

    def run(*args, input: bytes | None = None) -> CliResult:
        request = {"argv": [str(a) for a in args], "dir": str(scratch),
                   "stdin": (input or b"").decode("latin-1")}
        server.stdin.write(json.dumps(request) + "\n")
        server.stdin.flush()
        answer = json.loads(server.stdout.readline())
        return CliResult(answer["returncode"],
                         (scratch / "stdout").read_text(errors="replace"),
                         (scratch / "stderr").read_text(errors="replace"))

    yield run
    server.stdin.close()
    server.wait(timeout=30)


def _check(result: CliResult, expected, files) -> None:
    assert result.returncode == 1, (result.returncode, result.stderr)
    line = one_error_line(result)
    for text in expected:
        assert text.format(**files) in line, line


@pytest.mark.parametrize("args, expected, stdin", CATALOGUE)
def test_bad_input(forked_cli, bad_files, args, expected, stdin):
    _check(forked_cli(*[arg.format(**bad_files) for arg in args], input=stdin), expected,
           bad_files)


@pytest.mark.parametrize("args, expected, stdin", [
    p for p in CATALOGUE if p.id in ("wrong-dim", "plugin-raises-at-import", "module-stdin-empty")
])
def test_bad_input_through_python_m_ireebench(ireebench, bad_files, args, expected, stdin):
    """The forked runs above behave as ``python -m ireebench`` does."""
    _check(ireebench(*[arg.format(**bad_files) for arg in args], input=stdin), expected,
           bad_files)


def test_unwritable_out_directory(forked_cli, bad_files, tmp_path):
    """A directory the user may not write to (meaningless as root)."""
    if os.geteuid() == 0:
        pytest.skip("root can write anywhere")
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    result = forked_cli(*[a.format(**bad_files) for a in SIMPLE_ARGS],
                        f"--benchmark_out={locked}/out.json")
    assert result.returncode == 1
    assert f"--benchmark_out={locked}/out.json" in one_error_line(result)
    assert not list(locked.iterdir())


def test_a_typo_in_expected_output_costs_nothing_measured(forked_cli, bad_files):
    """Checked before measuring: no benchmark row is printed before the error."""
    result = forked_cli(*[a.format(**bad_files) for a in ADD], GOOD, GOOD,
                        "--enable_output_processing", "--expected_output=4xf32=1 2 x",
                        "--benchmark_min_time=100000x")
    assert "--expected_output" in one_error_line(result)
    assert "BM_" not in result.stdout


def test_nested_flagfiles_are_expanded(forked_cli, bad_files, tmp_path):
    inner = tmp_path / "inner.flags"
    inner.write_text("# the device\n--device=local-sync\n")
    outer = tmp_path / "outer.flags"
    outer.write_text(f"--module={bad_files['simple']}\n--flagfile={inner}\n")
    result = forked_cli(f"--flagfile={outer}", "--benchmark_list_tests")
    assert result.returncode == 0, result.stderr
    assert "BM_noargs/process_time/real_time" in result.stdout


def test_failed_run_leaves_no_partial_out_file(forked_cli, bad_files, tmp_path):
    """A usage error found after the report file was opened leaves nothing behind."""
    out = tmp_path / "out.json"
    result = forked_cli(*[a.format(**bad_files) for a in ADD], "--input=5xf32=1", GOOD,
                       f"--benchmark_out={out}")
    assert "--input=5xf32=1" in one_error_line(result)
    assert list(tmp_path.iterdir()) == []
