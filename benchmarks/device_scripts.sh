#!/usr/bin/env bash
# Issue 10 on the lent H200: public lecture scripts with no set-up (benchmarks/public/, not
# committed: fetched from github.com/gpu-mode/lectures lecture_001), run through the CLI.
#   device run: bash benchmarks/device_scripts.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/kl-out}
mkdir -p "$OUT"
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site
fi
export PYTHONPATH=$PWD/server:$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
export KERNEL_LENS_CACHE=/tmp/kl-cache
for target in public/pytorch_square.py public/pytorch_square.py::square_2 \
  public/pt_profiler.py ../tests/data/examples/scripts/triton_main.py; do
  name=$(echo "$target" | tr '/:.' '___')
  echo "== kernel-lens profile benchmarks/$target"
  timeout 240 python3 -m kernel_lens profile "benchmarks/$target" 2>"$OUT/$name.err" \
    | tee "$OUT/$name.txt" | head -40
  tail -3 "$OUT/$name.err"
done
ls /tmp/test_trace_*.json 2>/dev/null && echo "pt_profiler's own trace was written (should not be)"
