#!/usr/bin/env bash
# The whole GPU-marked suite on the lent GPU, file by file under one time budget, resumable: a
# file that finished is listed in /tmp/kl-gpu-done and skipped by the next call on the same warm
# machine, so two back-to-back calls cover a suite longer than one call's limit. Then, while time
# is left, issue 36's benches (benchmarks/device_instant.sh's parts).
#   device run: bash benchmarks/device_gpu_suite.sh [budget_s] [instant parts]
#   (KL_GPU_FILES="tests/gpu/x.py …" runs those files only, in that order)
set -uo pipefail
cd "$(dirname "$0")/.."
source benchmarks/device_env.sh
BUDGET=${1:-560}
PARTS=${2:-}
DONE=/tmp/kl-gpu-done; touch "$DONE"
left() { echo $((BUDGET - SECONDS)); }
# The logs come back as one archive, remade after each file: the device returns 8 files a call.
LOGS=/tmp/kl-gpu-logs; mkdir -p "$LOGS"
pack() { tar czf "/tmp/gpu-logs.$BASHPID.tgz" -C "$LOGS" . && mv "/tmp/gpu-logs.$BASHPID.tgz" "$OUT/gpu-logs.tgz"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee -a "$OUT/gpu-env.txt"
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)" | tee -a "$OUT/gpu-env.txt"
if [[ -n "${KL_GPU_FILES:-}" ]]; then  # some files only, first: KL_GPU_FILES="tests/gpu/a.py …"
  read -ra FILES <<<"$KL_GPU_FILES"
else
  mapfile -t FILES < <(grep -rlE "pytest.mark.gpu|pytestmark = .*gpu" tests --include='test_*.py' | sort)
fi
for f in "${FILES[@]}"; do
  grep -qxF "$f" "$DONE" && continue
  t=$(left)
  if (( t < 25 )); then echo "== stopped before $f (${t}s left)"; break; fi
  name=$(basename "$f" .py)
  start=$SECONDS
  timeout "$t" python3 -m pytest -m gpu -q -p no:cacheprovider -rfEs --durations=5 "$f" >"$LOGS/gpu-$name.log" 2>&1
  rc=$?
  summary=$(grep -E "^(=+ )?[0-9]+ (passed|failed|skipped|deselected)|no tests ran|passed|failed" "$LOGS/gpu-$name.log" | tail -1)
  echo "$f rc=$rc $((SECONDS - start))s :: $summary" | tee -a "$OUT/gpu-summary.txt"
  pack
  if (( rc != 124 )); then echo "$f" >>"$DONE"; fi
done
cp "$DONE" "$OUT/gpu-done.txt"
if [[ -n "$PARTS" ]] && (( $(left) > 60 )); then
  timeout "$(left)" bash benchmarks/device_instant.sh "$PARTS"
fi
