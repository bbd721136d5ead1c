#!/usr/bin/env python3
"""What one K/V stage costs at d = 64 as the shape and the L2's state change (issue 27 item 5: the two
ablation rows the time models miss, one stage at d 64 none N 4096 and causal N 16384; docs/model.md
"One stage at d 64"). "fa3" and "stages1" timed like ncu_ablation.py's ablation (ncu_vs_cudnn.v3_row:
gpu__time_duration.sum, --clock-control none, the checked launch and its repeat skipped, then
`--launches`; every run checks O and L on 512 rows against float64 in the same process), with the SM
cycles, the DRAM bytes read and the L2's sector hit rate beside each time.

    python3 scripts/gpu/v3_kernel/one_stage_probe.py --bin V3 --out DIR --commit SHA [--set base|tr]
        [--launches 5] [--deadline SECONDS]

The shapes (fp16, d 64, no mask, the kernel's 192 x 128 tile; N x B = 16,384 tokens at H 32, and two
that fit the L2):
  cold  (--cache-control all: the caches flushed before each profiled launch, as the ablation ran)
        N 2,048 / 4,096 / 8,192 / 16,384 at H 32 (T_r = 11 / 22 / 43 / 86 Q blocks a head), and
        N 4,096 B 1 H 16, N 16,384 B 1 H 4 (Q, K, V 25 MB: they fit the L2)
  warm  (--cache-control none: the same two small shapes, the launches before each one leaving Q, K,
        V in the L2)
The question each answers: with one stage the ring's round trip is on every step's path; does its cost
grow with the tiles per (batch, head) (per step or per tile: N), and does it go away when K/V are
already in the L2 (cold against warm at the same shape)? -> DIR/v3_one_stage.json (meta: gpu, driver,
ncu, commit, command, date, flags, the V3 sources' SHA-256; rows: v3_row's, with "cache" beside).

--set tr (cold, H 32, no ragged blocks): whether the cost follows T_r dividing the 132 SMs (every
(batch, head)'s Q blocks in one round of the static scheduler, its SMs walking its K/V blocks together
and first) or N: T_r = 44 (N 8,448, B 2) and 66 (N 12,672, B 1) divide 132, T_r = 20 (N 3,840, B 4)
and 24 (N 4,608, B 4) do not. Written before the run: if it is T_r, the first two cost like N 4,096
(about 0.86) and the last two like N 8,192 (about 0.96). -> DIR/v3_one_stage_tr.json
"""

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
import common  # noqa: E402
import ncu  # noqa: E402
from ncu_vs_cudnn import v3_row  # noqa: E402

METRICS = {"time_ns": "gpu__time_duration.sum", "sm_cycles_elapsed": "sm__cycles_elapsed.sum",
           "dram_rd": "dram__bytes_read.sum", "l2_hit_pct": "lts__t_sector_hit_rate.pct"}
COLD = [(2048, 8, 32), (4096, 4, 32), (8192, 2, 32), (16384, 1, 32), (4096, 1, 16), (16384, 1, 4)]
WARM = [(4096, 1, 16), (16384, 1, 4)]
SETS = {"base": [(c, n, b, h) for c, shapes in (("all", COLD), ("none", WARM)) for n, b, h in shapes],
        "tr": [("all", n, b, 32) for n, b in ((8448, 2), (12672, 1), (3840, 4), (4608, 4))]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True, type=Path, help="the v3 program (ncu_run.sh builds it)")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--set", choices=sorted(SETS), default="base", help="which shapes (above)")
    ap.add_argument("--launches", type=int, default=5)
    ap.add_argument("--deadline", type=float, default=1e9, help="seconds from the start after which no row starts")
    args = ap.parse_args()
    t0 = time.time()
    args.out.mkdir(parents=True, exist_ok=True)
    logs = Path("/tmp/v3_ncu_logs_one_stage")
    logs.mkdir(parents=True, exist_ok=True)
    meta = common.metadata(("gpu", "driver", "ncu", "commit", "command", "date"), commit=args.commit,
                           command="python3 scripts/gpu/v3_kernel/one_stage_probe.py " + " ".join(sys.argv[1:]))
    meta |= {"ncu_flags": {c: " ".join(ncu.command(METRICS, cache_control=c)[1:]) for c in ("all", "none")},
             "launches": args.launches, "v3_sources_sha256": common.v3_source_hash(), "metrics": METRICS,
             "skipped": []}
    rows = []
    out = args.out / ("v3_one_stage.json" if args.set == "base" else f"v3_one_stage_{args.set}.json")
    for cache, n, b, h in SETS[args.set]:
        for v in ("fa3", "stages1"):
            if time.time() - t0 > args.deadline:
                meta["skipped"].append(f"{v} {cache} N={n} B={b} H={h}")
                continue
            r = v3_row(args.bin, 64, "none", n, args.launches, logs, variant=v, metrics=METRICS, batch=b, heads=h,
                       tag=f"_one_stage_{cache}", cache_control=cache)
            rows.append(r | {"cache": cache})
            t = sorted(k["time_ns"] for k in r["kernels"] if isinstance(k.get("time_ns"), float))
            print(f"one stage {cache:4} {v:8} N={n:5} B={b} H={h:2}: exit {r['exit']}, {len(t)} launches, median "
                  f"{t[len(t) // 2] / 1e3 if t else float('nan'):.1f} us, check "
                  f"{(r['run'] or {}).get('check', {}).get('pass')}", flush=True)
            out.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))  # a cut-off call keeps its rows
    out.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    common.sh(["tar", "czf", str(args.out / f"ncu_logs_one_stage_{args.set}.tar.gz"), "-C", str(logs.parent), logs.name])
    return 0


if __name__ == "__main__":
    sys.exit(main())
