"""A toy tuner for examples/tuning/model.mlir: candidate payloads of its first dispatch.

    python examples/tuning/candidates.py OUT [--tiles=8x32x1,4x16x4] [--target-cpu=host]

For each tile choice MxNxK it writes the model with a lowering configuration
on the first matmul (``compilation_info``: vector tiles ``[M, N, 0]``, reduction
tile ``[0, 0, K]``), compiles it as docs/tuning.md compiles the baseline
(``--iree-hal-link-executables=false``, one executable per dispatch) with
``--iree-hal-dump-executable-binaries-to``, and keeps the first dispatch's
payload as ``OUT/tMxNxK.so`` (the candidate ``ireebench rank --replay``
substitutes) and the whole model as ``OUT/models/tMxNxK.vmfb`` (what
recompiling per candidate would benchmark). The distribution (workgroup)
tiles stay the baseline's, read from its configuration: replay dispatches
the captured workgroup counts, so a payload tiled otherwise would compute
part of the result.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

MODEL = Path(__file__).with_name("model.mlir")
DEFAULT_TILES = "8x32x1,4x16x4,8x16x8,2x8x1"
MATMUL = "%h = linalg.matmul ins"


def compile_flags(target_cpu: str) -> list[str]:
    return ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
            f"--iree-llvmcpu-target-cpu={target_cpu}", "--iree-hal-link-executables=false"]


def iree_compile(source: Path, output: Path, flags: list[str], *extra: str) -> None:
    command = ["iree-compile", str(source), *flags, *extra, "-o", str(output)]
    print(" ".join(command), flush=True)
    subprocess.run(command, check=True)


def baseline_distribution(flags: list[str], scratch: Path) -> str:
    """The first matmul's distribution tiles as the compiler chose them for the baseline."""
    configs = scratch / "configs"
    iree_compile(MODEL, scratch / "baseline.vmfb", flags,
                 f"--iree-hal-dump-executable-configurations-to={configs}")
    text = next(configs.glob("*dispatch_0*.mlir")).read_text()
    matmul = next(line for line in text.splitlines() if "linalg.matmul" in line)
    return re.search(r"distribution = (\[[^\]]*\])", matmul).group(1)


def variant(distribution: str, m: int, n: int, k: int) -> str:
    config = (f"#iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<"
              f"distribution = {distribution}, vector_common_parallel = [{m}, {n}, 0], "
              f"vector_reduction = [0, 0, {k}]>, translation_info = "
              f"#iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>>>")
    return MODEL.read_text().replace(MATMUL, f"%h = linalg.matmul {{compilation_info = {config}}} ins")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--tiles", default=DEFAULT_TILES)
    parser.add_argument("--target-cpu", default="host")
    args = parser.parse_args()
    flags = compile_flags(args.target_cpu)
    (args.out / "models").mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        distribution = baseline_distribution(flags, scratch)
        for tiles in args.tiles.split(","):
            m, n, k = (int(value) for value in tiles.split("x"))
            name = f"t{m}x{n}x{k}"
            source = scratch / f"{name}.mlir"
            source.write_text(variant(distribution, m, n, k))
            binaries = scratch / name
            iree_compile(source, args.out / "models" / f"{name}.vmfb", flags,
                         f"--iree-hal-dump-executable-binaries-to={binaries}")
            shutil.copy(next(binaries.glob("*dispatch_0_*")), args.out / f"{name}.so")


if __name__ == "__main__":
    main()
