#!/usr/bin/env python3
"""Measures time and DRAM bytes of flashlab's kernels and of PyTorch's FA2, for the time model.

    python3 scripts/gpu/timing.py --out OUT --bin build-gpu/kernels/flashlab-gpu [--commit SHA] [--set footprint]

For every configuration of CONFIGS (V1, V2 and standard attention: N from 256 to 32768, d 32/64/128,
no mask / causal / window, batch x heads from 1 to 256, several tiles) and of TORCH (PyTorch's
flash backend):
  1. time: CUDA events around back-to-back launches, median (flashlab-gpu --time; torch events);
  2. per kernel, under Nsight Compute (--clock-control none, default --cache-control all: the L2
     is flushed before each kernel, so DRAM bytes are those of a cold L2): gpu__time_duration,
     dram__bytes_read/write, global load/store bytes, and the L2 sectors read across its two
     partitions (l2_fabric_rd, 32 bytes each: the copies of lines homed on the far side).
Writes OUT/timing.json: {"meta", "runs": [...], "torch": [...]} (the layout the time model's tests
read from tests/data/gpu_timing/h200.json) and OUT/timing_logs.tar.gz.
"""

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import ncu  # noqa: E402

METRICS = {"time_ns": ncu.NAMES["time_ns"], "dram_read": ncu.NAMES["dram_rd"], "dram_write": ncu.NAMES["dram_wr"],
           "ld": ncu.NAMES["ld"], "st": ncu.NAMES["st"], "l2_fabric_rd": ncu.NAMES["l2_fabric_rd"]}
SUMMED = ("dram_read", "dram_write", "ld", "st", "l2_fabric_rd")  # per configuration, over its launches


def _cfg(algo, n, d, shape, mask="none", batch=1, heads=16, dtype="fp16", reps=None):
    br, bc, w = shape.split("x")
    flags = (f"--algo {algo} --nq {n} --nk {n} --d {d} --br {br} --bc {bc} --warps {w} --mask {mask} "
             f"--batch {batch} --heads {heads} --dtype {dtype}")
    return flags, reps


# (flags, reps): reps default by algorithm (V1 and standard are slow at large N).
CONFIGS = [
    # V2: N, d, mask, batch x heads, tiles
    _cfg("v2", 256, 64, "128x128x8"), _cfg("v2", 1024, 64, "128x128x8"), _cfg("v2", 4096, 64, "128x128x8"),
    _cfg("v2", 16384, 64, "128x128x8"), _cfg("v2", 32768, 64, "128x128x8"),
    _cfg("v2", 4096, 32, "128x128x8"), _cfg("v2", 4096, 128, "128x64x8"),
    _cfg("v2", 4096, 64, "128x128x8", "causal"), _cfg("v2", 4096, 128, "128x64x8", "causal"),
    _cfg("v2", 16384, 128, "128x64x8", "causal"), _cfg("v2", 32768, 64, "128x128x8", "causal", heads=8),
    _cfg("v2", 8192, 64, "128x128x8", "window:256,0"), _cfg("v2", 4096, 128, "64x64x4", "window:512,512"),
    _cfg("v2", 4096, 64, "128x128x8", heads=1), _cfg("v2", 4096, 64, "128x128x8", heads=4),
    _cfg("v2", 4096, 64, "128x128x8", batch=4), _cfg("v2", 4096, 64, "128x128x8", batch=8, heads=32),
    _cfg("v2", 4096, 64, "64x64x4", batch=4), _cfg("v2", 4096, 64, "64x128x4", batch=4),
    _cfg("v2", 4096, 64, "128x64x8", batch=4), _cfg("v2", 4096, 128, "128x64x8", "causal", batch=4, dtype="bf16"),
    _cfg("v2", 2048, 64, "128x128x8", "causal", batch=8, heads=32), _cfg("v2", 1024, 32, "64x128x4", batch=16),
    _cfg("v2", 16384, 64, "128x128x8", batch=4),
    # V1 (one thread block per head): N, d, mask, batch x heads
    _cfg("v1", 256, 64, "64x64x4"), _cfg("v1", 1024, 64, "64x64x4"), _cfg("v1", 4096, 64, "64x64x4"),
    _cfg("v1", 16384, 64, "64x64x4", heads=1, reps=3), _cfg("v1", 4096, 128, "32x64x4"),
    _cfg("v1", 4096, 32, "64x64x4"), _cfg("v1", 4096, 64, "64x64x4", batch=8, heads=32, reps=3),
    _cfg("v1", 4096, 128, "32x64x4", batch=8, heads=32, reps=3), _cfg("v1", 4096, 64, "64x64x4", "causal"),
    _cfg("v1", 4096, 64, "64x64x4", "window:256,0"), _cfg("v1", 1024, 64, "64x64x4", heads=1),
    _cfg("v1", 1024, 64, "64x64x4", batch=16), _cfg("v1", 8192, 64, "64x64x4", batch=2, heads=64, reps=3),
    # standard attention: three launches
    _cfg("standard", 256, 64, "64x64x4"), _cfg("standard", 1024, 64, "64x64x4"),
    _cfg("standard", 4096, 64, "128x64x8"), _cfg("standard", 16384, 64, "128x64x8", reps=3),
    _cfg("standard", 4096, 128, "128x64x8"), _cfg("standard", 4096, 32, "64x64x4"),
    _cfg("standard", 4096, 64, "128x64x8", "causal"), _cfg("standard", 4096, 64, "128x64x8", "window:256,0"),
    _cfg("standard", 1024, 64, "64x64x4", batch=16), _cfg("standard", 32768, 64, "128x64x8", heads=1, reps=3),
]

# PyTorch's flash backend: (batch, heads, N, d, causal); the shared/data configs and more.
TORCH = [(1, 16, 4096, 64, False), (1, 16, 4096, 64, True), (1, 16, 4096, 128, False),
         (4, 16, 16384, 64, False), (1, 8, 1000, 64, False), (1, 8, 1000, 64, True), (1, 2, 777, 32, True),
         (4, 16, 4096, 64, False), (4, 16, 4096, 64, True), (4, 16, 4096, 128, False), (4, 16, 4096, 128, True),
         (1, 16, 16384, 128, True), (8, 32, 2048, 64, True), (1, 16, 32768, 64, False), (16, 16, 1024, 32, False)]

# --set footprint: the bytes held crossing the L2 in steps (issue 27's O write-back; V3's own steps are
# l2_share_probe.py --set footprint): V2 and FA2 at d 128 N 4096 B 2 H 1-8 and d 64 N 4096 H 8-64; and
# the V2 kernel with FA2's own d 128 tile (128 x 64, 4 warps) and with 64 x 64, 4 warps (twice the thread
# blocks) at the steps where the L2 fills, to tell the tile and the blocks in flight from the kernel.
FOOTPRINT_CONFIGS = ([_cfg("v2", 4096, 128, "128x64x8", batch=2, heads=h) for h in range(1, 9)]
                     + [_cfg("v2", 4096, 64, "128x128x8", batch=1, heads=h) for h in (8, 16, 24, 32, 48, 64)]
                     + [_cfg("v2", 4096, 128, s, batch=2, heads=h) for s in ("128x64x4", "64x64x4") for h in (3, 4, 6, 8)])
FOOTPRINT_TORCH = [(2, h, 4096, 128, False) for h in range(1, 9)] + [(1, h, 4096, 64, False) for h in (8, 16, 24, 32, 48, 64)]
SETS = {"default": (CONFIGS, TORCH), "footprint": (FOOTPRINT_CONFIGS, FOOTPRINT_TORCH)}


def reps_flags(algo, reps):
    if reps is not None:
        return f"--warmup 1 --reps {reps}"
    return "--warmup 5 --reps 20" if algo == "v2" else "--warmup 2 --reps 5"


def ncu_rows(cmd, log):
    proc = ncu.run(cmd, log)
    if proc.returncode != 0:
        raise RuntimeError(f"ncu exited with {proc.returncode}: {proc.stderr[-2000:]}")
    return ncu.launches(proc.stdout, METRICS)


def ncu_cmd(kernel_regex, argv):
    return ncu.command(METRICS) + ["--kernel-name", f"regex:{kernel_regex}"] + argv


def ours(binary, work, logs, common_flags, algos, all_configs):
    configs = [(f, r) for f, r in all_configs if ncu.algo_of(f) in algos]
    lines = [f"{f} --no-events --no-check --time {reps_flags(ncu.algo_of(f), r)}" for f, r in configs]
    t0 = time.monotonic()
    timed, proc = common.run_configs(binary, lines, work / "timing_configs.txt", work / "timing_runs.json", common_flags,
                                     logs / "time.log", must=True)
    print(f"timed {len(lines)} configs in {time.monotonic() - t0:.0f} s (exit {proc.returncode})", flush=True)
    (work / "ncu_configs.txt").write_text("".join(f"{f} --no-events --no-check --profile\n" for f, _ in configs))
    t0 = time.monotonic()
    kernels = ncu_rows(ncu_cmd("^fl_", [str(binary), "--configs", str(work / "ncu_configs.txt")]), logs / "ncu_ours.csv")
    print(f"ncu {len(kernels)} kernels in {time.monotonic() - t0:.0f} s", flush=True)
    expected = sum(ncu.KERNELS_PER_ALGO[ncu.algo_of(f)] for f, _ in configs)
    if len(kernels) != expected:
        raise RuntimeError(f"ncu profiled {len(kernels)} kernels, expected {expected}")
    runs, pos = [], 0
    for (flags, _), t in zip(configs, timed):
        n = ncu.KERNELS_PER_ALGO[ncu.algo_of(flags)]
        group, pos = kernels[pos:pos + n], pos + n
        runs.append({"flags": flags, "config": t["config"], "median_ms": t["timing"]["median_ms"],
                     "tflops": t["timing"]["tflops"], "flops": t["timing"]["flops"],
                     "launch_ms": [k["time_ns"] * 1e-6 for k in group],
                     "kernels": [{"name": k["name"], "grid": k["grid"], "block": k["block"]} for k in group],
                     **{key: int(sum(k[key] for k in group)) for key in SUMMED},
                     "sim": t.get("sim", {})})
    return runs


TORCH_SCRIPT = r'''
import json, sys, torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
cfgs = json.loads(sys.argv[1]); mode = sys.argv[2]; out = []
for b, h, n, d, causal in cfgs:
    q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=torch.float16) for _ in range(3))
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        if mode == "profile":
            F.scaled_dot_product_attention(q, k, v, is_causal=causal); torch.cuda.synchronize()
            print("CONFIG_DONE", flush=True); continue
        for _ in range(5):
            F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True); ts = []
        for _ in range(20):
            s.record(); F.scaled_dot_product_attention(q, k, v, is_causal=causal); e.record()
            torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
        ts.sort(); out.append(ts[len(ts) // 2])
print(json.dumps(out))
'''


def pytorch(work, logs, torch_cfgs):
    script = work / "torch_timing.py"
    script.write_text(TORCH_SCRIPT)
    cfgs = json.dumps(torch_cfgs)
    proc = common.sh([sys.executable, str(script), cfgs, "time"])
    (logs / "torch_time.log").write_text(proc.stdout + proc.stderr)
    times = json.loads(proc.stdout.strip().splitlines()[-1])
    profiled = []
    for cfg in torch_cfgs:  # one ncu process per config: split-KV configs launch two kernels
        rows = ncu_rows(ncu_cmd("flash", [sys.executable, str(script), json.dumps([cfg]), "profile"]),
                        logs / f"ncu_torch_{'_'.join(str(int(x)) for x in cfg)}.csv")
        profiled.append(rows)
    out = []
    for (b, h, n, d, causal), ms, rows in zip(torch_cfgs, times, profiled):
        out.append({"batch": b, "heads": h, "n": n, "d": d, "causal": causal, "dtype": "fp16", "median_ms": ms,
                    "launch_ms": [r["time_ns"] * 1e-6 for r in rows],
                    "kernels": [{"name": r["name"][:160], "grid": r["grid"], "block": r["block"]} for r in rows],
                    **{key: int(sum(r[key] for r in rows)) for key in SUMMED}})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--bin", required=True, type=Path)
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--work", type=Path, default=Path("/tmp/flashlab-timing"))
    ap.add_argument("--algos", default="standard,v1,v2", help="comma-separated subset of our kernels to run")
    ap.add_argument("--no-torch", action="store_true", help="skip PyTorch's flash backend")
    ap.add_argument("--set", choices=("default", "footprint"), default="default",
                    help="footprint: FOOTPRINT_CONFIGS and FOOTPRINT_TORCH in place of CONFIGS and TORCH")
    args = ap.parse_args()
    configs, torch_cfgs = SETS[args.set]
    args.out.mkdir(parents=True, exist_ok=True)
    logs = args.work / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    meta = common.metadata(("gpu", "driver", "memory", "max_sm_clock", "cuda", "torch", "commit", "date", "command", "ncu"),
                           missing="", commit=args.commit,
                           command="python3 scripts/gpu/timing.py --out OUT --bin build-gpu/kernels/flashlab-gpu --commit SHA"
                           + ("" if args.set == "default" else f" --set {args.set}"),
                           ncu="--clock-control none, default cache control (L2 flushed before each profiled kernel)")
    result = {"meta": meta, "runs": [], "torch": [], "errors": {}}
    try:
        result["runs"] = ours(args.bin, args.work, logs, ["--commit", args.commit], args.algos.split(","), configs)
    except Exception as e:  # noqa: BLE001 — kept in the result, the other half still runs
        result["errors"]["ours"] = str(e)
    (args.out / "timing.json").write_text(json.dumps(result, indent=1))
    try:
        result["torch"] = [] if args.no_torch else pytorch(args.work, logs, torch_cfgs)
    except Exception as e:  # noqa: BLE001
        result["errors"]["torch"] = str(e)
    (args.out / "timing.json").write_text(json.dumps(result, indent=1))
    common.tar_folder(args.out / "timing_logs.tar.gz", logs)
    print(json.dumps(result["errors"]))
    for r in result["runs"]:
        print(f"{r['flags']:100s} {r['median_ms']:9.4f} ms  dram rd {r['dram_read']/1e6:9.2f} MB "
              f"wr {r['dram_write']/1e6:8.2f} MB  ncu {sum(r['launch_ms']):9.4f} ms")
    for r in result["torch"]:
        print(f"torch {r['batch']}x{r['heads']} N={r['n']} d={r['d']} causal={r['causal']}: {r['median_ms']:.4f} ms "
              f"dram rd {r['dram_read']/1e6:.2f} MB wr {r['dram_write']/1e6:.2f} MB kernels {len(r['kernels'])}")
    return 0 if not result["errors"] else 1


if __name__ == "__main__":
    sys.exit(main())
