#!/bin/bash
# Records the inside-the-kernel fixtures (issues 35 and 43) on a CUDA GPU with Nsight Compute:
#   tests/data/inside/record.sh OUT_DIR
# For each kernel: one `ncu --section SourceCounters --import-source yes` report (warp-stall
# samples and executed instructions per SASS instruction, with the line table), ncu's own
# Source page as CSV (the raw view to check ours against), and the kernel's SASS from
# cuobjdump (each instruction's control word: stall count, barriers set and waited on).
# The CUDA strided kernel is recorded twice (the same binary: the raw samples move between
# runs, the blame must not).
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: record.sh OUT_DIR}
mkdir -p "$out"
export TRITON_CACHE_DIR=$out/triton_cache TORCH_EXTENSIONS_DIR=$out/ext
cd "$here"
python3 cuda_strided.py >"$out/build.log" 2>&1 || echo "build failed" # compile once, outside ncu
ncu_src="ncu --section SourceCounters --section SpeedOfLight --import-source yes --clock-control none -c 1 -f"
rec() {
  local name=$1 kernel=$2 script=$3
  local t0=$SECONDS
  $ncu_src -k "regex:$kernel" -o "$out/$name" python3 "$script" >"$out/$name.log" 2>&1
  echo "$name: rc $? in $((SECONDS - t0)) s"
  ncu -i "$out/$name.ncu-rep" --page source --csv --print-source sass >"$out/$name.source.csv" 2>>"$out/$name.log"
}
rec tl_matmul '^matmul_kernel' tl_matmul.py
rec tl_vector_add '^add_kernel' tl_vector_add.py
rec tl_strided '^strided_sum_kernel' tl_strided.py
rec cuda_strided_sum '^strided_sum' cuda_strided.py
rec cuda_strided_sum_run2 '^strided_sum' cuda_strided.py
rec cuda_late_consumer '^late_consumer' cuda_strided.py
rec cuda_chase '^chase' cuda_strided.py
so=$(find "$out/ext" -name '*.so' | head -1)
[ -n "$so" ] && cuobjdump -sass "$so" >"$out/cuda_strided.sass"
for cubin in $(find "$out/triton_cache" -name '*.cubin'); do
  cuobjdump -sass "$cubin" >"$out/$(basename "$cubin" .cubin).sass"
done
ls -la "$out"
