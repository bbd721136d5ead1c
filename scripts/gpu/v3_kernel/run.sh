#!/usr/bin/env bash
# run.sh — build V3's staged forward kernel on the H200 and run, in one go: the unit tests, the
# correctness grid (every "fa3" configuration and every ablation variant on ragged N, float64 check),
# then the timing of the checked configurations on cuDNN's baseline shapes beside PyTorch's cuDNN
# attention (compare_cudnn.py, same run, same event method), the ablation at N = 16,384 and the
# scheduler variants and B_r 128 at d = 64 on all three N.
#
#   COMMIT=<sha> bash scripts/gpu/v3_kernel/run.sh [OUTDIR]    (OUTDIR defaults to $OUT)
#
# Writes OUTDIR/results.jsonl (one line per unit test / configuration), OUTDIR/v3_h200.json (meta +
# rows + the cuDNN comparison), OUTDIR/logs.tar.gz (build log with ptxas -v, SASS counts, stderr).
# Each program run has a time limit of 20 s; after a hang, that variant and d are skipped.
set -u -o pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
OUTDIR=${1:-${OUT:-/tmp/v3_out}}
WORK=/tmp/v3_work
mkdir -p "$OUTDIR" "$WORK/logs"
LOG=$WORK/logs
cd "$HERE"
FLAGS="-gencode=arch=compute_90a,code=sm_90a -O3 -std=c++17 -Xptxas -v"
echo "== build $(date -u +%H:%M:%S)"
for f in variants_fa3 variants_ablation main; do
  nvcc $FLAGS -c $f.cu -o $WORK/$f.o > $LOG/build_$f.log 2>&1 &
done
wait
nvcc -gencode=arch=compute_90a,code=sm_90a $WORK/*.o -o $WORK/v3 -lcuda > $LOG/build_link.log 2>&1 || { cat $LOG/build_*.log | tail -40; exit 1; }
grep -h "spill\|stack frame\|warning" $LOG/build_*.log | sort | uniq -c | tee $LOG/ptxas_summary.txt
cuobjdump -sass $WORK/v3 > $WORK/v3.sass 2>/dev/null
{ echo "kernels: $(grep -c 'Function :' $WORK/v3.sass)"; echo "HGMMA: $(grep -c HGMMA $WORK/v3.sass)";
  echo "local memory (LDL/STL): $(grep -c 'LDL\|STL' $WORK/v3.sass)"; echo "SYNCS (mbarrier): $(grep -c SYNCS $WORK/v3.sass)";
  echo "UTMALDG (TMA loads): $(grep -c UTMALDG $WORK/v3.sass)"; echo "USETMAXREG: $(grep -c USETMAXREG $WORK/v3.sass)"; } | tee $LOG/sass_counts.txt
awk '/Function : .*Cfg.*Li128ELi128ELi176ELi2ELb0ELb1ELb1ELb1ELb1E/{p=1} p&&/HGMMA|MUFU.EX2|SYNCS|UTMALDG|BAR|SHFL/{print; n++} n>120{exit}' $WORK/v3.sass > $LOG/sass_excerpt_fa3_fp16_d128.txt

R=$OUTDIR/results.jsonl
: > $R
HUNG=" "
run() {  # one program run, 20 s at most (the largest took under 3 s), its JSON line(s) appended;
  # after a time-out every later run of the same variant and d is skipped (a hang is a deadlock of
  # that kernel, and each costs the full 20 s)
  local key="$2:$4"
  case "$HUNG" in *" $key "*) echo "skipped (hung before): v3 $*" >> $LOG/stderr.txt; return 0;; esac
  timeout 20 $WORK/v3 "$@" >> $R 2>> $LOG/stderr.txt
  local rc=$?
  [ $rc -ne 0 ] && echo "rc $rc: v3 $*" | tee -a $LOG/stderr.txt
  [ $rc -eq 124 ] && HUNG="$HUNG$key "
  return 0
}
echo "== unit $(date -u +%H:%M:%S)"
run unit
cat $R
echo "== correctness $(date -u +%H:%M:%S)"
SEED=100
for dt in fp16 bf16; do for d in 64 128; do for m in none causal; do
  for shape in "2 1000 3" "1 3000 2" "3 1 2" "1 1024 2"; do
    SEED=$((SEED+1)); run run fa3 $dt $d $m $shape --seed $SEED
  done
done; done; done
for v in stages1 no_pingpong no_overlap grid static dynamic no_ws br128; do for d in 64 128; do for m in none causal; do
  [ $v = br128 ] && [ $d = 128 ] && continue
  SEED=$((SEED+1)); run run $v fp16 $d $m 2 1000 3 --seed $SEED
done; done; done
echo "== timing $(date -u +%H:%M:%S)"
for d in 64 128; do for m in none causal; do for n in 1024 4096 16384; do
  SEED=$((SEED+1)); run run fa3 fp16 $d $m $((16384 / n)) $n $((2048 / d)) --time --seed $SEED
done; done; done
for v in stages1 no_pingpong no_overlap no_ws; do for d in 64 128; do for m in none causal; do
  SEED=$((SEED+1)); run run $v fp16 $d $m 1 16384 $((2048 / d)) --time --seed $SEED
done; done; done
for v in grid static dynamic br128; do for d in 64 128; do for m in none causal; do for n in 1024 4096 16384; do
  [ $v = br128 ] && [ $d = 128 ] && continue
  SEED=$((SEED+1)); run run $v fp16 $d $m $((16384 / n)) $n $((2048 / d)) --time --seed $SEED
done; done; done; done
echo "== summary $(date -u +%H:%M:%S)"
python3 "$HERE/summarize.py" $R > $LOG/summary.txt
echo "checks passed: $(grep -c ' ok' $LOG/summary.txt), failed: $(grep -c 'FAIL' $LOG/summary.txt)"
grep 'FAIL' $LOG/summary.txt | head -20
tail -5 $LOG/stderr.txt
echo "== cudnn $(date -u +%H:%M:%S)"
PYTHONUNBUFFERED=1 timeout 300 python3 "$HERE/compare_cudnn.py" --ours $R --out $OUTDIR/v3_h200.json \
  --commit "${COMMIT:-unknown}" --sources "$HERE" 2>&1 | tee $LOG/compare.txt
tar czf $OUTDIR/logs.tar.gz -C $WORK logs
echo "== done $(date -u +%H:%M:%S)"
