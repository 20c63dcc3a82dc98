#!/usr/bin/env bash
# The GPU pass on the lent H200 (see ../shared/notes/gpu-device.md): install the carried wheels,
# run every GPU-marked test plus the CLI/LSP suites on CUDA, and save a few real artifacts to $OUT.
#   device run: bash benchmarks/device_run.sh [pytest -k expression]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/kl-out}
mkdir -p "$OUT"
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl $(ls .whl/*/*.whl 2>/dev/null)
  export PYTHONPATH=/tmp/site
fi
export PYTHONPATH=$PWD/server:$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
export KERNEL_LENS_CACHE=/tmp/kl-cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
which ncu && ncu --version | tail -1
K=${1:-}
timeout 540 python3 -m pytest -q -rA -p no:cacheprovider -p no:logging -m gpu tests ${K:+-k "$K"} \
  2>&1 | tee "$OUT/gpu-tests.log" | tail -25
# Real artifacts for CPU tests and docs.
python3 -m kernel_lens ncu run kernels/triton_square.py::square_small --json > "$OUT/ncu_square_small.json" 2>"$OUT/ncu.err"
cp /tmp/kl-cache/ncu/*.ncu-rep "$OUT/" 2>/dev/null
python3 -m kernel_lens profile kernels/triton_square.py::square --json --no-samples > "$OUT/triton_square_profile.json" 2>/dev/null
python3 -m kernel_lens sweep kernels/triton_square.py::square --param BLOCK_SIZE --values 64,128,256,512,1024,2048,4096 2>/dev/null | tee "$OUT/sweep.txt"
ls -la "$OUT"
