#!/usr/bin/env bash
# Issue 29 on the lent H200: the memory GPU tests (exact bytes on lines, a step's peak against
# max_memory_allocated, a deliberate out-of-memory by line), the cost of memory recording on a
# training step, and a --memory profile of the step and of grow as the CLI prints them.
#   device run: bash benchmarks/device_memory.sh
set -uo pipefail
cd "$(dirname "$0")/.."
source benchmarks/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 300 python3 -m pytest -q -rA -p no:cacheprovider -m gpu tests/gpu/test_gpu_memory.py \
  2>&1 | tee "$OUT/gpu-memory-tests.log" | tail -15
timeout 180 python3 benchmarks/bench_memory.py --device cuda --repeats 7 2>&1 \
  | grep -v USDT | tee "$OUT/bench-memory.txt"
for spec in kernels/train_step.py::train_step kernels/memory.py::grow; do
  name=$(echo "$spec" | tr ':/' '__')
  timeout 120 python3 -m kernel_lens profile "$spec" --memory --no-history -q 2>&1 \
    | tee "$OUT/$name-memory.txt" | sed -n '/^memory per line/,/^trace/p'
done
