#!/usr/bin/env bash
# The H200 checks of the fixes made after the first GPU run of 2026-12-05 (issues 34, 44, 46)
# and the CUPTI-after-profiler question, about 5 minutes:
#   device run: bash benchmarks/device_fixes.sh
set -uo pipefail
cd "$(dirname "$0")/.."
source benchmarks/device_env.sh
timeout 110 python3 benchmarks/bench_cupti_after_profiler.py 2>&1 | tee "$OUT/cupti.txt"
timeout 200 python3 -m pytest -m gpu -q -p no:cacheprovider --timeout 150 -rA \
  tests/gpu/test_gpu_asm_library.py \
  tests/gpu/test_gpu_ncu_roofline.py::test_ncu_puts_the_backward_on_the_forward_lines \
  tests/gpu/test_gpu_sanitizer.py 2>&1 | tee "$OUT/fixes.log" | grep -E "passed|failed|Error|^E " | tail -20
