#!/usr/bin/env bash
# The GPU-marked test files left by device_gpu_suite.sh, in lanes side by side on the one GPU
# (16 cores there): Nsight Compute's files in one lane, the language-server files in another, the
# rest in two more; the timing files (their statistics need a quiet GPU) alone at the end, if
# time is left. Each file ends with SIGINT at the deadline so pytest still prints what failed.
#   device run: bash benchmarks/device_gpu_lanes.sh [budget_s]
set -uo pipefail
cd "$(dirname "$0")/.."
source benchmarks/device_env.sh
BUDGET=${1:-400}
left() { echo $((BUDGET - SECONDS)); }
# The logs come back as one archive, remade after each file: the device returns 8 files a call.
LOGS=/tmp/kl-gpu-logs; mkdir -p "$LOGS"
pack() { tar czf "/tmp/gpu-logs.$BASHPID.tgz" -C "$LOGS" . && mv "/tmp/gpu-logs.$BASHPID.tgz" "$OUT/gpu-logs.tgz"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee -a "$OUT/gpu-env.txt"
one() {  # one test file (and pytest arguments), bounded by what is left of the budget
  local name=$1; shift
  local t; t=$(left)
  if (( t < 20 )); then echo "$name: not run (${t}s left)" | tee -a "$OUT/gpu-summary.txt"; return; fi
  local start=$SECONDS
  timeout -s INT -k 15 "$t" python3 -m pytest -m gpu -q -p no:cacheprovider -rfEs --durations=5 "$@" \
    >"$LOGS/gpu-$name.log" 2>&1
  local rc=$?
  local summary; summary=$(grep -E "[0-9]+ (passed|failed|skipped|deselected|error)|no tests ran" "$LOGS/gpu-$name.log" | tail -1)
  echo "$name rc=$rc $((SECONDS - start))s :: $summary" | tee -a "$OUT/gpu-summary.txt"
  pack
}
G=tests/gpu
( one kernel_lines -s $G/test_gpu_kernel_lines.py -k "not load_inline"
  one ncu_roofline $G/test_gpu_ncu_roofline.py
  one stall_blame $G/test_gpu_stall_blame.py
  one ncu_sweep $G/test_gpu_ncu_sweep.py
  one kernel_lines_inline -s $G/test_gpu_kernel_lines.py -k load_inline ) &
( one lsp_e2e tests/lsp/test_lsp_e2e.py
  one report_lsp tests/lsp/test_report_lsp.py
  one compiled_lsp tests/lsp/test_compiled_lsp.py
  one compare_compiled_lsp tests/lsp/test_compare_compiled_lsp.py
  one clean_agent_gpu tests/lsp/test_clean_agent_gpu.py ) &
( one light_lsp $G/test_gpu_light_lsp.py
  one packages $G/test_gpu_packages.py
  one memory $G/test_gpu_memory.py
  one wire_producers tests/unit/test_wire_producers.py ) &
( one training $G/test_gpu_training.py
  one magic $G/test_gpu_magic.py
  one remote_agent $G/test_gpu_remote_agent.py
  one sanitizer $G/test_gpu_sanitizer.py ) &
wait
one light $G/test_gpu_light.py
one timing_policy $G/test_gpu_timing_policy.py
one stopping $G/test_gpu_stopping.py
