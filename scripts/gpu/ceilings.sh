#!/usr/bin/env bash
# ceilings.sh — builds and runs scripts/gpu/ceilings.cu on the GPU machine and writes
# OUTDIR/ceilings.json (the measured figures plus metadata: GPU, driver, commit, command, date).
# Usage: FLASHLAB_COMMIT=$(git rev-parse --short HEAD) bash scripts/gpu/ceilings.sh OUTDIR
set -euo pipefail
out=${1:?usage: ceilings.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
"$nvcc" -O3 -std=c++17 -arch=sm_90 -o "$out/ceilings" "$here/ceilings.cu"
"$out/ceilings" > "$out/ceilings.raw.json"
# the device copy may carry an older .git: FLASHLAB_COMMIT names the commit run
commit=${FLASHLAB_COMMIT:-$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)}
gpu=$(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv,noheader 2>/dev/null || echo unknown)
python3 - "$out/ceilings.raw.json" "$out/ceilings.json" "$commit" "$gpu" <<'PY'
import datetime, json, sys
raw, dst, commit, gpu = sys.argv[1:5]
d = json.load(open(raw))
d["meta"] = {"commit": commit, "nvidia_smi": gpu, "command": "bash scripts/gpu/ceilings.sh OUTDIR",
             "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")}
json.dump(d, open(dst, "w"), indent=2)
print(json.dumps(d, indent=2))
PY
rm -f "$out/ceilings" "$out/ceilings.raw.json"
