#!/usr/bin/env bash
# Nsight Compute's view of the V1 and V2 kernels with the grid full (batch 8 x 32 heads, N = 4096,
# fp16, no mask): where V1's time goes that V2 does not spend (issue 10 part 2). One launch of each
# plain kernel (flashlab-gpu --profile), `ncu --set full`, clocks left as they are. Then the masked
# configs whose fragments mask_scores sets to -inf, checked against the simulator and float64.
#
# Usage: scripts/gpu/v1_profile.sh BUILD/kernels/flashlab-gpu OUTDIR
# Writes OUTDIR/{v1,v2}_full.csv (ncu --page raw --csv: every metric of the set), OUTDIR/checks.log.
set -uo pipefail
bin=$1
out=$2
mkdir -p "$out"
grid="--nq 4096 --nk 4096 --batch 8 --heads 32 --dtype fp16 --no-events --no-check --profile"
profile() {  # name, flags
  ncu --clock-control none --set full --csv --page raw --print-units base --kernel-name regex:^fl_ \
    "$bin" $2 $grid > "$out/$1_full.csv" 2> "$out/$1_ncu.err"
  echo "$1: ncu exit $? ($(wc -l < "$out/$1_full.csv") lines)"
}
profile v1_d64 "--algo v1 --d 64 --br 64 --bc 64 --warps 4"
profile v2_d64 "--algo v2 --d 64 --br 128 --bc 64 --warps 4"
{
  for flags in "--algo v2 --nq 1000 --nk 700 --d 64 --br 64 --bc 64 --warps 4 --mask causal-br" \
               "--algo v2 --nq 777 --nk 1500 --d 128 --br 128 --bc 64 --warps 4 --mask window:100,37" \
               "--algo v1 --nq 1000 --nk 700 --d 64 --br 64 --bc 64 --warps 4 --mask causal" \
               "--algo v1 --nq 300 --nk 333 --d 32 --br 32 --bc 64 --warps 4 --mask window:50,9 --dtype bf16"; do
    echo "== flashlab-gpu $flags"
    "$bin" $flags
    echo "exit $?"
  done
} > "$out/checks.log" 2>&1
grep -c "^exit 0" "$out/checks.log" | sed 's/^/checks passed: /'
