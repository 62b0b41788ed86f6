"""Whole-model tuning by replay substitution against recompiling the model per candidate.

A model of ``--layers`` matmuls of distinct shapes (2: the shape of
examples/tuning/model.mlir; more: a deeper model, whose compile costs more),
its first dispatch tuned over ``--tiles`` (examples/tuning/candidates.py's toy
tuner: vector and reduction tiles, the distribution kept). Two ways to rank the
candidates by the whole model's time, on one pinned local-sync worker, each with
``ireebench rank``'s defaults (adaptive precision, the paired re-rank):

* **replay**: the baseline compiled and captured once; per candidate the first
  dispatch's executable compiled alone (``--compile-mode=hal-executable``), then
  ``ireebench rank --replay=CAPTURE --executable=ID PAYLOADS``;
* **recompile**: per candidate the whole model compiled with the candidate's
  configuration, then ``ireebench rank MODELS --baseline=BASELINE``.

Reported: per candidate the compile seconds and the device seconds of the
ranking (the time its workers held the device, ``device_seconds``), candidates
per device-hour both with the compile (a serial tune loop on the machine) and
without it (compiles elsewhere), the ratio replay/recompile (issue 41's target:
>= 10x), and the replay winner's whole-model speedup by replay against the
same candidate's by its recompiled model (target: within 1 %).
``--write`` puts the table into docs/performance.md (between the
``replay_rank`` markers).

    python benchmarks/replay_rank.py [--layers 2] [--tiles 8x32x1,...] [--trials 3] [--write]
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from compare_native import machine, write_section
from ireebench.plugins.rank.replay import executables
from ireebench.stats import median

ROOT = Path(__file__).resolve().parents[1]
BEGIN, END = "<!-- replay_rank: begin -->", "<!-- replay_rank: end -->"
TILES = "8x32x1,4x16x4,8x16x8,2x8x1,8x8x8,16x16x4,4x32x8,8x32x4"
WIDTHS = [512, 1024, 256, 768, 384, 640, 320, 896, 448, 576]  # each layer's shape its own
ROWS = 64


def _tuner_module():
    spec = importlib.util.spec_from_file_location(
        "candidates", ROOT / "examples" / "tuning" / "candidates.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def model(layers: int) -> tuple[str, list[str]]:
    """A chain of ``layers`` matmuls of distinct shapes, and its inputs."""
    widths = [WIDTHS[i % len(WIDTHS)] + 32 * (i // len(WIDTHS)) for i in range(layers + 1)]
    args = [f"%x: tensor<{ROWS}x{widths[0]}xf32>"] + [
        f"%w{i}: tensor<{widths[i]}x{widths[i + 1]}xf32>" for i in range(layers)]
    lines = [f"func.func @main({', '.join(args)}) -> tensor<{ROWS}x{widths[-1]}xf32> {{",
             "  %zero = arith.constant 0.0 : f32"]
    value = "%x"
    for i in range(layers):
        a, b = widths[i], widths[i + 1]
        out = f"tensor<{ROWS}x{b}xf32>"
        operands = f"{value}, %w{i} : tensor<{ROWS}x{a}xf32>, tensor<{a}x{b}xf32>"
        lines += [f"  %e{i} = tensor.empty() : {out}",
                  f"  %f{i} = linalg.fill ins(%zero : f32) outs(%e{i} : {out}) -> {out}",
                  f"  %h{i} = linalg.matmul ins({operands}) outs(%f{i} : {out}) -> {out}"]
        value = f"%h{i}"
    lines += [f"  return {value} : tensor<{ROWS}x{widths[-1]}xf32>", "}"]
    inputs = [f"--input={ROWS}x{widths[0]}xf32=1"] + [
        f"--input={widths[i]}x{widths[i + 1]}xf32=0.01" for i in range(layers)]
    return "\n".join(lines) + "\n", inputs


def ireebench(*args) -> None:
    proc = subprocess.run([sys.executable, "-m", "ireebench", *map(str, args)],
                          capture_output=True, text=True, check=False,
                          env={**os.environ, "IREEBENCH_ENVIRONMENT_WARNINGS": "false"})
    if proc.returncode != 0:
        raise RuntimeError(f"ireebench {args[0]} failed: {proc.stderr[-2000:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--tiles", default=TILES)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    tuner_module = _tuner_module()
    scratch = Path(tempfile.mkdtemp(prefix="replay-rank-"))
    source, inputs = model(args.layers)
    (scratch / "model.mlir").write_text(source)
    tuner = tuner_module.Tuner(scratch / "model.mlir", "host", scratch)
    baseline, capture = scratch / "baseline.vmfb", scratch / "model.ireereplay"
    ireebench(f"--module={baseline}", "--device=local-sync", "--function=main", *inputs,
              "--benchmark_min_time=1x", f"--device_replay_output={capture}")
    first = next(key for key, what in executables(str(capture)).items() if "dispatch_0_" in what)
    tiles = tuner_module.parse_tiles(args.tiles)
    names = ["t" + "x".join(map(str, t)) for t in tiles]
    (scratch / "payloads").mkdir()
    (scratch / "models").mkdir()
    compile_a = sum(tuner.payload(t, scratch / "payloads" / f"{n}.so") for t, n in zip(tiles, names))
    compile_b = sum(tuner.model_with(t, scratch / "models" / f"{n}.vmfb")
                    for t, n in zip(tiles, names))
    count = len(names)
    trials = [trial(scratch, capture, first, baseline, inputs, index)
              for index in range(args.trials)]
    table = report(trials, count, compile_a, compile_b, args.layers)
    print(table)
    if args.write:
        write_section(BEGIN, END, table)


def trial(scratch: Path, capture: Path, first: int, baseline: Path, inputs: list[str],
          index: int) -> dict:
    """Both rankings once: each one's device seconds, wall seconds and ratios."""
    common = ["--devices=local-sync", "--rank_cache=off"]
    found = {}
    for key, args in (
            ("replay", [f"--replay={capture}", f"--executable={first}",
                        *sorted((scratch / "payloads").glob("*.so"))]),
            ("recompile", [*sorted((scratch / "models").glob("*.vmfb")),
                           f"--baseline={baseline}", "--function=main", *inputs])):
        out = scratch / f"{key}-{index}.json"
        start = time.perf_counter()
        ireebench("rank", *args, *common, f"--rank_out={out}")
        found[key] = {**json.loads(out.read_text()), "wall": time.perf_counter() - start}
    return found


def report(trials: list[dict], count: int, compile_a: float, compile_b: float,
           layers: int) -> str:
    """The table: medians over the trials; each trial's winner and speedups below it."""
    def per_hour(key: str, compile_seconds: float = 0.0) -> float:
        return median([count * 3600 / (t[key]["device_seconds"] + compile_seconds)
                       for t in trials])

    gaps, lines = [], []
    for number, t in enumerate(trials, 1):
        a, b = t["replay"], t["recompile"]
        winner = next(c for c in a["candidates"] if c["rank"] == 1)
        ratio_b = {c["id"]: c["ratio"] for c in b["candidates"]}
        speedup_a, speedup_b = 1 / winner["ratio"], 1 / ratio_b[winner["id"]]
        gaps.append(speedup_a / speedup_b - 1)
        b_winner = next(c["id"] for c in b["candidates"] if c["rank"] == 1)
        lines.append(f"| {number} | {winner['id']} | {speedup_a:.3f} | {speedup_b:.3f} | "
                     f"{100 * gaps[-1]:+.1f} % | {b_winner} |")
    with_compile = per_hour("replay", compile_a) / per_hour("recompile", compile_b)
    device_only = per_hour("replay") / per_hour("recompile")
    gap = median(gaps)
    met = {True: "met", False: "not met"}
    seconds = {key: median([t[key]["device_seconds"] / count for t in trials])
               for key in ("replay", "recompile")}
    rows = [
        ("compile, s per candidate", f"{compile_a / count:.2f}", f"{compile_b / count:.2f}", ""),
        ("ranking on the device, s per candidate", f"{seconds['replay']:.2f}",
         f"{seconds['recompile']:.2f}", ""),
        ("candidates per device-hour, the device only", f"{per_hour('replay'):.0f}",
         f"{per_hour('recompile'):.0f}", f"{device_only:.2f}x"),
        ("candidates per device-hour, compile included",
         f"{per_hour('replay', compile_a):.0f}", f"{per_hour('recompile', compile_b):.0f}",
         f"{with_compile:.2f}x"),
    ]
    head = (f"{count} candidates for the first dispatch of a {layers}-matmul model, "
            f"local-sync, each ranking with its defaults ({trials[0]['replay']['metric']} "
            f"by replay, {trials[0]['recompile']['metric']} by module), medians of "
            f"{len(trials)} trials; {machine()}; {datetime.date.today().isoformat()}.")
    verdict = (f"Target >= 10x candidates per device-hour: {met[with_compile >= 10]} "
               f"({with_compile:.2f}x with the compile, {device_only:.2f}x without). Target: "
               f"the winner's speedup within 1 % of its recompiled model's: "
               f"{met[abs(gap) <= 0.01]} (median {100 * gap:+.1f} %).")
    return "\n".join([
        head, "", "| | replay substitution | recompile the model | replay / recompile |",
        "| --- | ---: | ---: | ---: |", *(f"| {' | '.join(row)} |" for row in rows), "",
        ("| trial | replay's winner | its speedup by replay | by its recompiled model | "
         "difference | the recompiled ranking's winner |"),
        "| ---: | --- | ---: | ---: | ---: | --- |", *lines, "", verdict])


if __name__ == "__main__":
    main()
