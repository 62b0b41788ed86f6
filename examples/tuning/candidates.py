"""A toy tuner for a model's first dispatch: candidate payloads for ``ireebench rank --replay``.

    python examples/tuning/candidates.py OUT [--model=examples/tuning/model.mlir]
        [--tiles=8x32x1,4x16x4] [--target-cpu=host] [--models]

It compiles the model once as docs/tuning.md does (``--iree-hal-link-executables=false``:
one executable per dispatch) with the first dispatch's executable source and
configuration dumped, then for each tile choice MxNxK writes that source with a
lowering configuration on its matmul (``compilation_info``: vector tiles
``[M, N, 0]``, reduction tile ``[0, 0, K]``) and compiles the executable alone
(``iree-compile --compile-mode=hal-executable``): ``OUT/tMxNxK.so``, the payload
the ranking substitutes. ``--models`` also compiles the whole model with the same
configuration on its first matmul, ``OUT/models/tMxNxK.vmfb`` (what tuning by
recompiling the model per candidate measures; benchmarks/replay_rank.py).

The distribution (workgroup) tiles stay the baseline's: replay dispatches the
captured workgroup counts, which the module computes on the host, so a payload
tiled otherwise would compute part of the result (or fault).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import tempfile
import time
from pathlib import Path

MODEL = Path(__file__).with_name("model.mlir")
DEFAULT_TILES = "8x32x1,4x16x4,8x16x8,2x8x1"


def compile_flags(target_cpu: str) -> list[str]:
    return ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
            f"--iree-llvmcpu-target-cpu={target_cpu}", "--iree-hal-link-executables=false"]


def iree_compile(source: Path, output: Path, *flags: str) -> float:
    """Compiles; the seconds it took."""
    command = ["iree-compile", str(source), *flags, "-o", str(output)]
    print(" ".join(command), flush=True)
    start = time.perf_counter()
    subprocess.run(command, check=True)
    return time.perf_counter() - start


def configured(text: str, distribution: str, tiles: tuple[int, int, int]) -> str:
    """``text`` with a lowering configuration on its first ``linalg.matmul``."""
    m, n, k = tiles
    info = (f"{{compilation_info = #iree_codegen.compilation_info<lowering_config = "
            f"#iree_cpu.lowering_config<distribution = {distribution}, "
            f"vector_common_parallel = [{m}, {n}, 0], vector_reduction = [0, 0, {k}]>, "
            f"translation_info = #iree_codegen.translation_info<pipeline = "
            f"#iree_cpu.pipeline<DoubleTilingExpert>>>}}")
    return re.sub(r"(= linalg\.matmul) ins", rf"\1 {info} ins", text, count=1)


class Tuner:
    """The model's first dispatch: its executable source and its distribution tiles."""

    def __init__(self, model: Path, target_cpu: str, scratch: Path):
        self.model, self.flags, self.scratch = model, compile_flags(target_cpu), scratch
        iree_compile(model, scratch / "baseline.vmfb", *self.flags,
                     f"--iree-hal-dump-executable-sources-to={scratch / 'sources'}",
                     f"--iree-hal-dump-executable-configurations-to={scratch / 'configs'}")
        self.source = next((scratch / "sources").glob("*_dispatch_0.mlir")).read_text()
        config = next((scratch / "configs").glob("*_dispatch_0.mlir")).read_text()
        matmul = next(line for line in config.splitlines() if "linalg.matmul" in line)
        self.distribution = re.search(r"distribution = (\[[^\]]*\])", matmul).group(1)

    def payload(self, tiles: tuple[int, int, int], output: Path) -> float:
        """The first dispatch's executable with ``tiles``, compiled alone."""
        source = self.scratch / f"{output.stem}.dispatch.mlir"
        source.write_text(configured(self.source, self.distribution, tiles))
        return iree_compile(source, output, "--compile-mode=hal-executable")

    def model_with(self, tiles: tuple[int, int, int], output: Path) -> float:
        """The whole model with ``tiles`` on its first dispatch, compiled."""
        source = self.scratch / f"{output.stem}.model.mlir"
        source.write_text(configured(self.model.read_text(), self.distribution, tiles))
        return iree_compile(source, output, *self.flags)


def parse_tiles(text: str) -> list[tuple[int, int, int]]:
    return [tuple(int(value) for value in tiles.split("x")) for tiles in text.split(",")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--model", type=Path, default=MODEL)
    parser.add_argument("--tiles", default=DEFAULT_TILES)
    parser.add_argument("--target-cpu", default="host")
    parser.add_argument("--models", action="store_true")
    args = parser.parse_args()
    (args.out / "models").mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        tuner = Tuner(args.model, args.target_cpu, Path(folder))
        for tiles in parse_tiles(args.tiles):
            name = "t" + "x".join(map(str, tiles))
            tuner.payload(tiles, args.out / f"{name}.so")
            if args.models:
                tuner.model_with(tiles, args.out / "models" / f"{name}.vmfb")


if __name__ == "__main__":
    main()
