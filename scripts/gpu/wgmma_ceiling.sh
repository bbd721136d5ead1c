#!/usr/bin/env bash
# wgmma_ceiling.sh — builds and runs scripts/gpu/wgmma_ceiling.cu on the GPU machine (sm_90a) and
# writes OUTDIR/wgmma.json: the measured wgmma rates and latencies plus metadata (GPU, driver,
# commit, command, date). Issue 27: the tensor cores' rate under FA3's instruction, beside
# ceilings.cu's mma.sync.
# Usage: FLASHLAB_COMMIT=$(git rev-parse --short HEAD) bash scripts/gpu/wgmma_ceiling.sh OUTDIR
set -euo pipefail
out=${1:?usage: wgmma_ceiling.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
"$nvcc" -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -o "$out/wgmma_ceiling" "$here/wgmma_ceiling.cu"
"$out/wgmma_ceiling" > "$out/wgmma.raw.json"
# the device copy may carry an older .git: FLASHLAB_COMMIT names the commit run
commit=${FLASHLAB_COMMIT:-$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)}
gpu=$(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv,noheader 2>/dev/null || echo unknown)
python3 - "$out/wgmma.raw.json" "$out/wgmma.json" "$commit" "$gpu" <<'PY'
import datetime, json, sys
raw, dst, commit, gpu = sys.argv[1:5]
d = json.load(open(raw))
d["meta"] = {"commit": commit, "nvidia_smi": gpu, "command": "bash scripts/gpu/wgmma_ceiling.sh OUTDIR",
             "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
json.dump(d, open(dst, "w"), indent=2)
print(json.dumps(d, indent=2))
PY
rm -f "$out/wgmma_ceiling" "$out/wgmma.raw.json"
