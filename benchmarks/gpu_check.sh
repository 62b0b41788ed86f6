#!/bin/bash
# CUDA check of ireebench (not part of CI; needs a machine with an NVIDIA GPU).
#
#   bash benchmarks/gpu_check.sh prepare   # here: compiles CUDA modules and fetches the
#                                          # runtime wheel for the GPU machine's Python into .gpu/
#   bash benchmarks/gpu_check.sh run       # on the GPU machine (with .gpu/ copied there)
#
# It compares ireebench with the native iree-benchmark-module on CUDA: sync and
# async timings (alternating), outputs, dispatch statistics (dispatch-events),
# the native backend, replay capture and `ireebench replay`, device errors, and
# the metrics (section 7): --device_time (through the same profiling pass as on
# the CPU; IREE's CUDA driver may refuse HAL-native profiling: the section shows
# the native tool's own answer next to ireebench's), --memory_statistics
# against --print_statistics, a --counter, and compare --metric.
# Write what section 7 shows into docs/profiling.md ("On GPUs").
set -u
cd "$(dirname "$0")/.."
case "${1:-}" in
prepare)
  mkdir -p .gpu
  C="--iree-hal-target-device=cuda --iree-cuda-target=sm_80"  # PTX, JIT-compiled for newer GPUs
  iree-compile $C examples/matmul.mlir -o .gpu/mm_cuda.vmfb
  iree-compile $C --iree-execution-model=async-external examples/matmul.mlir -o .gpu/mm_cuda_async.vmfb
  iree-compile $C tests/fixtures/mlir/simple.mlir -o .gpu/simple_cuda.vmfb
  iree-compile $C tests/fixtures/mlir/two_dispatches.mlir -o .gpu/td_cuda.vmfb
  iree-compile $C --iree-execution-model=async-external tests/fixtures/mlir/two_dispatches.mlir -o .gpu/td_cuda_async.vmfb
  iree-compile $C benchmarks/mlp.mlir -o .gpu/mlp_cuda.vmfb
  python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 -d .gpu "iree-base-runtime==$(python3 -c 'import importlib.metadata as m; print(m.version("iree-base-runtime"))')"
  ;;
run)
  export PYTHONUNBUFFERED=1
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .gpu/*.whl || exit 1
  mkdir -p /tmp/pkg && rm -rf /tmp/pkg/ireebench && cp -r core /tmp/pkg/ireebench && cp -r plugins /tmp/pkg/ireebench/plugins
  export PYTHONPATH=/tmp/pkg:/tmp/site IREEBENCH_DISABLE_PLUGIN_AUTOLOAD=1
  T=/tmp/site/iree/_runtime_libs
  nvidia-smi -L; python3 --version
  M=.gpu/mm_cuda.vmfb; A=.gpu/mm_cuda_async.vmfb; S=.gpu/simple_cuda.vmfb; D=.gpu/td_cuda.vmfb
  run() { echo "### ${*:1:6}"; timeout 120 "$@" 2>&1 | grep -v "^ \|^Run on\|^CPU Caches\|^Load Average\|WARNING\|^20[0-9][0-9]-\|^---\|^Benchmark "; echo "rc=${PIPESTATUS[0]}"; }
  IB="python3 -m ireebench"
  echo "=== 1. sync matmul, native vs ireebench, alternating"
  for i in 1 2 3; do
    run $T/iree-benchmark-module --module=$M --device=cuda --benchmark_min_time=0.3s
    run $IB --module=$M --device=cuda --benchmark_min_time=0.3s
  done
  echo "=== 2. async matmul, batch 4, concurrency 2"
  for i in 1 2; do
    run $T/iree-benchmark-module --module=$A --device=cuda --benchmark_min_time=0.3s --batch_size=4 --batch_concurrency=2
    run $IB --module=$A --device=cuda --benchmark_min_time=0.3s --batch_size=4 --batch_concurrency=2
  done
  echo "=== 3. outputs"
  run $T/iree-benchmark-module --module=$S --device=cuda --function=mixed "--input=2x3xf32=1 2.5 3 4 1e10 0.1" --input=2 --benchmark_min_time=3x --enable_output_processing
  run $IB --module=$S --device=cuda --function=mixed "--input=2x3xf32=1 2.5 3 4 1e10 0.1" --input=2 --benchmark_min_time=3x --enable_output_processing --print_statistics
  run $IB --module=$S --device=cuda --function=add --input=4xf32=1 --input=4xf32=2 --benchmark_min_time=3x --enable_output_processing --expected_output=4xf32=3
  echo "=== 4. dispatch statistics"
  run $T/iree-benchmark-module --module=$D --device=cuda --dispatch_statistics --benchmark_min_time=200x
  run $IB --module=$D --device=cuda --dispatch_statistics --benchmark_min_time=200x
  run $IB --module=.gpu/td_cuda_async.vmfb --device=cuda --dispatch_statistics --benchmark_min_time=50x --batch_size=4 --batch_concurrency=2 --benchmark_repetitions=2 --benchmark_format=csv
  echo "=== 5. native backend, replay"
  run $IB --module=$M --device=cuda --backend=native --benchmark_min_time=0.2s
  run $IB --module=$M --device=cuda --benchmark_min_time=5x --device_replay_output=/tmp/mm.ireereplay
  echo "execute scopes: $($T/iree-dump-replay /tmp/mm.ireereplay 2>&1 | grep -c execute)"
  run $IB replay /tmp/mm.ireereplay --device=cuda --replay_scope=execute --benchmark_min_time=20x
  echo "=== 6. errors"
  run $IB --module=$M --device=local-sync --benchmark_min_time=2x
  run $IB --module=$M --device=cuda://99 --benchmark_min_time=2x
  echo "=== 7. metrics: device time, memory, counters, compare --metric"
  P=.gpu/mlp_cuda.vmfb
  # Does the CUDA driver run a HAL-native profiling session at all (the native tool's answer)?
  run $T/iree-benchmark-module --module=$P --device=cuda --benchmark_min_time=20x --device_profiling_mode=dispatch-events --device_profiling_output=/tmp/mlp.ireeprof
  [ -f /tmp/mlp.ireeprof ] && echo "dispatch events: $($T/iree-profile export --format=ireeperf-jsonl --output=- /tmp/mlp.ireeprof | grep -c '"dispatch_event"')"
  run $IB --module=$P --device=cuda --benchmark_min_time=20x --benchmark_repetitions=3 --device_time
  run $IB --module=$P --device=cuda --benchmark_min_time=20x --device_time --dispatch_statistics --benchmark_format=csv
  run $IB --module=$P --device=cuda --benchmark_min_time=5x --benchmark_repetitions=2 --memory_statistics --print_statistics --counter flops=2*24*256*1024*2 --benchmark_out=/tmp/mem.json
  grep -E '"(max_bytes_used|total_allocated_bytes|net_heap_growth|device_bytes_peak|host_bytes_peak)"' /tmp/mem.json
  for i in 1 2; do
    timeout 120 $IB --module=$P --device=cuda --benchmark_min_time=5x --benchmark_repetitions=9 --memory_statistics --benchmark_out=/tmp/mlp$i.json >/dev/null 2>&1
  done
  run $IB compare /tmp/mlp1.json /tmp/mlp2.json --metric=max_bytes_used
  run $IB compare /tmp/mlp1.json /tmp/mlp2.json --metric=real_time
  ;;
*) echo "usage: $0 prepare|run" >&2; exit 2 ;;
esac
