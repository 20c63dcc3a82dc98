#!/usr/bin/env bash
# The H200 checks of 2026-12-05's second call, in priority order under one time budget:
# this session's GPU fixes (issues 34, 44, 46; timing after the profiler), Profile Kernel Lines
# live (35), the stall blame live (43), then CUPTI after the profiler and the light profile (36)
# while time is left.   device run: bash benchmarks/device_fixes.sh [budget_s]
set -uo pipefail
cd "$(dirname "$0")/.."
source benchmarks/device_env.sh
BUDGET=${1:-560}
left() { echo $((BUDGET - SECONDS)); }
part() {  # part NAME MAX_S CMD...: run while time is left, capped at MAX_S
  local name=$1 max=$2; shift 2
  local t=$(( $(left) < max ? $(left) : max ))
  if (( t < 30 )); then echo "== $name: skipped (${t}s left)"; return; fi
  echo "== $name (≤${t}s)"
  timeout "$t" "$@" >"$OUT/$name.log" 2>&1
  grep -E "passed|failed|PASSED|FAILED|^E |^\||µs|%|note:" "$OUT/$name.log" | tail -24
}
part fixes 200 python3 -m pytest -m gpu -q -s -p no:cacheprovider --timeout 100 -rA \
  tests/gpu/test_gpu_timing_policy.py::test_a_launch_bound_function_is_timed_in_a_graph \
  tests/gpu/test_gpu_sanitizer.py tests/gpu/test_gpu_asm_library.py \
  tests/gpu/test_gpu_ncu_roofline.py::test_ncu_puts_the_backward_on_the_forward_lines
part klines 150 python3 -m pytest -q -s -p no:cacheprovider -rA tests/gpu/test_gpu_kernel_lines.py
part blame 150 python3 -m pytest -q -s -p no:cacheprovider -rA tests/gpu/test_gpu_stall_blame.py
part cupti 70 python3 benchmarks/bench_cupti_after_profiler.py
part light 90 python3 -m pytest -q -p no:cacheprovider -rA --timeout 80 tests/gpu/test_gpu_light.py
