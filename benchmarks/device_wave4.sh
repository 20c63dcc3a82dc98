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

# ---- section ui (issue 25 item 4): Nsight Compute's bytes and FLOPs on the roofline -----------
# about 1 minute of device time (one ncu run of the basic set plus the added counters)
echo "== ui: ncu bytes/FLOPs of square_kernel -> roofline entry (source ncu)"
timeout 170 python3 -m pytest -q -rA -s -p no:cacheprovider -o addopts="" \
  tests/gpu/test_gpu_ncu_roofline.py \
  2>&1 | tee "$OUT/ui-ncu-roofline.log" | grep -E "PASSED|FAILED|ERROR|SKIPPED|passed|failed|ncu |assert" | tail -20
# ---- end of section ui ----
# ---- section traces (issue 28 item 4): a real .pftrace from torch's CUPTI-monitor backend ----
# torch PR 187892: export_chrome_trace(path) with a ".pftrace" path makes the (experimental)
# cupti_monitor profiler backend write a Perfetto protobuf trace. If this torch has no such
# backend, the log says so and nothing is committed.
echo "== traces: record a small .pftrace (if this torch can) and read it"
timeout 90 python3 - <<'PY' 2>&1 | tee "$OUT/traces-pftrace.log" | tail -15
import os, sys, torch
sys.path.insert(0, "server")
out = os.path.join(os.environ["OUT"], "matmul_relu.pftrace")
print("torch", torch.__version__, "cupti monitor:", any(
    hasattr(torch.profiler, n) for n in ("_cupti_monitor", "_cupti")))
x = torch.randn(1024, 1024, device="cuda")
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                        torch.profiler.ProfilerActivity.CUDA]) as prof:
    for _ in range(3):
        torch.relu(x @ x)
    torch.cuda.synchronize()
try:
    prof.export_chrome_trace(out)
except Exception as exc:
    print("export_chrome_trace(.pftrace) failed:", type(exc).__name__, exc)
    raise SystemExit(0)
head = open(out, "rb").read(64)
print("wrote", out, os.path.getsize(out), "bytes; JSON?" , head.lstrip()[:1] == b"{")
from kernel_lens.traces.read import read_columns
from kernel_lens.analysis.trace_summary import summarize_columns
cols = read_columns(out)
print(len(cols), "complete events;", summarize_columns(cols).to_json().get("gpu_busy_us"))
PY
# ---- end of section traces ----
# ---- section dist (issue 27 items 1-3, 6): a 2-rank DDP step over NCCL — for the nvidia-h200-x2
# kind (two GPUs of one host); on one GPU it only checks the "ranks share a device" label.
# About 3 minutes of device time.
GPUS=$(nvidia-smi -L 2>/dev/null | wc -l)
echo "== dist: $GPUS GPU(s) visible"
python3 -c "import hta; print('hta', hta.__file__)" 2>&1 | tail -1 || true
if [ "$GPUS" -ge 2 ]; then
  echo "== dist: GPU tests (NCCL kernels on their lines, overlap/idle vs HTA within 5%, straggler)"
  timeout 420 python3 -m pytest -q -rA -s -p no:cacheprovider -o addopts="" \
    tests/gpu/test_gpu_distributed.py \
    2>&1 | tee "$OUT/dist-gpu-tests.log" | grep -E "^\||PASSED|FAILED|ERROR|SKIPPED|passed|failed|assert|straggler" | tail -30
  echo "== dist: the CLI's text for the DDP step (for docs/benchmarks.md)"
  timeout 200 python3 -m kernel_lens profile tests/data/gpu_only/ddp_step.py::train_step \
    --nproc-per-node 2 --reps 10 --no-history 2>&1 | grep -v -E "USDT|^\[rank" | tail -25 \
    | tee "$OUT/dist-ddp-step.txt"
else
  echo "== dist: one GPU — two ranks must share it or say they need two"
  timeout 200 python3 -m pytest -q -rA -p no:cacheprovider -o addopts="" \
    tests/gpu/test_gpu_distributed.py 2>&1 | tee "$OUT/dist-gpu-tests.log" | tail -5
fi
# ---- end of section dist ----
# ---- section real (issue 23): jobs on a layer whose inputs come from its driver ---------------
# about 2-3 minutes of device time: Nsight Compute `ncu run … --from`, the nanoGPT-shaped layer
# from its bench driver (bf16 under its autocast), a sweep from a driver
echo "== real: GPU tests (ncu --from a driver, nanoGPT-shaped attention from bench.py)"
timeout 300 python3 -m pytest -q -rA -p no:cacheprovider -o addopts="" \
  "tests/gpu/test_gpu_deep.py::test_nsight_compute_on_a_layer_from_its_driver_profiles_the_layers_kernels" \
  "tests/gpu/test_gpu_deep.py::test_a_nanogpt_like_attention_from_its_bench_driver_runs_bf16_under_its_autocast" \
  2>&1 | tee "$OUT/real-gpu-tests.log" | grep -E "PASSED|FAILED|ERROR|SKIPPED|passed|failed|assert" | tail -20
echo "== real: ncu run model.py::Attention.forward --from drive_cuda.py (text)"
R=$(mktemp -d); cp -r tests/data/examples/deep "$R/ws"
timeout 240 python3 -m kernel_lens ncu run "$R/ws/model.py::Attention.forward" \
  --from "$R/ws/drive_cuda.py" -- --dim 256 2>&1 | head -30 | tee "$OUT/real-ncu-from-driver.txt"
# ---- end of section real ----
# ---- section instant (issue 28 items 1, 2, 5): streamed lenses, timing that stops when known ----
# about 2 minutes of device time
echo "== instant: GPU stopping-rule tests (a stable kernel converges; agrees with the whole budget)"
timeout 200 python3 -m pytest -q -rA -s -p no:cacheprovider -o addopts="" \
  tests/gpu/test_gpu_stopping.py \
  2>&1 | tee "$OUT/instant-gpu-stopping.log" | grep -E "PASSED|FAILED|ERROR|SKIPPED|passed|failed|converged|early" | tail -20
echo "== instant: bench_agent_warm (cold, first-after-open, warm and first-useful-lens; docs/benchmarks.md)"
# --cold 3: three cold sessions each way (agent at didOpen, agent started with the server)
timeout 420 python3 benchmarks/bench_agent_warm.py --warm 3 --think 1 --delay 8 --settle 2 --cold 3 \
  2>&1 | grep -v USDT | tee "$OUT/instant-bench-agent-warm.txt" | tail -18
echo "== instant: bench_traces on the host's 16 cores (1M, 3M, 10M; the floor at 1M and 3M)"
timeout 480 python3 benchmarks/bench_traces.py --sizes 1000000,3000000,10000000 --kinds kl,server,lsp \
  2>&1 | grep -v USDT | tee "$OUT/instant-bench-traces.txt" | tail -30
# ---- end of section instant ----
# ---- section remote (issue 27 item 5): the shipped agent (the ssh/srun bootstrap) on CUDA ------
# about 1 minute of device time: a Python that cannot import kernel_lens runs the agent from the
# zip it receives on stdin; CUDA timing, kernels on the line, the trace back in the local cache.
echo "== remote: the shipped agent on the GPU"
timeout 200 python3 -m pytest -q -rA -s -p no:cacheprovider -o addopts="" \
  tests/gpu/test_gpu_remote_agent.py \
  2>&1 | tee "$OUT/remote-agent-gpu.log" | grep -E "PASSED|FAILED|ERROR|SKIPPED|passed|failed|assert|median_ms" | tail -20
# ---- end of section remote ----
