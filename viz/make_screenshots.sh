#!/usr/bin/env bash
# Remakes the viewer's pictures in docs/images/ with the built viewer under Xvfb (llvmpipe renders
# them byte for byte the same on every run).
#   viz/make_screenshots.sh [path/to/flashlab-viewer [path/to/flashlab]]
#   (defaults: build/viz/flashlab-viewer, build/sim/cli/flashlab)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
viewer="$(realpath "${1:-$root/build/viz/flashlab-viewer}")"
flashlab="$(realpath "${2:-$root/build/sim/cli/flashlab}")"
out="$root/docs/images"
mkdir -p "$out"
shot() {
  local name="$1"
  shift
  xvfb-run -a -s "-screen 0 1280x720x24" "$viewer" "$@" --screenshot "$out/$name.png"
}
# Mistral-7B's sliding window at 16k tokens: the band of computed tiles, a partial tile on the
# diagonal selected (its elements and warps), a tile on the window's far edge hovered.
shot viewer-mistral-window --model mistral-7b --seq 16384 --select 40,81 --hover 60,56
# V1 and V2 on one causal config, 70 steps in: V1 computes the masked tiles (red) and moves 2.8x
# the HBM bytes of V2.
shot viewer-v1-vs-v2 --mask causal --nq 1024 --nk 1024 --br 64 --bc 64 --tab compare --step 70
# V1 playback: Q_6 with K_3, V_3 on chip, HBM bytes per tensor so far, m and l of Q block 6.
shot viewer-playback-v1 --algo v1 --mask causal --nq 1024 --nk 1024 --br 64 --bc 64 --tab playback --step 60 --numerics
# One SM's timeline, V3 (FA3's warp roles, 128 x 176 tiles) over V2 (128 x 64) on one time axis at
# d = 128, N = 4096, no mask; the playback 40 steps in outlines the intervals on Q block 0's K/V
# block 38 (V2's thread block, V3's tile holding those keys).
shot viewer-timeline --d 128 --nq 4096 --nk 4096 --tab timeline --step 40
# A trace recorded on an H200 (tests/data/gpu/, its flags in manifest.json) as trace A, its
# simulator twin written by `flashlab trace` as trace B: the Traces tab reads both and finds they
# agree. Run from a scratch folder so that the picture shows the short names gpu/ and sim/.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
flags=(--algo v2 --nq 1000 --nk 700 --d 64 --br 64 --bc 64 --warps 4 --mask causal-br)
ln -s "$root/tests/data/gpu" "$scratch/gpu"
mkdir "$scratch/sim"
(
  cd "$scratch"
  "$flashlab" trace "${flags[@]}" --stats-blocks 0 -o sim/v2-causalbr-nokey.trace >/dev/null
  "$flashlab" diff gpu/v2-causalbr-nokey.trace sim/v2-causalbr-nokey.trace >/dev/null
  shot viewer-gpu-trace "${flags[@]}" --tab traces --trace gpu/v2-causalbr-nokey.trace --trace sim/v2-causalbr-nokey.trace
)
