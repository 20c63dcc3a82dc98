#!/usr/bin/env bash
# Record the training-step fixtures on the lent H200 (issue 22; memory ones for issue 29):
#   device run: bash benchmarks/record_training.sh
# Writes to $OUT: each profile's JSON result and its Chrome trace (line-tagged by the agent), the
# step's ground truth (events timing, kernel time in a plain profiler trace), a profile_memory
# trace and allocator snapshots (a step; an out-of-memory).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/kl-out}; mkdir -p "$OUT"
export PYTHONPATH=$PWD/server:$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
export KERNEL_LENS_CACHE=/tmp/kl-cache KERNEL_LENS_HISTORY=/tmp/kl-history
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
for spec in kernels/train_step.py::train_step kernels/train_step.py::train_step_bf16 \
    kernels/train_step.py::forward_bf16 kernels/train_compiled.py::train_step; do
  name=$(basename "${spec%%::*}" .py)-${spec##*::}
  timeout 300 python3 -m kernel_lens profile "$spec" --json --no-samples -q > "$OUT/$name.json" 2>"$OUT/$name.err"
  echo "$name exit $?"
  python3 - "$OUT/$name.json" "$OUT/$name-trace.json" <<'PY'
import json, shutil, sys
d = json.load(open(sys.argv[1]))
if "error" in d:
    print("  error:", d["error"]["kind"], d["error"]["message"][:300]); sys.exit()
shutil.copy(d["trace_path"], sys.argv[2])
t = json.load(open(d["trace_path"]))
runs = d.get("profiled_runs", 3)
k = sum(e.get("dur", 0) for e in t["traceEvents"] if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"))
lines = sum(l["device_us"] for l in d["lines"])
print(f"  median {d['timing']['median_ms']:.3f} ms ±{d['timing']['spread_pct']}%  kernels/call {k/runs:.1f} us  lines {lines:.1f} us ({100*lines/max(k/runs,1e-9):.1f}%)")
kn = sorted({e['name'][:60] for e in t['traceEvents'] if e.get('cat') == 'kernel'})
print("  kernels:", kn[:12])
PY
done
timeout 200 python3 benchmarks/record_memory.py "$OUT"
(cd "$OUT" && tar czf /tmp/training.tgz --exclude training.tgz . && find . -maxdepth 1 -type f ! -name "*.log" -delete && mv /tmp/training.tgz . && ls -la)
