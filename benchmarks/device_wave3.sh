#!/usr/bin/env bash
# One lent-H200 run for this wave's GPU checks, kept under ~7 minutes of device time: memory
# (issue 29), real projects (issue 23), and issue 24's GPU side (Show Assembly of a GPU-only
# file from its real launch, Generated Code with captured inputs in Triton).
#   device run: bash benchmarks/device_wave3.sh
set -uo pipefail
cd "$(dirname "$0")/.."
source benchmarks/device_env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"
echo "== GPU tests: memory, deep, assembly, generated code with captured inputs"
timeout 330 python3 -m pytest -q -rA -p no:cacheprovider -o addopts="" \
  tests/gpu/test_gpu_memory.py tests/gpu/test_gpu_deep.py tests/cli/test_asm_cli.py \
  "tests/cli/test_compiled_cli.py::test_generated_code_with_inputs_captured_from_the_script" \
  2>&1 | tee "$OUT/gpu-tests.log" | grep -E "PASSED|FAILED|ERROR|SKIPPED|passed|failed" | tail -30
echo "== Show Assembly of a GPU-only tutorial-shaped file, from its real launch"
timeout 60 python3 -m kernel_lens asm tests/data/gpu_only/vector_add_cuda.py::add_kernel --json 2>/dev/null \
  | python3 -c "import json,sys; d=json.load(sys.stdin); print(d.get('types_from'), d.get('launcher'), d.get('signature'), d.get('registers'), 'regs')"
echo "== bench_memory (CUDA)"
timeout 120 python3 benchmarks/bench_memory.py --device cuda --repeats 5 2>&1 | grep -v USDT | tee "$OUT/bench-memory.txt"
echo "== bench_deep_tracer (CUDA, wall time)"
timeout 120 python3 benchmarks/bench_deep_tracer.py --steps 10 --repeat 3 --layers 6 --dim 512 2>&1 | grep -v USDT | tee "$OUT/bench-deep.txt"
