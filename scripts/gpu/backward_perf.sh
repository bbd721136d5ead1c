#!/usr/bin/env bash
# backward_perf.sh — on the GPU machine, from a clean copy of the repository: builds flashlab-gpu and
# flashlab (build_gpu.sh), then runs scripts/gpu/backward_perf.py (V2's backward against PyTorch's
# FA2 backward, checks and Nsight Compute times in one run) into OUTDIR: fa2_parity.json,
# backward_perf_logs.tar.gz, build.log. Commit them as tests/data/gpu_backward/fa2_parity.json and
# regenerate docs/validation/backward_h200.md with `python3 scripts/gpu/backward_perf.py --report ...`.
# Usage: bash scripts/gpu/backward_perf.sh OUTDIR COMMIT [backward_perf.py flags...]
set -uo pipefail
out=${1:?usage: backward_perf.sh OUTDIR COMMIT [flags]}
commit=${2:?usage: backward_perf.sh OUTDIR COMMIT [flags]}
shift 2
mkdir -p "$out"
export PYTHONUNBUFFERED=1
bash scripts/gpu/build_gpu.sh "$out" || exit 1
python3 scripts/gpu/backward_perf.py --bin build-gpu/kernels/flashlab-gpu --out "$out" --commit "$commit" "$@"
