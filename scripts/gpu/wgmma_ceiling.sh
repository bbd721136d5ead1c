#!/usr/bin/env bash
# wgmma_ceiling.sh — builds and runs scripts/gpu/wgmma_ceiling.cu on the GPU machine (sm_90a) and
# writes OUTDIR/wgmma.json: the measured wgmma rates and latencies plus metadata (GPU, driver,
# commit, command, date), through ceilings.sh. Issue 27: the tensor cores' rate under FA3's
# instruction, beside ceilings.cu's mma.sync.
# Usage: FLASHLAB_COMMIT=$(git rev-parse --short HEAD) bash scripts/gpu/wgmma_ceiling.sh OUTDIR
set -euo pipefail
BENCH=wgmma_ceiling BENCH_ARCH="-gencode arch=compute_90a,code=sm_90a" BENCH_JSON=wgmma.json \
  BENCH_COMMAND="bash scripts/gpu/wgmma_ceiling.sh OUTDIR" exec bash "$(dirname "$0")/ceilings.sh" "$@"
