#!/usr/bin/env python3
"""Builds scripts/gpu/l2_writeback.cu and profiles its cases under Nsight Compute: which of the walk's
order, O's layout and the thread blocks per SM decides how much of O leaves the L2 during an
attention-shaped launch (issue 27's DRAM written; the .cu file says why).

    python3 scripts/gpu/l2_writeback.py --out OUT [--commit SHA]

CASES: d 128 N 4096 B 2 with V2's and FA2's d 128 tile (B_r 128, B_c 64) at 3, 4, 6 and 8 heads (Q, K,
V and O of 6-16 MiB each: from 0.75 to 2 times an H100's 50 MiB held with the far partition's copies),
each of bhsd / bshd x fwd / bwd x 1 / 2 thread blocks per SM; then PACE, the same traffic (bhsd, fwd) at 4
and 6 heads paced by a spin after each K/V block, equal for all thread blocks or spread so that they end
spread over the launch (each case prints its blocks' first, median and last end); then PREFETCH, 3, 4 and 6
heads with the loads' L2 prefetch size 128 or 256 bytes (FA2's loads carry .L2::128B). One ncu process (--clock-control none,
--cache-control all: the L2 flushed before each launch); per launch DRAM read and written, the L2's
fabric read sectors (between its two partitions), its duration. Writes OUT/l2_writeback.json ({"meta",
"rows"}: each row the case as the program printed it, with ncu's figures) and OUT/l2_writeback_logs.tar.gz.
Raw figures only; a row's written / O is computed where the data are read. Exit 1 when the build or ncu
fails or the launches do not match the cases.
"""

import argparse
import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import common  # noqa: E402
import ncu  # noqa: E402

CASES = [f"{layout},{walk},{per_sm},2,{heads},4096,128,128,64"
         for heads in (3, 4, 6, 8) for layout in ("bhsd", "bshd") for walk in ("fwd", "bwd") for per_sm in (1, 2)]
# the pace: 8,000 cycles after each K/V block, the same for every thread block or spread 0.2-1.8x
PACE = [f"bhsd,fwd,{per_sm},2,{heads},4096,128,128,64,8000,{spread}"
        for heads in (4, 6) for per_sm in (1, 2) for spread in (0, 1.6)]
# the loads' L2 prefetch size (FA2's cp.async carries .L2::128B; TMA moves whole lines)
PREFETCH = [f"{layout},fwd,2,2,{heads},4096,128,128,64,0,0,{size}"
            for heads in (3, 4, 6) for layout in ("bhsd", "bshd") for size in (128, 256)]
METRICS = {k: ncu.NAMES[k] for k in ("time_ns", "dram_rd", "dram_wr", "l2_fabric_rd")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--work", type=Path, default=Path("/tmp/l2_writeback"))
    args = ap.parse_args()
    logs = args.work / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    args.out.mkdir(parents=True, exist_ok=True)
    src = HERE / "l2_writeback.cu"
    binary = args.work / "l2_writeback"
    proc = common.sh(["nvcc", "-O3", "-std=c++17", "-arch=sm_90", "-I", str(HERE), "-o", str(binary), str(src)])
    (logs / "build.log").write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        print(proc.stderr[-3000:], file=sys.stderr)
        return 1
    cmd = ncu.command(METRICS, cache_control="all") + ["--kernel-name", "l2wb_attn", str(binary)] + CASES + PACE + PREFETCH
    proc = ncu.run(cmd, logs / "ncu.log")
    printed = [json.loads(x) for x in proc.stdout.splitlines() if x.startswith('{"layout"')]
    launches = ncu.launches(proc.stdout, METRICS) if '"ID"' in proc.stdout else []
    if proc.returncode != 0 or len(printed) != len(CASES + PACE + PREFETCH) or len(launches) != len(CASES + PACE + PREFETCH):
        print(f"ncu exit {proc.returncode}: {len(printed)} cases printed, {len(launches)} launches profiled, "
              f"{len(CASES + PACE + PREFETCH)} expected\n{proc.stderr[-3000:]}", file=sys.stderr)
        return 1
    meta = common.metadata(("gpu", "driver", "cuda", "ncu", "commit", "date", "command", "ncu_flags"),
                           commit=args.commit, command="python3 scripts/gpu/l2_writeback.py --out OUT --commit SHA",
                           ncu_flags="--clock-control none --cache-control all")
    meta["source_sha256"] = hashlib.sha256(src.read_bytes()).hexdigest()
    meta["metrics"] = METRICS
    rows = [case | {k: launch[k] for k in METRICS} for case, launch in zip(printed, launches)]
    (args.out / "l2_writeback.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")
    common.tar_folder(args.out / "l2_writeback_logs.tar.gz", logs)
    for r in rows:
        print(f"{r['layout']} {r['walk']} {r['blocks_per_sm']}/SM H {r['heads']} spin {r['spin']} x {r['spread']} prefetch {r['prefetch']}: "
              f"ends {r['end_first_us']:.0f}/{r['end_median_us']:.0f}/{r['end_last_us']:.0f} us, written {r['dram_wr'] / r['o_bytes']:.3f} "
              f"of O, read {r['dram_rd'] / (3 * r['o_bytes']):.3f} of QKV, fabric {32 * r['l2_fabric_rd'] / r['o_bytes']:.2f} "
              f"of O, {r['time_ns'] / 1e3:.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
