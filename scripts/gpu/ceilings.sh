#!/usr/bin/env bash
# ceilings.sh — builds and runs scripts/gpu/ceilings.cu on the GPU machine and writes
# OUTDIR/ceilings.json (the measured figures plus metadata: GPU, driver, commit, command, date).
# Usage: FLASHLAB_COMMIT=$(git rev-parse --short HEAD) bash scripts/gpu/ceilings.sh OUTDIR
# Another microbenchmark of this folder that prints one JSON object runs the same way with
# BENCH=NAME (NAME.cu, default ceilings), BENCH_ARCH (nvcc's target flags, default -arch=sm_90) and
# BENCH_JSON (the output's name, default ceilings.json): wgmma_ceiling.sh does.
set -euo pipefail
out=${1:?usage: ceilings.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
bench=${BENCH:-ceilings}
arch=${BENCH_ARCH:--arch=sm_90}
json=${BENCH_JSON:-ceilings.json}
command=${BENCH_COMMAND:-bash scripts/gpu/ceilings.sh OUTDIR}
mkdir -p "$out"
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
# shellcheck disable=SC2086 # the target flags are several words
"$nvcc" -O3 -std=c++17 $arch -o "$out/$bench" "$here/$bench.cu"
"$out/$bench" > "$out/$bench.raw.json"
# the device copy may carry an older .git: FLASHLAB_COMMIT names the commit run
commit=${FLASHLAB_COMMIT:-$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)}
gpu=$(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv,noheader 2>/dev/null || echo unknown)
python3 - "$out/$bench.raw.json" "$out/$json" "$commit" "$gpu" "$command" <<'PY'
import datetime, json, sys
raw, dst, commit, gpu, command = sys.argv[1:6]
d = json.load(open(raw))
d["meta"] = {"commit": commit, "nvidia_smi": gpu, "command": command,
             "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")}
json.dump(d, open(dst, "w"), indent=2)
print(json.dumps(d, indent=2))
PY
rm -f "$out/$bench" "$out/$bench.raw.json"
