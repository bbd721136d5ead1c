#!/usr/bin/env python3
"""V3's bytes on the H200 as Nsight Compute counts them, for the simulator's sector and DRAM levels
(issue 27: "events/numbers/bytes on a grid of configs (masks, ragged N, d, dtype)").

    python3 scripts/gpu/v3_kernel/ncu_bytes.py --bin V3 --out DIR --commit SHA [--deadline SECONDS] [--diag-seconds S]

Grid (GRID): "fa3", fp16 and bf16, d 64 and 128, no mask and causal, N 1,000 / 3,000 / 4,096 (ragged
and whole tiles), B = 2, H = 4. Each row is one ncu process on `V3 run fa3 DTYPE D MASK 2 N 4` (no
--time: the checked launch and its repeat); the first launch — the one whose O and L the program
checks against float64 — is profiled, after ncu flushes the caches (--cache-control all, clocks left
as they are) under BYTES: DRAM bytes read and written, L2 sectors by operation (all units, and those
from the SMs' L1/TEX, where TMA's requests come from; reads also from the other L2 partition and from
the GPCs' constant / instruction caches), the LSU's global load/store bytes — those this ncu lists.
DIAG, after the grid (each row "diagnostic": true, never a target): the no-mask N = 4,096 shape
under the "grid" and "dynamic" schedulers (fp16, d 64 and 128), to test whether the static
scheduler's lockstep — every Q block of a head asking for the same K/V tile at about the same time —
is why the L2 counts fewer read sectors than the sector level without a mask (0.44-0.67x in run 5;
causal, dynamic, within 2.5%). The sector level does not depend on the scheduler. They may start
until --diag-seconds after --deadline.
What the kernel moves is set by its tile (B_r x B_c), kept in the run's JSON line; the CI check
(scripts/check/v3_kernel_bytes.py) runs `flashlab count --algo v3 ... --br B_r --bc B_c --json` for the
same config and compares. Writes DIR/v3_bytes.json (meta: gpu, driver, ncu, commit, command, date, ncu
flags, the V3 sources' SHA-256, the metrics this ncu knows and the missing ones, skipped rows; rows:
ncu_vs_cudnn.v3_row's, one launch each) and DIR/ncu_logs_bytes.tar.gz.
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
from ncu_ablation import known_units  # noqa: E402
from ncu_vs_cudnn import v3_row  # noqa: E402

GRID = [(dt, d, m, n) for dt in ("fp16", "bf16") for d in (64, 128) for m in ("none", "causal") for n in (1000, 3000, 4096)]
BATCH, HEADS = 2, 4
DIAG = [(v, "fp16", d, "none", 4096) for d in (64, 128) for v in ("grid", "dynamic")]  # (variant, dtype, d, mask, N)

# key -> ncu name; a sector is 32 bytes
BYTES = {
    "time_ns": "gpu__time_duration.sum",
    "dram_rd": "dram__bytes_read.sum",
    "dram_wr": "dram__bytes_write.sum",
    "l2_sectors": "lts__t_sectors.sum",
    "l2_rd": "lts__t_sectors_op_read.sum",
    "l2_wr": "lts__t_sectors_op_write.sum",
    "l2_atom": "lts__t_sectors_op_atom.sum",
    "l2_red": "lts__t_sectors_op_red.sum",
    "l2_tex_rd": "lts__t_sectors_srcunit_tex_op_read.sum",
    "l2_tex_wr": "lts__t_sectors_srcunit_tex_op_write.sum",
    "l2_fabric_rd": ncu.NAMES["l2_fabric_rd"],  # between the two L2 partitions
    "l2_gcc_rd": "lts__t_sectors_srcunit_gcc_op_read.sum",  # the GPCs' constant / instruction caches
    "lsu_ld": "l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum",
    "lsu_st": "l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum",
    # the request side: what the SMs' TMA units asked for and received (bytes into L1TEX's M stage for
    # global TMA loads), before Hopper's L2 request coalescer (LRC) merges reads of the same sectors
    # from several SMs into one L2 lookup
    "tma_rd_bytes": "l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum",
    "xbar_rd_bytes": "l1tex__m_xbar2l1tex_read_bytes.sum",  # all bytes read into the SMs from the XBAR
    "lrc_to_gpc_rd": "lrc__xbar2gpc_sectors_op_read.sum",  # sectors the LRC returned to the GPCs
    "lrc_to_l2_rd": "lrc__lrc2xbar_sectors_op_read.sum",  # sectors the LRC asked the L2 for
    "lrc_merged_rd": "lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum",
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--deadline", type=float, default=1e9, help="seconds from the start after which no row starts")
    ap.add_argument("--diag-seconds", type=float, default=15, help="DIAG rows may start until this long after --deadline")
    args = ap.parse_args()
    t0 = time.time()
    args.out.mkdir(parents=True, exist_ok=True)
    logs = Path("/tmp/v3_ncu_logs_bytes")
    logs.mkdir(parents=True, exist_ok=True)
    metrics, missing, listing = known_units(BYTES)
    (logs / "query_metrics.txt").write_text(listing)
    meta = common.metadata(("gpu", "driver", "ncu", "commit", "command", "date"), commit=args.commit,
                           command="python3 scripts/gpu/v3_kernel/ncu_bytes.py " + " ".join(sys.argv[1:]))
    meta |= {"ncu_flags": " ".join(ncu.command(metrics, cache_control="all")[1:]), "launches": 1,
             "v3_sources_sha256": common.v3_source_hash(), "metrics": metrics, "missing_metrics": missing, "skipped": []}
    rows, out = [], args.out / "v3_bytes.json"
    for dt, d, m, n in GRID:
        if time.time() - t0 > args.deadline:
            meta["skipped"].append(f"{dt} d={d} {m} N={n}")
            continue
        rows.append(v3_row(args.bin, d, m, n, 1, logs, metrics=metrics, batch=BATCH, heads=HEADS, tag="_bytes",
                           dtype=dt, skip=0, time=False))
        r, k = rows[-1], (rows[-1]["kernels"] or [{}])[0]
        print(f"bytes {dt} d={d} {m:6} N={n:5}: exit {r['exit']}, B_r {(r['run'] or {}).get('b_r')}, "
              f"DRAM rd {k.get('dram_rd')}, L2 rd/wr sectors {k.get('l2_rd')}/{k.get('l2_wr')}, "
              f"check {(r['run'] or {}).get('check', {}).get('pass')}", flush=True)
        out.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    for v, dt, d, m, n in DIAG:
        if time.time() - t0 > args.deadline + args.diag_seconds:
            meta["skipped"].append(f"diagnostic {v} {dt} d={d} {m} N={n}")
            continue
        rows.append(v3_row(args.bin, d, m, n, 1, logs, variant=v, metrics=metrics, batch=BATCH, heads=HEADS,
                           tag="_bytes", dtype=dt, skip=0, time=False) | {"diagnostic": True})
        r, k = rows[-1], (rows[-1]["kernels"] or [{}])[0]
        print(f"bytes (diagnostic) {v} {dt} d={d} {m:6} N={n:5}: exit {r['exit']}, L2 rd/wr sectors "
              f"{k.get('l2_rd')}/{k.get('l2_wr')}, tex rd {k.get('l2_tex_rd')}", flush=True)
        out.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    out.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    common.sh(["tar", "czf", str(args.out / "ncu_logs_bytes.tar.gz"), "-C", str(logs.parent), logs.name])
    return 0


if __name__ == "__main__":
    sys.exit(main())
