#!/usr/bin/env bash
# Issue 36 on the lent H200, about 5 minutes: the light profile's GPU tests and its benchmark
# (plain vs light vs deep, one run), the cold click's phases, the traces on 2 and 16 cores.
#   device run: bash benchmarks/device_instant.sh [tests,light,warm,traces,traces10m]
set -uo pipefail
cd "$(dirname "$0")/.."
source benchmarks/device_env.sh
PARTS=${1:-tests,light,warm,traces,traces10m}
on() { [[ ",$PARTS," == *",$1,"* ]]; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/instant-env.txt"
python3 -c "import torch, triton, msgspec; print('torch', torch.__version__, 'triton', triton.__version__, 'msgspec', msgspec.__version__)" | tee -a "$OUT/instant-env.txt"
nproc | tee -a "$OUT/instant-env.txt"
if on tests; then
  timeout 150 python3 -m pytest -q -rA -p no:cacheprovider tests/gpu/test_gpu_light.py \
    tests/unit/test_light_profile.py tests/unit/test_trace_reader_cores.py \
    tests/cli/test_agent_phases.py 2>&1 | tee "$OUT/instant-tests.log" | tail -15
fi
if on light; then
  timeout 150 python3 benchmarks/bench_light.py --steps 60 --repeat 2 --out "$OUT/instant-light.json" \
    2>&1 | tee "$OUT/instant-light.txt" | tail -12
fi
if on warm; then
  timeout 120 python3 benchmarks/bench_agent_warm.py --cold 1 --warm 3 --think 3 --delay 8 --settle 6 \
    --phases 2>&1 | tee "$OUT/instant-warm.txt" | head -40
fi
if on traces; then
  timeout 120 python3 benchmarks/bench_traces.py --sizes 1000000 --kinds kl,server,lsp --cpus 2,16 \
    2>&1 | tee "$OUT/instant-traces.txt" | tail -6
fi
if on traces10m; then
  timeout 110 python3 benchmarks/bench_traces.py --sizes 10000000 --kinds server,lsp \
    2>&1 | tee "$OUT/instant-traces10m.txt" | tail -4
fi
ls -la "$OUT"
