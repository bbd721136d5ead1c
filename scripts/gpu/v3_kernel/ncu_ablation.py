#!/usr/bin/env python3
"""V3's tile sweep, switch ablation and per-unit counters on the H200 under Nsight Compute, timed the
same way as ncu_vs_cudnn.py (its v3_row: gpu__time_duration.sum, --clock-control none --cache-control
all, the checked launch and its repeat skipped, then `--launches`; every profiled run checks O and L on
512 rows against float64 in the same process). Issue 27 items 4-5.

    python3 scripts/gpu/v3_kernel/ncu_ablation.py --bin V3 --out DIR --commit SHA --part sweep|ablation|units
        [--launches 5] [--deadline SECONDS]

--part sweep: "fa3" with B_r forced to 128 and to 192 (--br), fp16 d = 64, none and causal,
  N 1,024 / 1,536 / 2,048 / 3,072 / 4,096 / 8,192 / 16,384 (B = 16,384 // N, H = 32): the data behind
  fa3_rows' rule (variants.cuh). -> DIR/v3_sweep.json
--part ablation: "fa3" with one switch changed (variants.cuh): stages1, no_pingpong, no_overlap, no_ws,
  grid, and the other persistent scheduler (dynamic without a mask, static with), fp16, d 64 / 128,
  none / causal, N 16,384 and 4,096; "fa3" itself is v3_ncu.json's row of the same shape.
  -> DIR/v3_ablation.json
--part units: "fa3" and the ablation variants on the same shapes, one launch each (after the checked
  two) under the unit counters of UNITS that this ncu knows (ncu --query-metrics; the rest are listed
  as missing): raw counts and the cycles they are fractions of, for the timeline model (issue 27
  item 2). -> DIR/v3_units.json
Each file: meta (gpu, driver, ncu, commit, command, date, ncu flags, the V3 sources' SHA-256) and rows
(ncu_vs_cudnn.v3_row's). Rows not reached before --deadline (seconds since start) are left out and
named in meta.skipped.
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
from ncu_vs_cudnn import METRICS, v3_row  # noqa: E402

SWEEP_N = (1024, 1536, 2048, 3072, 4096, 8192, 16384)
ABL_SHAPES = [(d, m, n) for n in (16384, 4096) for d in (128, 64) for m in ("none", "causal")]


def ablation_variants(mask):
    return ["stages1", "no_pingpong", "no_overlap", "no_ws", "grid", "static" if mask == "causal" else "dynamic"]


# unit -> counters (ncu names); each busy fraction is a counter over the cycles named beside it
UNITS = {
    "time_ns": "gpu__time_duration.sum",
    "sm_cycles_elapsed": "sm__cycles_elapsed.sum",
    "sm_cycles_active": "sm__cycles_active.sum",
    "smsp_cycles_elapsed": "smsp__cycles_elapsed.sum",
    "tensor_gmma_cycles": "sm__pipe_tensor_op_gmma_cycles_active.sum",
    "tensor_cycles": "sm__pipe_tensor_cycles_active.sum",
    "xu_inst": "sm__inst_executed_pipe_xu.sum",
    "xu_cycles": "sm__pipe_xu_cycles_active.sum",
    "fma_cycles": "sm__pipe_fma_cycles_active.sum",
    "fma_inst": "sm__inst_executed_pipe_fma.sum",
    "alu_cycles": "sm__pipe_alu_cycles_active.sum",
    "alu_inst": "sm__inst_executed_pipe_alu.sum",
    "shared_cycles": "sm__pipe_shared_cycles_active.sum",
    "smem_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
    "l1tex_cycles_elapsed": "l1tex__cycles_elapsed.sum",
    "l2_sectors": "lts__t_sectors.sum",
    "l2_bytes": "lts__t_bytes.sum",
    "l2_cycles_active": "lts__cycles_active.sum",
    "l2_cycles_elapsed": "lts__cycles_elapsed.sum",
    "dram_rd": "dram__bytes_read.sum",
    "dram_wr": "dram__bytes_write.sum",
    "dram_cycles_active": "dram__cycles_active.sum",
    "dram_cycles_elapsed": "dram__cycles_elapsed.sum",
}


def known_units(units=UNITS):
    """The entries of `units` (key -> ncu name) whose base name (before the first '.') this ncu lists for
    the GPU; the missing keys; ncu --query-metrics' listing."""
    proc = common.sh(["ncu", "--query-metrics"])
    listed = {w.split()[0] for w in proc.stdout.splitlines() if w.strip()}
    have = {k: v for k, v in units.items() if v.split(".")[0] in listed}
    return have, sorted(set(units) - set(have)), proc.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--part", required=True, choices=("sweep", "ablation", "units"))
    ap.add_argument("--launches", type=int, default=5)
    ap.add_argument("--deadline", type=float, default=1e9)
    args = ap.parse_args()
    t0 = time.time()
    args.out.mkdir(parents=True, exist_ok=True)
    logs = Path(f"/tmp/v3_ncu_logs_{args.part}")
    logs.mkdir(parents=True, exist_ok=True)
    metrics, launches, missing = METRICS, args.launches, []
    if args.part == "units":
        metrics, missing, listing = known_units()
        (logs / "query_metrics.txt").write_text(listing)
        launches = 1
    if args.part == "sweep":
        jobs = [("fa3", ("--br", str(br)), 64, m, n) for m in ("none", "causal") for n in SWEEP_N for br in (128, 192)]
    elif args.part == "ablation":
        jobs = [(v, (), d, m, n) for d, m, n in ABL_SHAPES for v in ablation_variants(m)]
    else:
        jobs = [(v, (), d, m, n) for d, m, n in ABL_SHAPES for v in ["fa3", *ablation_variants(m)]]
    meta = common.metadata(("gpu", "driver", "ncu", "commit", "command", "date"), commit=args.commit,
                           command="python3 scripts/gpu/v3_kernel/ncu_ablation.py " + " ".join(sys.argv[1:]))
    meta |= {"ncu_flags": " ".join(ncu.command(metrics, cache_control="all")[1:]), "launches": launches,
             "v3_sources_sha256": common.v3_source_hash(), "metrics": metrics, "missing_metrics": missing, "skipped": []}
    rows = []
    out = args.out / f"v3_{args.part}.json"
    for v, extra, d, m, n in jobs:
        if time.time() - t0 > args.deadline:
            meta["skipped"].append(f"{v} {' '.join(extra)} d={d} {m} N={n}")
            continue
        rows.append(v3_row(args.bin, d, m, n, launches, logs, variant=v, extra=extra, metrics=metrics, tag="_" + args.part))
        r = rows[-1]
        t = sorted(k["time_ns"] for k in r["kernels"] if isinstance(k.get("time_ns"), float))
        print(f"{args.part} {v} {' '.join(extra)} d={d} {m:6} N={n:5}: exit {r['exit']}, {len(r['kernels'])} launches, "
              f"median {t[len(t) // 2] / 1e3 if t else float('nan'):.1f} us, B_r {(r['run'] or {}).get('b_r')}, "
              f"check {(r['run'] or {}).get('check', {}).get('pass')}", flush=True)
        out.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))  # after each row: a cut-off call keeps it
    out.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    common.sh(["tar", "czf", str(args.out / f"ncu_logs_{args.part}.tar.gz"), "-C", str(logs.parent), logs.name])
    return 0


if __name__ == "__main__":
    sys.exit(main())
