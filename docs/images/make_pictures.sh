#!/usr/bin/env bash
# Remakes the pictures the `flashlab` command draws in docs/images/ (the viewer's screenshots are
# viz/make_screenshots.sh's). Each is the command its doc quotes, with the output path changed.
#   docs/images/make_pictures.sh [path/to/flashlab]   (default: build/sim/cli/flashlab)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
flashlab="$(realpath "${1:-$root/build/sim/cli/flashlab}")"
out="$root/docs/images"
# docs/model.md, "Scaling": V1 and V2 against M with FA1 Theorem 2's N^2 d^2 / M curve.
"$flashlab" sweep --algos v1,v2 --over sram --from 16384 --to 1048576 --log2 --br auto --bc auto \
  --dtype fp32 --seq 8192 --d 64 --plot "$out/sweep-sram.png" > /dev/null
# docs/labs/02_causal_block_skip.md: the causal map of question 1, V2 (skipped tiles not computed).
"$flashlab" count --algo v2 --seq 1024 --br 64 --bc 64 --mask causal --map "$out/map-causal.png" > /dev/null
