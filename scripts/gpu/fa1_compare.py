#!/usr/bin/env python3
"""This project's V1 and V2 forward against FlashAttention-1's own forward kernel on the H200, in one
run (issue 25 item 3). scripts/gpu/fa1_compare.sh runs it; docs/validation/v1_vs_fa1_h200.md reads
what it writes (tests/data/gpu_fa1/fa1_compare.json, through tests/kernels/fa1_h200_test.cpp).

    python3 scripts/gpu/fa1_compare.py --bin build-gpu/kernels/flashlab-gpu --fa1-src .fa1/flash_attn \
        --out DIR --commit SHA

Shapes (SHAPES): fp16, d = 64 and 128, batch x heads 1 x 16 and 8 x 32, N = 1024 to 16384, no mask and
causal (top-left; N_q = N_k). This project's V1 on its kernel's tile (64 x 64 x 4 at d = 64, 32 x 64 x 4
at d = 128), V2 on the tile rule's (FA2's: 128 x 128 x 4, 128 x 64 x 4); FA1 v1.0.9's fmha_fwd_loop_kernel
as its Python interface launches it (num_splits from its own heuristic).

1. FA1 is built in the background (scripts/gpu/fa1_build.py) while step 2 runs; a failed build stops
   the run with its log (the reason FA1 could not run, for the doc).
2. This project's kernels: each configuration checked first as scripts/gpu/time_dataset.py does it, on a
   problem the float64 reference can afford (time_configs.check_flags: events against the simulator, O
   and L against float64; raw figures kept); then one Nsight Compute run over all of them at full size,
   each kernel launched once (flashlab-gpu --profile), collecting METRICS.
3. FA1: one Nsight Compute run of scripts/gpu/fa1_child.py --mode check, its fmha_fwd kernels only,
   collecting the same METRICS: the kernel that is timed is the one whose output is checked in the same
   process (O written everywhere, O and L against float64 on two heads, O against PyTorch's SDPA on all).
Both sides the same way: ncu --clock-control none (the card as found) --cache-control all (the L2
flushed before each kernel); the time is gpu__time_duration.sum (kernel only: nothing but the kernel
lies between its start and end), measured in one of ncu's replay passes of the kernel, the other
metrics (DRAM bytes, L2 sectors, achieved occupancy, registers, shared memory per block, tensor pipe,
instructions) in the others.
Writes DIR/fa1_compare.json (meta, shapes, checks, ours, fa1_checks, fa1, metrics, errors) after each
step, and DIR/fa1_logs.tar.gz (ncu CSVs, the FA1 build log with ptxas -v, the check logs).
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import common  # noqa: E402
import fa1_build  # noqa: E402
import ncu  # noqa: E402
import time_configs  # noqa: E402
import time_dataset  # noqa: E402

# FlashAttention-1 as fetched (scripts/gpu/fa1_compare.sh): the v1.0.9 tag of Dao-AILab/flash-attention,
# the last release before FlashAttention-2, and the CUTLASS commit its csrc/flash_attn/cutlass submodule pins.
FA1 = {"repository": "Dao-AILab/flash-attention", "tag": "v1.0.9", "commit": "6d48e14a6c2f551db96f0badc658a6279a929df3",
       "cutlass_commit": "319a389f42b776fae5701afcb943fc03be5b5c25", "cutlass_tag": "v2.9.0"}

SHAPES = [{"batch": b, "heads": h, "n": n, "d": d, "mask": m}
          for d in (64, 128) for (b, h, n) in ((1, 16, 4096), (1, 16, 16384), (8, 32, 1024), (8, 32, 4096))
          for m in ("none", "causal")]
V1_TILE = {64: "64x64x4", 128: "32x64x4"}   # kernels/src/tiles.hpp: the V1 kernel's tile (flashlab's default)
V2_TILE = {64: "128x128x4", 128: "128x64x4"}  # the tile rule's (docs/model.md "The tile rule"): FA2's

# Nsight Compute metrics of step 4 (key: metric). A name this ncu does not know is dropped and recorded.
METRICS = time_dataset.METRICS | {
    "l2_rd_sectors": "lts__t_sectors_srcunit_tex_op_read.sum",
    "l2_wr_sectors": "lts__t_sectors_srcunit_tex_op_write.sum",
    "achieved_occupancy_pct": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "registers": "launch__registers_per_thread",
    "smem_static": "launch__shared_mem_per_block_static",
    "smem_dynamic": "launch__shared_mem_per_block_dynamic",
    "waves": "launch__waves_per_multiprocessor",
    "tensor_pipe_pct": "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
    "sm_busy_pct": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "instructions": "smsp__inst_executed.sum",
}


def our_rows():
    """The flashlab-gpu configurations: V1 then V2 of each shape."""
    rows = []
    for s in SHAPES:
        problem = time_configs.problem_flags(s["n"], s["n"], s["d"], s["batch"], s["heads"], s["mask"], "fp16")
        rows.append(f"--algo v1 {time_configs.tile_flags(V1_TILE[s['d']])} {problem}")
        rows.append(f"--algo v2 {time_configs.tile_flags(V2_TILE[s['d']])} {problem}")
    return rows


def child(ext, shapes_file, mode, out=None):
    cmd = [sys.executable, str(HERE / "fa1_child.py"), "--ext", str(ext), "--shapes", str(shapes_file), "--mode", mode]
    return cmd + (["--out", str(out)] if out else [])


def profile_metrics(cmd, log, metrics):
    """One ncu run with `metrics` (dict key: name); a name ncu does not know is dropped and the run
    repeated. Returns (ncu.launches with non-numeric values kept as text, the dropped names)."""
    dropped = []
    for _ in range(len(metrics)):
        proc = ncu.run(ncu.command(metrics, cache_control="all") + cmd, log)
        if proc.returncode == 0:
            return ncu.launches(proc.stdout, metrics, strict=False), dropped
        text = proc.stdout + proc.stderr
        errors = [line for line in text.splitlines() if "ERROR" in line]
        bad = [k for k, m in metrics.items() if any(m in line for line in errors)]
        if not bad:
            raise RuntimeError(f"ncu exited with {proc.returncode}: {proc.stderr[-1500:]}")
        for k in bad:
            dropped.append(metrics.pop(k))
    raise RuntimeError("ncu: no metric left")


def as_timed(flags_or_shape, key, launch):
    """A timed row in time_dataset.py's form (one sample per metric of time_dataset.METRICS)."""
    return {key: flags_or_shape, "launches": [{"name": launch["name"][:200], "grid": launch["grid"], "block": launch["block"]}
                                              | {m: [launch.get(m, 0.0)] for m in time_dataset.METRICS}]}


def ours(binary, rows, work, logs, names, doc):
    """Step 2's Nsight Compute run: every row once (--profile), METRICS per launch."""
    cfg = work / "profile_configs.txt"
    cfg.write_text("".join(f"{r} --no-events --no-check --profile\n" for r in rows))
    launches, dropped = profile_metrics(["--kernel-name", "regex:^fl_", str(binary), "--configs", str(cfg)],
                                        logs / "ncu_ours.csv", names)
    doc["metrics"].setdefault("dropped", []).extend(dropped)
    groups = time_dataset.group_ours(launches, time_dataset.launch_counts(binary, rows, work), rows)
    doc["ours"] = [as_timed(r, "flags", g[0]) | {"split": time_configs.split_of(r)} for r, g in zip(rows, groups)]
    doc["metrics"]["ours"] = [{"flags": r} | g[0] for r, g in zip(rows, groups)]


def fa1(ext, shapes_file, work, logs, names, doc):
    """Step 3: FA1 checked and profiled in one process."""
    out = work / "fa1_checks.json"
    launches, dropped = profile_metrics(["--kernel-name", "regex:fmha_fwd"] + child(ext, shapes_file, "check", out),
                                        logs / "ncu_fa1.csv", names)
    doc["metrics"].setdefault("dropped", []).extend(dropped)
    if len(launches) != len(SHAPES):
        raise RuntimeError(f"ncu profiled {len(launches)} FA1 kernels for {len(SHAPES)} shapes")
    doc["fa1_checks"] = json.loads(out.read_text())
    doc["fa1"] = [as_timed(s, "shape", k) for s, k in zip(SHAPES, launches)]
    doc["metrics"]["fa1"] = [{"shape": s} | k for s, k in zip(SHAPES, launches)]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, type=Path, help="flashlab-gpu (built as scripts/gpu/time_dataset.sh builds it)")
    ap.add_argument("--fa1-src", required=True, type=Path, help="FA1's csrc/flash_attn with cutlass/include")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--work", type=Path, default=Path("/tmp/flashlab-fa1"))
    args = ap.parse_args()
    logs, ext = args.work / "logs", args.work / "fa1-build"
    logs.mkdir(parents=True, exist_ok=True)
    args.out.mkdir(parents=True, exist_ok=True)
    rows = our_rows()
    shapes_file = args.work / "shapes.json"
    shapes_file.write_text(json.dumps(SHAPES))
    meta = time_dataset.metadata(args.commit, sys.argv[1:])
    meta["command"] = "python3 scripts/gpu/fa1_compare.py " + " ".join(sys.argv[1:])
    meta["fa1"] = FA1 | {"sources_sha256": fa1_build.source_hash(args.fa1_src)}
    names = dict(METRICS)
    doc = {"meta": meta, "shapes": SHAPES, "checks": [], "ours": [], "fa1_checks": [], "fa1": [],
           "metrics": {"names": names}, "errors": {}}

    def save():
        (args.out / "fa1_compare.json").write_text(json.dumps(doc, indent=1) + "\n")
        common.tar_folder(args.out / "fa1_logs.tar.gz", logs)

    build_log = open(logs / "fa1_build.log", "w")
    t0 = time.monotonic()
    build = subprocess.Popen([sys.executable, str(HERE / "fa1_build.py"), "--src", str(args.fa1_src), "--build", str(ext)],
                             stdout=build_log, stderr=subprocess.STDOUT)

    def wait_build():
        if build.wait() != 0:
            doc["errors"]["fa1_build"] = (logs / "fa1_build.log").read_text()[-6000:]
        else:
            doc["meta"]["fa1_build_s"] = round(time.monotonic() - t0, 1)

    steps = [("checks", lambda: doc.__setitem__("checks", time_dataset.checks(args.bin, rows, args.work, logs))),
             ("ours", lambda: ours(args.bin, rows, args.work, logs, names, doc)),
             ("fa1_build", wait_build),
             ("fa1", lambda: fa1(ext, shapes_file, args.work, logs, names, doc))]
    for name, fn in steps:
        if build.poll() not in (None, 0) and "fa1_build" not in doc["errors"]:
            wait_build()  # failed while step 2 ran: stop now
        if "fa1_build" in doc["errors"]:
            print("FA1 build failed: stopping (log in fa1_logs.tar.gz)", flush=True)
            break
        t1 = time.monotonic()
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - recorded; the data of the other steps is kept
            doc["errors"].setdefault(name, str(e))
            print(f"{name}: {e}", flush=True)
        print(f"step {name}: {time.monotonic() - t1:.0f} s", flush=True)
        save()
    save()
    failed = [c["flags"] for c in doc["checks"] if not c["passed_as_reported"]]
    print(f"rows: ours {len(doc['ours'])}, fa1 {len(doc['fa1'])}; our checks failed: {len(failed)}; errors: {list(doc['errors'])}")
    table(doc)
    return 0 if not doc["errors"] and not failed else 1


def table(doc):
    """A short table for the console: median ms of FA1, V1 and V2 per shape."""
    def med(row):
        t = sorted(sum(l["time_ns"][i] for l in row["launches"]) for i in range(len(row["launches"][0]["time_ns"])))
        return (t[len(t) // 2] if len(t) % 2 else 0.5 * (t[len(t) // 2 - 1] + t[len(t) // 2])) / 1e6 if t else float("nan")
    ours = {r["flags"]: r for r in doc["ours"] if r["launches"]}
    for k, s in enumerate(doc["shapes"]):
        v1, v2 = our_rows()[2 * k], our_rows()[2 * k + 1]
        fa1 = doc["fa1"][k] if k < len(doc["fa1"]) else None
        t = [med(fa1) if fa1 else float("nan"), med(ours[v1]) if v1 in ours else float("nan"), med(ours[v2]) if v2 in ours else float("nan")]
        print(f"{s['batch']}x{s['heads']} N={s['n']:5} d={s['d']:3} {s['mask']:6}  FA1 {t[0]:8.3f}  V1 {t[1]:8.3f}  V2 {t[2]:8.3f} ms"
              f"  V1/FA1 time {t[1] / t[0]:5.2f}")


if __name__ == "__main__":
    sys.exit(main())
