#!/usr/bin/env bash
# time_dataset.sh — on the GPU machine: builds flashlab-gpu and flashlab (sm_90), then runs
# scripts/gpu/time_dataset.py with the given steps (issue 23's data set). The build directory
# build-gpu is kept between calls on a warm machine, so a second call only re-runs the steps.
# Usage: bash scripts/gpu/time_dataset.sh OUTDIR COMMIT [time_dataset.py flags...]
set -uo pipefail
out=${1:?usage: time_dataset.sh OUTDIR COMMIT [flags]}
commit=${2:?usage: time_dataset.sh OUTDIR COMMIT [flags]}
shift 2
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
t0=$(date +%s)
if [ ! -x build-gpu/kernels/flashlab-gpu ] || [ ! -x build-gpu/sim/cli/flashlab ]; then
  cmake -S . -B build-gpu -G Ninja -DFLASHLAB_VIEWER=OFF -DFLASHLAB_BENCH=OFF -DFLASHLAB_TESTS=OFF \
    -DFLASHLAB_PYTHON=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/build.log" 2>&1 &&
    ninja -C build-gpu -j16 flashlab-gpu flashlab >> "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
fi
echo "build: $(( $(date +%s) - t0 )) s"
python3 scripts/gpu/time_dataset.py --bin build-gpu/kernels/flashlab-gpu --out "$out" --commit "$commit" "$@"
