#!/usr/bin/env bash
# backward_profile.sh — on the GPU machine: Nsight Compute's full view (`--set full`) of this
# project's V2 backward main kernel (fl_v2_bwd_dq_dk_dv) and of PyTorch's FA2 backward main kernel
# (flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel) on the same shapes, one launch each, so that the
# 0.72-0.86 parity of tests/data/gpu_backward/fa2_parity.json (issue 25 item 1) can be read metric
# by metric: stall reasons, shared-memory bank conflicts, issue slots, registers, occupancy.
# Diagnostics for kernel work, not a validation: nothing in CI reads its output.
#
# Usage: bash scripts/gpu/backward_profile.sh OUTDIR [--source-only]
# Writes OUTDIR/{ours,fa2}_{d64,d128}.csv (ncu --page raw --csv: every metric of the set, one row
# per launch), OUTDIR/details_*.txt (ncu --page details), OUTDIR/build.log, and
# OUTDIR/source_ours_{d64,d128}.csv (ncu --section SourceCounters --page source --print-source sass:
# per SASS instruction of ours, its warp-stall samples by reason and its shared-memory wavefronts,
# ideal and excessive — where bank conflicts would show by address). --source-only: that step alone.
set -uo pipefail
out=${1:?usage: backward_profile.sh OUTDIR}
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
bash scripts/gpu/build_gpu.sh "$out" || exit 1
bin=build-gpu/kernels/flashlab-gpu
ncu_full="ncu --clock-control none --set full --launch-count 1"

ours() {  # name, d, tile flags: b2 h16 N8192 fp16, no mask (fa2_parity.json's bf16 shape in fp16)
  local flags="--pass backward --algo v2 $3 --nq 8192 --nk 8192 --d $2 --batch 2 --heads 16 --mask none --dtype fp16"
  $ncu_full --kernel-name regex:fl_v2_bwd_dq_dk_dv --csv --page raw --print-units base \
    "$bin" $flags --no-events --no-check --profile > "$out/ours_$1.csv" 2> "$out/ours_$1.err"
  echo "ours $1: ncu exit $? ($(wc -l < "$out/ours_$1.csv") lines)"
  $ncu_full --kernel-name regex:fl_v2_bwd_dq_dk_dv --page details \
    "$bin" $flags --no-events --no-check --profile > "$out/details_ours_$1.txt" 2>&1
}

fa2() {  # name, d: the same shape through PyTorch's flash backend
  local py="import torch
from torch.nn.attention import sdpa_kernel, SDPBackend
q, k, v = (torch.randn(2, 16, 8192, $2, device='cuda', dtype=torch.float16, requires_grad=True) for _ in range(3))
with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
    o = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    o.backward(torch.randn_like(o))
torch.cuda.synchronize()"
  $ncu_full --kernel-name regex:flash_bwd_dq_dk_dv --csv --page raw --print-units base \
    python3 -c "$py" > "$out/fa2_$1.csv" 2> "$out/fa2_$1.err"
  echo "fa2 $1: ncu exit $? ($(wc -l < "$out/fa2_$1.csv") lines)"
  $ncu_full --kernel-name regex:flash_bwd_dq_dk_dv --page details python3 -c "$py" > "$out/details_fa2_$1.txt" 2>&1
}

source_counters() {  # name, d, tile flags, N: ours only (b1 h16 fp16, no mask)
  ncu --clock-control none --section SourceCounters --launch-count 1 --kernel-name regex:fl_v2_bwd_dq_dk_dv \
    --page source --print-source sass --csv "$bin" --pass backward --algo v2 $3 --nq $4 --nk $4 --d $2 --batch 1 \
    --heads 16 --mask none --dtype fp16 --no-events --no-check --profile > "$out/source_ours_$1.csv" 2> "$out/source_ours_$1.err"
  echo "source ours $1: ncu exit $? ($(wc -l < "$out/source_ours_$1.csv") lines)"
}

if [ "${2:-}" != "--source-only" ]; then
  ours d128 128 "--br 64 --bc 128 --warps 8"
  fa2 d128 128
  ours d64 64 "--br 128 --bc 128 --warps 8"
  fa2 d64 64
fi
source_counters d64 64 "--br 128 --bc 128 --warps 8" 4096
source_counters d128 128 "--br 64 --bc 128 --warps 8" 4096
