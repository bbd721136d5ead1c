#!/usr/bin/env bash
# smoke.sh — a quick first look on the GPU machine: a few configs of each kernel (events, m/l,
# O/L), one timing per kernel at the performance size, and whether ncu and compute-sanitizer work.
# Usage: scripts/gpu/smoke.sh FLASHLAB_GPU_BINARY OUT_DIR
set -uo pipefail
G=$1
OUT=$2
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
cat > "$OUT/smoke_configs.txt" <<'CFG'
--algo v2 --nq 1000 --nk 1000 --d 64 --br 64 --bc 64 --warps 4
--algo v2 --nq 1000 --nk 1000 --d 64 --br 64 --bc 64 --warps 4 --mask causal
--algo v2 --nq 300 --nk 200 --d 128 --br 128 --bc 128 --warps 8 --mask causal-br --dtype bf16 --stats-blocks 0
--algo v2 --nq 257 --nk 511 --d 32 --br 64 --bc 128 --warps 4 --mask window:64,16 --batch 2 --heads 3
--algo v1 --nq 300 --nk 250 --d 64 --br 64 --bc 64 --warps 4 --mask causal
--algo v1 --nq 200 --nk 333 --d 128 --br 32 --bc 64 --warps 4 --dtype bf16 --mask window:20,0 --block-skip on
--algo standard --nq 300 --nk 250 --d 64 --br 64 --bc 64 --warps 4 --mask causal-br
--algo standard --nq 128 --nk 100 --d 128 --br 128 --bc 64 --warps 8 --mask window:10,5 --batch 2 --heads 2
CFG
"$G" --configs "$OUT/smoke_configs.txt" --json "$OUT/smoke.json"
echo "exit $?"
P="--batch 4 --heads 16 --seq 4096 --no-events --check-heads 1 --time"
"$G" --algo v2 --d 64 --br 128 --bc 128 --warps 8 $P --reps 10
"$G" --algo v2 --d 64 --br 64 --bc 128 --warps 4 $P --reps 10
"$G" --algo v2 --d 128 --br 128 --bc 128 --warps 8 $P --reps 10 --mask causal
"$G" --algo v2 --d 128 --br 64 --bc 64 --warps 4 $P --reps 10
"$G" --algo v1 --d 64 --br 64 --bc 64 --warps 4 $P --reps 3
"$G" --algo standard --d 64 --br 128 --bc 64 --warps 8 $P --reps 3
python3 - <<'PY'
import torch, torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
for d in (64, 128):
    q, k, v = (torch.randn(4, 16, 4096, d, device="cuda", dtype=torch.float16) for _ in range(3))
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        for _ in range(5): F.scaled_dot_product_attention(q, k, v)
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        ts = []
        for _ in range(20):
            s.record(); F.scaled_dot_product_attention(q, k, v); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
    ts.sort(); ms = ts[len(ts)//2]
    print(f"torch flash d={d}: {ms:.3f} ms {4*4*16*4096*4096*d/ms/1e9:.1f} TFLOP/s")
PY
ncu --query-metrics 2>/dev/null | grep -E "^l1tex__t_(bytes|sectors)_pipe_lsu_mem_global_op_(ld|ldgsts|st) " 
M=l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum,l1tex__t_bytes_pipe_lsu_mem_global_op_ldgsts.sum,l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum,dram__bytes_read.sum
ncu --clock-control none --metrics $M --csv --kernel-name regex:^fl_ "$G" --algo v2 --seq 1024 --d 64 --br 64 --bc 64 --profile 2>&1 | tail -6
ncu --clock-control none --metrics $M --csv --kernel-name regex:^fl_ "$G" --algo v1 --seq 1024 --d 64 --br 64 --bc 64 --profile 2>&1 | tail -6
compute-sanitizer --tool memcheck --error-exitcode 9 "$G" --algo v2 --nq 100 --nk 77 --d 32 --br 64 --bc 64 --mask causal-br 2>&1 | tail -3
compute-sanitizer --tool racecheck --error-exitcode 9 "$G" --algo v1 --nq 100 --nk 77 --d 32 --br 32 --bc 64 2>&1 | tail -3
