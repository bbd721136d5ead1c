#!/usr/bin/env bash
# build_gpu.sh — on the GPU machine: builds flashlab-gpu and flashlab for sm_90 in BUILD_DIR (default
# build-gpu; kept between calls on a warm machine: a second call builds nothing), logging to
# LOGDIR/build.log and printing ptxas's spill warnings for the plain (untraced) kernels. Run from the
# repository root by the scripts that time or check the kernels (time_dataset.sh, backward_perf.sh,
# validate.py through common.build).
# Usage: bash scripts/gpu/build_gpu.sh LOGDIR [BUILD_DIR]
set -uo pipefail
log=${1:?usage: build_gpu.sh LOGDIR [BUILD_DIR]}/build.log
dir=${2:-build-gpu}
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s)
if [ ! -x "$dir/kernels/flashlab-gpu" ] || [ ! -x "$dir/sim/cli/flashlab" ]; then
  cmake -S . -B "$dir" -G Ninja -DFLASHLAB_VIEWER=OFF -DFLASHLAB_BENCH=OFF -DFLASHLAB_TESTS=OFF \
    -DFLASHLAB_PYTHON=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > "$log" 2>&1 &&
    ninja -C "$dir" -j16 flashlab-gpu flashlab >> "$log" 2>&1 || { tail -40 "$log"; exit 1; }
fi
echo "build: $(( $(date +%s) - t0 )) s; spills in plain kernels: $(grep -c 'spill.*Lb0E' "$log" 2>/dev/null || echo 0)"
