#!/usr/bin/env bash
# l2_partition.sh — builds scripts/gpu/l2_partition.cu on the GPU machine, records which SM each of
# SMs thread blocks lands on (three launches outside Nsight Compute), then profiles the probe's launches
# under Nsight Compute (caches flushed before each, clocks as they are) and writes OUTDIR/l2_partition.raw.tar.gz:
# map.jsonl, list.jsonl (the launches in order), ncu.csv, meta.json (GPU, driver, ncu, commit, command,
# date, the source's SHA-256). scripts/gpu/l2_partition.py turns them into the committed data.
# Usage: FLASHLAB_COMMIT=<sha> bash scripts/gpu/l2_partition.sh OUTDIR
set -euo pipefail
out=${1:?usage: l2_partition.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
"$nvcc" -O3 -std=c++17 -arch=sm_90 -I "$here" -o "$work/l2_partition" "$here/l2_partition.cu"
for _ in 1 2 3; do "$work/l2_partition" map >> "$work/map.jsonl"; done
metrics=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_ltcfabric_op_read.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,gpu__time_duration.sum
ncu --clock-control none --cache-control all --kernel-name "regex:l2p_(pair|write|shared|private|mix)" \
  --metrics "$metrics" --csv --print-units base "$work/l2_partition" probe "$work/list.jsonl" > "$work/ncu.csv"
commit=${FLASHLAB_COMMIT:-unknown}
python3 - "$work/meta.json" "$commit" "$here/l2_partition.cu" "$metrics" <<'PY'
import datetime, hashlib, json, subprocess, sys
dst, commit, src, metrics = sys.argv[1:5]
smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit",
                      "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
ncu = subprocess.run(["ncu", "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
json.dump({"nvidia_smi": smi, "ncu": ncu, "commit": commit, "metrics": metrics.split(","),
           "source_sha256": hashlib.sha256(open(src, "rb").read()).hexdigest(),
           "command": "FLASHLAB_COMMIT=<sha> bash scripts/gpu/l2_partition.sh OUTDIR",
           "ncu_flags": "--clock-control none --cache-control all",
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}, open(dst, "w"), indent=1)
PY
mkdir -p "$out"
tar czf "$out/l2_partition.raw.tar.gz" -C "$work" map.jsonl list.jsonl ncu.csv meta.json
echo "l2_partition: $(wc -l < "$work/list.jsonl") launches listed, $(grep -c "l2p_.*dram__bytes_read" "$work/ncu.csv" || true) ncu rows"
