#!/usr/bin/env bash
# Issue 23 on the lent H200: the deep tracer's overhead on a training step (benchmarks/
# bench_deep_tracer.py, CUDA), the GPU tests of real projects (tests/gpu/test_gpu_deep.py: a
# layer from its CUDA driver under bf16 autocast, a Triton-tutorial-shaped script per line), and
# when benchmarks/public/nanogpt is carried (never committed), nanoGPT's CausalSelfAttention
# profiled from bench.py and bench.py as a whole script, per line of model.py.
#   device run: bash benchmarks/device_deep.sh
set -uo pipefail
cd "$(dirname "$0")/.."
source benchmarks/device_env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
python3 -c "import sys, torch; print('python', sys.version.split()[0], 'torch', torch.__version__)"
echo "== bench_deep_tracer (CUDA, wall time)"
timeout 300 python3 benchmarks/bench_deep_tracer.py --steps 20 --repeat 5 --layers 6 --dim 512 2>&1 | grep -v USDT
echo "== tests/gpu/test_gpu_deep.py"
timeout 400 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_gpu_deep.py 2>&1 | tail -15
if [ -f benchmarks/public/nanogpt/bench.py ]; then
  N=benchmarks/public/nanogpt
  echo "== nanoGPT: CausalSelfAttention.forward --from bench.py"
  timeout 300 python3 -m kernel_lens profile "$N/model.py::CausalSelfAttention.forward" \
    --from "$N/bench.py" --json --no-samples --no-history -q \
    -- --compile=False --real_data=False --batch_size=4 > "$OUT/nanogpt-attn.json" 2>"$OUT/nanogpt-attn.err"
  python3 - "$OUT/nanogpt-attn.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
if "error" in d:
    print("  error:", d["error"]["kind"], d["error"]["message"][:300]); sys.exit()
i = d["inputs"]
print("  inputs:", i.get("label"), "line", i.get("line"), i.get("call"), "context:", (i.get("context") or {}).get("label"))
print("  median", d["timing"]["median_ms"], "ms ±", d["timing"]["spread_pct"], "%")
for l in d["lines"]:
    ks = [k["short_name"] for op in l["ops"] for k in op["kernels"]]
    if ks:
        print(f"  {l['line']:>4} {l['source'][:50]:<50} {l['device_us']:9.1f} µs  {', '.join(ks[:3])}")
PY
  echo "== nanoGPT: bench.py as a whole script, 3 steps after 2 skipped (model.py's lines)"
  start=$(date +%s.%N)
  timeout 300 python3 -m kernel_lens profile "$N/bench.py" --skip 2 --steps 3 --json --no-samples -q \
    -- --compile=False --real_data=False > "$OUT/nanogpt-window.json" 2>"$OUT/nanogpt-window.err"
  echo "  exit $? in $(python3 -c "print(round($(date +%s.%N)-$start,1))") s"
  python3 - "$OUT/nanogpt-window.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
if "error" in d:
    print("  error:", d["error"]["kind"], d["error"]["message"][:300]); sys.exit()
print("  window:", d["script"].get("window"), "wall", d["script"]["wall_s"], "s")
print("  accounting:", d["accounting"]["on_lines_pct"], "% on lines")
for path, rows in (d.get("files") or {}).items():
    top = sorted(rows, key=lambda r: -(r["device_us"] + (r.get("backward") or {}).get("device_us", 0)))[:6]
    print(f"  {path}: {len(rows)} lines")
    for r in top:
        print(f"    {r['line']:>4} ×{r['hits']:<4} {r['source'][:50]:<50} fwd {r['device_us']/1e3:8.3f} ms")
PY
fi
