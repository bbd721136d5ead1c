#!/usr/bin/env bash
# First look at the backward kernels on the GPU machine: build flashlab-gpu, then events and
# dQ, dK, dV on a few small configs. Output under $OUT (or ./out).
set -u
OUT=${OUT:-out}
mkdir -p "$OUT"
bash scripts/gpu/build_gpu.sh "$OUT" || exit 1
G=build-gpu/kernels/flashlab-gpu
$G --list-tiles | tee "$OUT/tiles.txt"
while read -r line; do
  [ -z "$line" ] && continue
  echo "== $line"
  $G $line 2>&1 | head -40
done <<'LIST' | tee "$OUT/smoke.log"
--pass backward --algo v2 --nq 64 --nk 64 --d 64 --br 64 --bc 64 --warps 4 --dtype fp16
--pass backward --algo v2 --nq 200 --nk 150 --d 64 --br 64 --bc 64 --warps 4 --mask causal
--pass backward --algo v2 --nq 300 --nk 200 --d 32 --br 128 --bc 128 --warps 8 --mask causal-br --dtype bf16
--pass backward --algo v2 --nq 257 --nk 300 --d 128 --br 64 --bc 64 --warps 4 --mask window:30,40 --batch 2 --heads 2
--pass backward --algo v1 --nq 64 --nk 64 --d 64 --br 64 --bc 64 --warps 4
--pass backward --algo v1 --nq 200 --nk 150 --d 64 --br 64 --bc 64 --warps 4 --mask causal
--pass backward --algo v1 --nq 300 --nk 200 --d 128 --br 64 --bc 64 --warps 4 --mask causal-br --dtype bf16 --block-skip on
LIST
