#!/usr/bin/env bash
# Issue 22 on the lent H200: a public training benchmark (nanoGPT's bench.py, GPT-2 124M, bf16
# autocast, torch.compile; carried in benchmarks/public/nanogpt, never committed) profiled as a
# whole script, and the repo's training steps: kernel time on lines against the trace.
#   device run (carry .whl and benchmarks/public): bash benchmarks/device_training.sh
set -uo pipefail
cd "$(dirname "$0")/.."
source benchmarks/device_env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
summ() {
  python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
if "error" in d:
    print("  error:", d["error"]["kind"], d["error"]["message"][:400]); sys.exit()
t = json.load(open(d["trace_path"]))
runs = d.get("profiled_runs", 1)
cats = ("kernel", "gpu_memcpy", "gpu_memset")
k = sum(e.get("dur", 0) for e in t["traceEvents"] if e.get("cat") in cats) / runs
fwd = sum(l["device_us"] for l in d["lines"])
bwd = sum((l.get("backward") or {}).get("device_us", 0) for l in d["lines"])
acc = d["accounting"]
print(f"  {d['function']}: trace kernels {k/1e3:.3f} ms/call · lines fwd {fwd/1e3:.3f} + bwd {bwd/1e3:.3f} = {(fwd+bwd)/1e3:.3f} ms ({100*(fwd+bwd)/max(k,1e-9):.2f}%) · accounting {acc['on_lines_pct']}% on lines, remainder {[(r['reason'], round(r['device_us'],1)) for r in acc['remainder']]}")
for l in d["lines"]:
    b = l.get("backward")
    bp = l.get("backward_pass")
    if l["device_us"] > 0.01 * k or (b and b["device_us"] > 0.01 * k) or bp:
        print(f"    {l['line']:>4} {l['source'][:44]:<44} fwd {l['device_us']/1e3:8.3f} ms" + (f" · bwd {b['device_us']/1e3:8.3f} ms ({', '.join(o['name'] for o in b['ops'][:3])})" if b else "") + (f" · pass {bp['device_us']/1e3:.3f} ms over {bp['lines']}" if bp else ""))
if d.get("timing"):
    print(f"  median {d['timing']['median_ms']:.3f} ms ±{d['timing']['spread_pct']}%  context: {(d['inputs'].get('context') or {}).get('label')}")
PY
}
for spec in kernels/train_step.py::train_step kernels/train_step.py::train_step_bf16 \
    kernels/train_step.py::forward_bf16 kernels/train_compiled.py::train_step; do
  name=$(basename "${spec%%::*}" .py)-${spec##*::}
  timeout 200 python3 -m kernel_lens profile "$spec" --json --no-samples -q --no-history > "$OUT/$name.json" 2>"$OUT/$name.err"
  summ "$OUT/$name.json"
done
timeout 200 python3 -m kernel_lens profile kernels/train_step.py::MLP.forward --backward --json --no-samples -q --no-history > "$OUT/mlp-backward.json" 2>/dev/null
summ "$OUT/mlp-backward.json"
if [ -f benchmarks/public/nanogpt/bench.py ]; then
  start=$(date +%s.%N)
  timeout 300 python3 -m kernel_lens profile benchmarks/public/nanogpt/bench.py --json --no-samples -q > "$OUT/nanogpt.json" 2>"$OUT/nanogpt.err"
  echo "nanoGPT bench.py as a whole script: exit $? in $(python3 -c "print(round($(date +%s.%N)-$start,1))") s"
  summ "$OUT/nanogpt.json"
fi
(cd "$OUT" && tar czf /tmp/training-check.tgz *.json && find . -maxdepth 1 -name "*.json" -delete && mv /tmp/training-check.tgz .)
