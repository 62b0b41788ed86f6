"""``--counter NAME=EXPR`` (plugins/user_counters.py): rate counters from a quantity per iteration."""

from __future__ import annotations

import json
import re

import pytest
from conftest import ROOT, one_error_line
from hypothesis import given, settings
from hypothesis import strategies as st
from ireebench.plugins.user_counters import ExpressionError, parse_expression

MLP = (ROOT / "benchmarks" / "mlp.mlir").read_text()
# The MLP's two matmuls: 2 x M x K x N multiply-adds each.
MLP_FLOPS = 2 * 24 * 256 * 1024 + 2 * 24 * 1024 * 256


@pytest.fixture(scope="module")
def mlp(compile_mlir):
    return compile_mlir(MLP)


def _repetitions(report):
    return [b for b in report["benchmarks"] if b["run_type"] == "iteration"]


def test_flop_counter_is_flops_per_iteration_over_real_seconds(mlp, ireebench, tmp_path):
    out = tmp_path / "run.json"
    result = ireebench(f"--module={mlp}", "--device=local-sync", "--benchmark_min_time=3x",
                       "--benchmark_repetitions=2", "--counter", "flops=2*24*256*1024*2",
                       "--counter=bytes_per_second=(24*256 + 256*1024)*4",
                       f"--benchmark_out={out}", "--benchmark_out_format=json")
    assert result.returncode == 0, result.stderr
    report = json.loads(out.read_text())
    assert report["context"]["rate_counters"] == ["flops", "bytes_per_second"]
    rows = _repetitions(report)
    assert len(rows) == 2
    for row in rows:
        seconds = row["real_time"] / 1e3  # ms per iteration
        assert row["flops"] == pytest.approx(MLP_FLOPS / seconds, rel=1e-12)
        assert row["bytes_per_second"] == pytest.approx((24 * 256 + 256 * 1024) * 4 / seconds,
                                                        rel=1e-12)
    mean = next(b for b in report["benchmarks"] if b.get("aggregate_name") == "mean")
    assert mean["flops"] == pytest.approx(sum(r["flops"] for r in rows) / 2)
    # The console prints it as Google Benchmark prints a rate: flops=3.07G/s.
    line = next(line for line in result.stdout.splitlines() if line.startswith("BM_mlp/"))
    assert re.search(r" flops=[\d.]+[kMGT]/s ", line), line


def test_axes_of_the_configuration_point(mlp, ireebench):
    """{axis} is the workload's params (a sweep's point; here a test plugin gives them)."""
    result = ireebench(f"--module={mlp}", "--device=local-sync", "--benchmark_min_time=2x",
                       "--plugin=point_params", "--counter=tokens={bs}*{seq}*(3-1)/2",
                       "--benchmark_format=json")
    assert result.returncode == 0, result.stderr
    (row,) = _repetitions(result.json())
    assert row["tokens"] == pytest.approx(4 * 2.5 / (row["real_time"] / 1e3), rel=1e-12)
    line = one_error_line(ireebench(f"--module={mlp}", "--device=local-sync",
                                    "--plugin=point_params", "--counter=tokens={batch}*2"))
    assert line == ("ireebench: error: --counter=tokens={batch}*2: BM_mlp: {batch}: the "
                    "benchmark has no axis 'batch' (its axes: bs, dtype, seq)")
    line = one_error_line(ireebench(f"--module={mlp}", "--device=local-sync",
                                    "--plugin=point_params", "--counter=x={dtype}"))
    assert line.endswith("--counter=x={dtype}: BM_mlp: {dtype} is 'f16', not a number")


def test_axes_of_a_real_sweep(ireebench):
    """--sweep bs=1,8 with --counter=rows={bs}*64: each point's counter from its own
    bs (the sweep leaves the counter's {bs} to the counter, never substitutes it)."""
    result = ireebench(f"--module={ROOT / 'examples' / 'suites' / 'mlp.mlir'}",
                       "--function=forward", "--device=local-sync", "--input={bs}x64xf32=0.5",
                       "--sweep", "bs=1,8", "--counter=rows={bs}*64",
                       "--benchmark_min_time=2x", "--benchmark_format=json")
    assert result.returncode == 0, result.stderr
    rows = {row["params"]["bs"]: row for row in _repetitions(result.json())}
    for bs, row in rows.items():
        assert row["rows"] == pytest.approx(bs * 64 / (row["real_time"] / 1e3), rel=1e-12)
    assert sorted(rows) == [1, 8]


@pytest.mark.parametrize("value, reason", [
    ("flops", "expected NAME=EXPR, e.g. flops=2*24*256*1024"),
    ("flops=2*", "expected a number, {axis} or '(' at the end"),
    ("flops=(2+3", "a '(' is not closed"),
    ("flops=2**3", "expected a number, {axis} or '(' before '*'"),
    ("flops=__import__('os')", "unexpected '_' at position 1"),
    ("flops=1/(2-2)", "division by zero"),
    ("real_time=1", "'real_time' is a field or counter ireebench sets itself"),
    # Bounded: the parser and the evaluation recurse (a RecursionError before).
    ("x=" + "(" * 2000 + "1" + ")" * 2000, "longer than 2000 characters"),
    ("x=" + "(" * 40 + "1" + ")" * 40, "parentheses and signs nested more than 32 deep"),
    ("x=" + "-" * 40 + "1", "parentheses and signs nested more than 32 deep"),
    ("x=" + "+".join(["1"] * 1000), "longer than 200 numbers, axes and operators"),
    # A constant that is not a finite number would put Infinity into the JSON.
    ("x=1e999", "1e999 is not a finite number"),
])
def test_bad_counters_are_one_line_naming_the_flag(mlp, ireebench, value, reason):
    line = one_error_line(ireebench(f"--module={mlp}", f"--counter={value}"))
    shown = value if len(value) <= 80 else f"{value[:80]}..."  # a long one is cut
    assert line.startswith(f"ireebench: error: --counter={shown}: {reason}"), line


def _no_constants(name):
    raise AssertionError(f"bare {name} in the JSON report")


def test_a_rate_beyond_a_double_is_null_in_valid_json(mlp, ireebench, tmp_path):
    """1e308 per iteration over microseconds overflows: JSON has no Infinity, so the
    report says null (Google Benchmark writes a bare Infinity, which jq, browsers and
    most parsers refuse); the console shows inf."""
    out = tmp_path / "run.json"
    result = ireebench(f"--module={mlp}", "--device=local-sync", "--benchmark_min_time=2x",
                       "--counter=huge=1e308", f"--benchmark_out={out}",
                       "--benchmark_format=json")
    assert result.returncode == 0, result.stderr
    for text in (result.stdout, out.read_text()):
        (row,) = _repetitions(json.loads(text, parse_constant=_no_constants))
        assert row["huge"] is None


def test_needs_the_in_process_backend(mlp, ireebench):
    line = one_error_line(ireebench(f"--module={mlp}", "--backend=native", "--counter=f=1"))
    assert line == ("ireebench: error: --counter=f=1: needs a backend that measures in this "
                    "process with the IREE runtime (capability 'in_process'); "
                    "--backend=native does not have it")


# --- the evaluator: arithmetic, never eval ------------------------------------

_numbers = st.integers(1, 999).map(str) | st.sampled_from(["0.5", "2.25", "1e3", ".5"])


@st.composite
def _arithmetic(draw, depth=0):
    if depth > 3 or draw(st.booleans()):
        return draw(_numbers)
    kind = draw(st.sampled_from(["+", "-", "*", "/", "()", "neg"]))
    if kind == "()":
        return f"({draw(_arithmetic(depth + 1))})"
    if kind == "neg":
        return f"-{draw(_arithmetic(depth + 1))}"
    return f"{draw(_arithmetic(depth + 1))} {kind} {draw(_arithmetic(depth + 1))}"


@settings(max_examples=200, deadline=None)
@given(_arithmetic())
def test_the_grammar_computes_what_python_does(text):
    """The same precedence and associativity as Python's arithmetic (the oracle here)."""
    try:
        expected = eval(text, {"__builtins__": {}})  # the test's oracle only
    except ZeroDivisionError:
        with pytest.raises(ExpressionError, match="division by zero"):
            parse_expression(text).evaluate({})
        return
    assert parse_expression(text).evaluate({}) == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_axes_are_named_and_substituted():
    expression = parse_expression("2 * {bs} * { seq } + {bs}")
    assert expression.axes == ["bs", "seq"]
    assert expression.evaluate({"bs": 3, "seq": 10}) == 63
    with pytest.raises(ExpressionError, match="empty"):
        parse_expression("{}")
