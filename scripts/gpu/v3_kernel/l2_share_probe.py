#!/usr/bin/env python3
"""Do the L2's read counters see fewer sectors when many thread blocks ask for the same K/V tile at once?

    python3 scripts/gpu/v3_kernel/l2_share_probe.py --bin V3 --out DIR --commit SHA [--set share|footprint]

Issue 27's bytes check: without a mask, fa3's L2 read sectors are 0.43-0.67x the simulator's sector level
(tests/data/gpu_v3/v3_bytes.json, runs 5 and 6) under all three schedulers, while causal runs are within
2-4%. Without a mask every Q block of a head walks its K/V blocks from the last down at the same pace,
so the thread blocks of one head request each K/V tile at about the same time; with a causal mask each
Q block starts at its own diagonal. The hypothesis: requests for a sector already in flight are merged
before the L2's tag stage counts them. SHARE holds fa3 fp16 d 128 shapes of the same tile (128 x 176
without a mask) whose thread blocks share a head's K/V to different degrees: T_r = N / 128 Q blocks per
head, from 32 (one head, N 4096) to 1 (N 128, 256 heads: no tile read by two thread blocks); causal
beside. If the hypothesis holds, the ratio measured / sector level falls as T_r grows and is ~1 at T_r 1.
Each row is one ncu process (ncu_vs_cudnn.v3_row: the checked launch profiled, caches flushed), with
ncu_bytes.py's BYTES metrics — since 532c7b7 also the request side upstream of Hopper's L2 request
coalescer (LRC): TMA's global-load bytes into the SMs (tma_rd_bytes), every byte read into the SMs off
the XBAR (xbar_rd_bytes), and the LRC's read sectors to the GPCs, merged, and to the L2 (lrc_to_gpc_rd,
lrc_merged_rd, lrc_to_l2_rd); each row's console line prints them beside the L2's lookups. Writes
DIR/v3_l2_share.json (meta as ncu_bytes.py's) and DIR/ncu_logs_share.tar.gz. The ratios:
scripts/check/v3_kernel_extra.py (share_section, on docs/validation/v3_h200.md) against the sector
level for each row's tile (`flashlab count --algo v3 ... --json`), computed where the data are read,
not here.

--set footprint (issue 27's DRAM-written rows): fa3 fp16 d 128 N 4096 B 2 at H 1 to 8 without a mask and
at H 4 and 8 causal — Q, K, V and O from 4 to 32 MiB each, so the bytes the L2 holds cross its size in
steps on either card (the H100's 50 MiB, the H200's 60) -> DIR/v3_l2_footprint.json, ncu_logs_footprint.tar.gz.
"""

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
import common  # noqa: E402
import ncu  # noqa: E402
from ncu_ablation import known_units  # noqa: E402
from ncu_bytes import BYTES  # noqa: E402
from ncu_vs_cudnn import v3_row  # noqa: E402

# (mask, B, N, H): fa3 fp16 d 128; Q blocks per head T_r = N / 128
SHARE = [("none", 1, 4096, 1), ("none", 1, 4096, 8), ("none", 1, 1024, 32), ("none", 1, 256, 128),
         ("none", 1, 128, 256), ("causal", 1, 4096, 8), ("causal", 1, 128, 256)]
FOOTPRINT = [("none", 2, 4096, h) for h in range(1, 9)] + [("causal", 2, 4096, h) for h in (4, 8)]
SETS = {"share": SHARE, "footprint": FOOTPRINT}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--set", choices=sorted(SETS), default="share")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    logs = Path(f"/tmp/v3_ncu_logs_{args.set}")
    logs.mkdir(parents=True, exist_ok=True)
    metrics, missing, _ = known_units(BYTES)
    meta = common.metadata(("gpu", "driver", "ncu", "commit", "command", "date"), commit=args.commit,
                           command="python3 scripts/gpu/v3_kernel/l2_share_probe.py " + " ".join(sys.argv[1:]))
    meta |= {"ncu_flags": " ".join(ncu.command(metrics, cache_control="all")[1:]), "launches": 1,
             "v3_sources_sha256": common.v3_source_hash(), "metrics": metrics, "missing_metrics": missing}
    rows, out = [], args.out / f"v3_l2_{args.set}.json"
    for m, b, n, h in SETS[args.set]:
        rows.append(v3_row(args.bin, 128, m, n, 1, logs, metrics=metrics, batch=b, heads=h, tag=f"_{args.set}",
                           dtype="fp16", skip=0, time=False))
        r, k = rows[-1], (rows[-1]["kernels"] or [{}])[0]
        print(f"{args.set} {m:6} B {b} N {n:5} H {h:3}: exit {r['exit']}, tile {(r['run'] or {}).get('b_r')} x "
              f"{(r['run'] or {}).get('b_c')}, L2 rd sectors {k.get('l2_rd')} (tex {k.get('l2_tex_rd')}), "
              f"TMA rd bytes {k.get('tma_rd_bytes')}, LSU ld bytes {k.get('lsu_ld')}, XBAR rd bytes "
              f"{k.get('xbar_rd_bytes')}, LRC rd sectors to GPCs / merged / to L2 {k.get('lrc_to_gpc_rd')} / "
              f"{k.get('lrc_merged_rd')} / {k.get('lrc_to_l2_rd')}, "
              f"check {(r['run'] or {}).get('check', {}).get('pass')}", flush=True)
        out.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    common.sh(["tar", "czf", str(args.out / f"ncu_logs_{args.set}.tar.gz"), "-C", str(logs.parent), logs.name])
    return 0


if __name__ == "__main__":
    sys.exit(main())
