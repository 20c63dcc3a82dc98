#!/usr/bin/env bash
# One lent-H200 run for wave 4's GPU checks; each section clearly marked and bounded (~3 min each).
#   device run: bash benchmarks/device_wave4.sh
set -uo pipefail
cd "$(dirname "$0")/.."
source benchmarks/device_env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"

# ---- timing (issue 25 items 1-2): launch-bound timing in a CUDA graph, the policy, NVML ------
# about 2 minutes of device time
echo "== timing: pynvml available?"
python3 -c "import pynvml; pynvml.nvmlInit(); print('pynvml ok')" 2>&1 | tail -1
echo "== timing: GPU tests (graph vs do_bench_cudagraph and kernels, .item() not capturable)"
timeout 240 python3 -m pytest -q -rA -p no:cacheprovider -o addopts="" \
  tests/gpu/test_gpu_timing_policy.py \
  2>&1 | tee "$OUT/gpu-timing-policy.log" | grep -E "PASSED|FAILED|ERROR|SKIPPED|passed|failed|assert" | tail -30
echo "== timing: bench_launch_bound (table for docs/benchmarks.md)"
timeout 120 python3 benchmarks/bench_launch_bound.py 2>&1 | grep -v USDT | tee "$OUT/bench-launch-bound.txt"
echo "== timing: the lens text of the launch-bound add"
timeout 90 python3 -m kernel_lens profile tests/data/gpu_only/launch_bound.py::add 2>&1 \
  | head -8 | tee "$OUT/profile-launch-bound-add.txt"
# ---- end timing -------------------------------------------------------------------------------
which ncu || echo "ncu not on PATH: the register comparison skips"

# ---- section asm (issue 25 items 3-4): assembly of the kernel that ran, kernels vs the limit ----
echo "== asm: GPU tests (registers from the launch = ncu's, autotune choice, square bandwidth)"
timeout 170 python3 -m pytest -q -rA -s -p no:cacheprovider -o addopts="" \
  tests/gpu/test_gpu_asm_launch.py "tests/cli/test_asm_cli.py::test_ptx_for_sm90_with_a_line_map_from_tl_load_to_ld_global" \
  2>&1 | tee "$OUT/asm-gpu-tests.log" | grep -E "PASSED|FAILED|ERROR|SKIPPED|passed|failed|autotune|TB/s" | tail -30
echo "== asm: registers per kernel, from the launch (for docs/benchmarks.md)"
for f in kernels/triton_square.py tests/data/gpu_only/vector_add_cuda.py tests/data/gpu_only/matmul_autotuned_cuda.py; do
  timeout 60 python3 -m kernel_lens asm "$f" --json 2>/dev/null | python3 -c "
import json, sys
for k in json.load(sys.stdin):
    print(k['kernel'], k['compiled_from'], k['registers'], 'regs', k['spills'], 'B spilled', k['shared_bytes'], 'B shared', k['num_warps'], 'warps', k['num_stages'], 'stages', (k.get('autotune') or {}).get('chosen'))
" | tee -a "$OUT/asm-registers.txt"
done
# ---- end of section asm ----

# ---- section remote (issue 27 item 5): the shipped agent (the ssh/srun bootstrap) on CUDA ------
# about 1 minute of device time: a Python that cannot import kernel_lens runs the agent from the
# zip it receives on stdin; CUDA timing, kernels on the line, the trace back in the local cache.
echo "== remote: the shipped agent on the GPU"
timeout 200 python3 -m pytest -q -rA -s -p no:cacheprovider -o addopts="" \
  tests/gpu/test_gpu_remote_agent.py \
  2>&1 | tee "$OUT/remote-agent-gpu.log" | grep -E "PASSED|FAILED|ERROR|SKIPPED|passed|failed|assert|median_ms" | tail -20
# ---- end of section remote ----
