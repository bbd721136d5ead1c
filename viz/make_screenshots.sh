#!/usr/bin/env bash
# Remakes the viewer's pictures in docs/images/ with the built viewer under Xvfb (llvmpipe renders
# them byte for byte the same on every run).
#   viz/make_screenshots.sh [path/to/flashlab-viewer]     (default: build/viz/flashlab-viewer)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
viewer="${1:-$root/build/viz/flashlab-viewer}"
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
