#!/usr/bin/env bash
# ncu_run.sh — one device call for V3's staged kernel, kernel for kernel against cuDNN: builds the
# program (sm_90a), runs the unit tests and the "fa3" correctness grid (fp16/bf16, d 64/128, none and
# causal, N 1000 / 3000 / 1 / 1024: float64 check of O and L, poisoned output, guard, repeat
# bit-identical), then ncu_vs_cudnn.py (V3 and PyTorch's cuDNN attention under the same Nsight
# Compute flags, same run), then ncu_ablation.py's parts: the B_r sweep behind fa3's launch rule, the
# switch ablation and the per-unit counters. Each program run gets 30 s (a hung kernel costs 30 s, not
# the call); the ablation parts stop starting rows DEADLINE seconds after the script began (default 560).
#
#   COMMIT=<sha> [PARTS="main sweep ablation units"] [DEADLINE=560] bash scripts/gpu/v3_kernel/ncu_run.sh OUTDIR
#
# Writes OUTDIR/checks.jsonl, OUTDIR/v3_ncu.json, OUTDIR/cudnn_baseline.json, OUTDIR/ncu_logs.tar.gz,
# OUTDIR/cudnn_logs.tar.gz, OUTDIR/build_logs.tar.gz (part main); OUTDIR/v3_sweep.json,
# v3_ablation.json, v3_units.json and their ncu_logs_PART.tar.gz.
set -u -o pipefail
START=$(date +%s)
PARTS=${PARTS:-main sweep ablation units}
DEADLINE=${DEADLINE:-560}
HERE=$(cd "$(dirname "$0")" && pwd)
OUTDIR=${1:?usage: ncu_run.sh OUTDIR}
W=/tmp/v3_ncu_work
mkdir -p "$OUTDIR" "$W/logs"
export PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
ARCH="-gencode=arch=compute_90a,code=sm_90a"
echo "== build $(date -u +%H:%M:%S)"
for f in variants_fa3 variants_ablation main; do
  nvcc $ARCH -O3 -std=c++17 -Xptxas -v -c "$HERE/$f.cu" -o "$W/$f.o" > "$W/logs/build_$f.log" 2>&1 &
done
wait
nvcc $ARCH "$W"/*.o -o "$W/v3" -lcuda > "$W/logs/build_link.log" 2>&1 || { tail -40 "$W"/logs/build_*.log; exit 1; }
tar czf "$OUTDIR/build_logs.tar.gz" -C "$W" logs
for part in $PARTS; do
if [ "$part" != main ]; then
  echo "== $part $(date -u +%H:%M:%S)"
  python3 "$HERE/ncu_ablation.py" --bin "$W/v3" --out "$OUTDIR" --commit "${COMMIT:-unknown}" --part "$part" \
    --deadline $((DEADLINE - ($(date +%s) - START)))
  continue
fi
C=$OUTDIR/checks.jsonl
: > "$C"
echo "== checks $(date -u +%H:%M:%S)"
timeout 30 "$W/v3" unit >> "$C" || echo "unit: exit $?"
SEED=100
for dt in fp16 bf16; do for d in 64 128; do for m in none causal; do
  for shape in "2 1000 3" "1 3000 2" "3 1 2" "1 1024 2"; do
    SEED=$((SEED + 1))
    timeout 30 "$W/v3" run fa3 $dt $d $m $shape --seed $SEED >> "$C" || echo "exit $?: fa3 $dt $d $m $shape"
    # d = 64: both B_r of fa3's launch rule, each forced (the rule picks one per N)
    [ $d = 64 ] && for br in 128 192; do
      timeout 30 "$W/v3" run fa3 $dt $d $m $shape --seed $SEED --br $br >> "$C" || echo "exit $?: fa3 $dt $d $m $shape --br $br"
    done
  done
done; done; done
echo "checks: $(grep -c '"pass": true' "$C") passed, $(grep -c '"pass": false' "$C") failed"
echo "== ncu $(date -u +%H:%M:%S)"
python3 "$HERE/ncu_vs_cudnn.py" --bin "$W/v3" --out "$OUTDIR" --commit "${COMMIT:-unknown}"
done
echo "== done $(date -u +%H:%M:%S)"
