# Sourced by the device scripts (benchmarks/device_*.sh): from the repository root, the carried
# wheels installed into /tmp/site, the server on PYTHONPATH, a private cache and history, and
# $OUT for what comes back.
OUT=${OUT:-/tmp/kl-out}; mkdir -p "$OUT"
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
fi
export PYTHONPATH=$PWD/server:$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
export KERNEL_LENS_CACHE=/tmp/kl-cache KERNEL_LENS_HISTORY=/tmp/kl-history
