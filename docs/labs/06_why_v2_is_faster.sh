#!/usr/bin/env bash
# Lab 06: why V2 is faster than V1, one improvement at a time (docs/labs/06_why_v2_is_faster.md).
source "$(dirname "$0")/lab.sh"
# The configuration measured on the H200 (fp16, batch 1, 16 heads, N = 4096, d = 64): a small grid.
fl explain --nq 4096 --nk 4096 --d 64 --br 64 --bc 64 --heads 16 --dtype fp16
# The same with the grid full (batch 8 x 32 heads = 256 thread blocks of V1 on 132 SMs).
fl explain --nq 4096 --nk 4096 --d 64 --br 64 --bc 64 --batch 8 --heads 32 --dtype fp16
# Causal: block skip is the last step.
fl explain --nq 4096 --nk 4096 --d 64 --br 64 --bc 64 --heads 16 --dtype fp16 --mask causal
# What the H200 measured for the two ends of the walk (tests/data/gpu_timing/h200.json).
echo
echo "\$ measured on the H200 (tests/data/gpu_timing/h200.json)"
python3 - "$(dirname "$0")/../../tests/data/gpu_timing/h200.json" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
print(f"{'kernel':8} {'batch x heads':>13} {'N':>6} {'d':>4} {'mask':>7} {'tile':>10} {'time':>11} {'DRAM read':>11}")
for r in data["runs"]:
    c = r["config"]
    if c["n_q"] == 4096 and c["d"] == 64 and c["algo"] in ("v1", "v2") and c["mask"] in ("none", "causal") \
            and c["batch"] * c["heads"] in (16, 256):
        tile = f"{c['b_r']}x{c['b_c']}x{c['warps']}"
        print(f"{c['algo']:8} {c['batch'] * c['heads']:>13} {c['n_q']:>6} {c['d']:>4} {c['mask']:>7} {tile:>10} "
              f"{r['median_ms']:>8.3f} ms {r['dram_read'] / 1e6:>8.1f} MB")
print(f"({data['meta']['gpu']}, driver {data['meta']['driver']}, {data['meta']['date']})")
PY
