#!/usr/bin/env bash
# The H200 checks of this session's GPU fixes (issues 34, 44, 46), CUPTI after the profiler,
# the stall blame live (issue 43) and the light profile (issue 36), under 9 minutes:
#   device run: bash benchmarks/device_fixes.sh
set -uo pipefail
cd "$(dirname "$0")/.."
source benchmarks/device_env.sh
timeout 80 python3 benchmarks/bench_cupti_after_profiler.py 2>&1 | tee "$OUT/cupti.txt"
timeout 200 python3 -m pytest -m gpu -q -p no:cacheprovider --timeout 100 -rA \
  tests/gpu/test_gpu_timing_policy.py::test_a_launch_bound_function_is_timed_in_a_graph \
  tests/gpu/test_gpu_sanitizer.py tests/gpu/test_gpu_asm_library.py \
  tests/gpu/test_gpu_ncu_roofline.py::test_ncu_puts_the_backward_on_the_forward_lines \
  2>&1 | tee "$OUT/fixes.log" | grep -E "passed|failed|PASSED|FAILED|^E |µs" | tail -16
timeout 150 python3 -m pytest -q -s -p no:cacheprovider -rA tests/gpu/test_gpu_stall_blame.py \
  2>&1 | tee "$OUT/blame.log" | grep -E "passed|failed|PASSED|FAILED|^E |%" | tail -12
timeout 90 python3 -m pytest -q -p no:cacheprovider -rA --timeout 80 tests/gpu/test_gpu_light.py \
  2>&1 | tee "$OUT/light.log" | grep -E "passed|failed|PASSED|FAILED|^E " | tail -8
