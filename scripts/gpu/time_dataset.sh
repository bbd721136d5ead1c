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
bash scripts/gpu/build_gpu.sh "$out" || exit 1
python3 scripts/gpu/time_dataset.py --bin build-gpu/kernels/flashlab-gpu --out "$out" --commit "$commit" "$@"
