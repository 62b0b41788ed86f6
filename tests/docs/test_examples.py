"""The example plugins in examples/plugins work through the real CLI."""


from conftest import ROOT

EXAMPLES = ROOT / "examples" / "plugins"


def test_markdown_reporter(compile_mlir, ireebench):
    result = ireebench(f"--module={compile_mlir('simple')}", "--device=local-sync",
                       "--benchmark_min_time=2x", f"--plugin={EXAMPLES / 'markdown_reporter.py'}",
                       "--reporter=markdown")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("| benchmark")
    assert any(line.startswith("| BM_noargs/process_time/real_time") for line in lines)


def test_slow_alert(compile_mlir, ireebench):
    result = ireebench(f"--module={compile_mlir('simple')}", "--device=local-sync",
                       "--benchmark_min_time=2x", f"--plugin={EXAMPLES / 'slow_alert.py'}",
                       "--slow_alert_ms=0.0000001")
    assert result.returncode == 0, result.stderr
    assert "slow_alert: BM_noargs/process_time/real_time took" in result.stderr
