#!/usr/bin/env python3
"""V3's staged forward kernel against PyTorch's cuDNN attention and its FA2 (flash backend) on the H200,
kernel for kernel, all timed by Nsight Compute in the same run (issue 27 item 5: V3 forward >= 0.85x
cuDNN's speed; "V3 vs cuDNN and vs FA2", N 1k-32k).

    python3 scripts/gpu/v3_kernel/ncu_vs_cudnn.py --bin V3 --out DIR --commit SHA [--launches 5] [--deadline S]

Every side is timed the same way: Nsight Compute's gpu__time_duration.sum (--clock-control none
--cache-control all), kernel only — nothing lies between a kernel's start and its end but the kernel.
- V3: `V3 run fa3 DTYPE D MASK B N H --time` under ncu, the kernel filter v3_forward_kernel, the first
  two launches skipped (the checked one — the binary checks O and L against float64 on it and prints
  the check as a JSON line — and its repeat, which must give the same bits) and the next `--launches`
  recorded (the first of the timed loop's warm-up and timed launches, the same work). The run's JSON line (check, tile,
  grid) is kept beside the durations.
- cuDNN and FA2: scripts/gpu/cudnn_baseline.py --backends cudnn,flash --shapes (the same shapes), in the
  same device call: one child process per shape under the same ncu flags, SDPBackend.CUDNN_ATTENTION then
  SDPBackend.FLASH_ATTENTION, `--launches` calls each after one warm-up call.
Shapes (SHAPES): FA3's benchmark's — batch x N = 16,384 tokens (batch 1 at N = 32,768), hidden 2,048 (32
heads at d = 64, 16 at d = 128), no mask and causal; fp16 at N 1,024 / 4,096 / 16,384 / 32,768, bf16 at
N 4,096 / 16,384.
Writes DIR/v3_ncu.json: meta (gpu, driver, torch, ncu, commit, command, date, the SHA-256 of the V3
kernel's sources: scripts/gpu/v3_kernel/*.cu, *.cuh, sorted) and one row per shape with V3's raw
durations (ns) and check; DIR/cudnn_ncu.json (cudnn_baseline.py's, both backends) beside it — the 12
fp16 shapes of BASE; the shapes of MORE (N = 32k, bf16) in DIR/v3_ncu_more.json and cudnn_ncu_more.json;
DIR/ncu_logs.tar.gz, DIR/cudnn_logs.tar.gz. Shapes not started before --deadline (seconds from the
start) are left out and named in meta.skipped. Verdicts (medians, ratios, the 0.85 bar) are computed
from these raw figures by the CI check (scripts/check/v3_kernel_data.py), not here.
"""

import argparse
import json
import subprocess
import sys
import tarfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import common  # noqa: E402
import ncu  # noqa: E402

METRICS = {"time_ns": ncu.NAMES["time_ns"]}
TOKENS, HIDDEN = 16384, 2048
BASE = [("fp16", d, mask, n) for d in (64, 128) for mask in ("none", "causal") for n in (1024, 4096, 16384)]
MORE = ([("fp16", d, mask, 32768) for d in (64, 128) for mask in ("none", "causal")]
        + [("bf16", d, mask, n) for d in (64, 128) for mask in ("none", "causal") for n in (4096, 16384)])
SHAPES = BASE + MORE
FILES = {"base": ("v3_ncu.json", "cudnn_ncu.json"), "more": ("v3_ncu_more.json", "cudnn_ncu_more.json")}


def part_of(dtype, d, mask, n):
    """"base" for the 12 fp16 shapes of the earlier runs (the files other readers take as fp16, N <= 16k:
    tests/sim/time, lab 12), "more" for N = 32k and bf16."""
    return "base" if (dtype, d, mask, n) in BASE else "more"


def batch_of(n):
    """FA3's benchmark batch: 16,384 tokens over N, at least 1 (N = 32,768: one sequence)."""
    return max(1, TOKENS // n)


def v3_row(binary, d, mask, n, launches, logs, variant="fa3", extra=(), metrics=METRICS, batch=None, tag="",
           dtype="fp16", heads=None, skip=2, time=True, cache_control="all"):
    """One ncu process: `binary run VARIANT DTYPE D MASK B N H [--time] [extra]`, the first `skip` launches
    skipped (by default the checked launch and its repeat), `launches` recorded with `metrics` (dict key ->
    ncu name), ncu's --cache-control `cache_control` ("all": caches flushed before each profiled launch;
    "none": left as the launches before it left them). B = batch_of(N) unless `batch`; H = 2,048 // D
    unless `heads`. Returns the row: shape, exit, the run's JSON line, the kernels' values."""
    b, h = batch or batch_of(n), heads or HIDDEN // d
    cmd = ncu.command(metrics, cache_control=cache_control) + [
        "--kernel-name", "regex:v3_forward_kernel", "--launch-skip", str(skip), "--launch-count", str(launches),
        str(binary), "run", variant, dtype, str(d), mask, str(b), str(n), str(h), *(["--time"] if time else []), *extra]
    row = {"variant": variant, "extra": list(extra), "dtype": dtype, "d": d, "mask": mask, "n": n, "batch": b, "heads": h}
    try:  # a hung kernel costs 120 s and its row, not the call
        proc = common.sh(cmd, timeout=120)
    except subprocess.TimeoutExpired:
        return row | {"exit": "timeout", "run": None, "kernels": []}
    name = f"ncu_v3{tag}_{variant}{''.join(extra).replace('--', '_')}_{dtype}_d{d}_{mask}_b{b}_n{n}_h{h}.csv"
    (logs / name).write_text(" ".join(cmd) + "\n\n" + proc.stdout + "\n--- stderr ---\n" + proc.stderr)
    lines = [json.loads(x) for x in proc.stdout.splitlines() if x.startswith("{")]
    ks = ncu.launches(proc.stdout, metrics, strict=False) if proc.returncode == 0 else []
    return row | {"exit": proc.returncode, "run": lines[-1] if lines else None,
                  "kernels": [{"name": k["name"][:200], "grid": k["grid"], "block": k["block"]}
                              | {m: k.get(m) for m in metrics} for k in ks]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True, type=Path, help="the v3 program (ncu_run.sh builds it)")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--launches", type=int, default=5)
    ap.add_argument("--deadline", type=float, default=1e9, help="seconds from the start after which no shape starts")
    args = ap.parse_args()
    t0 = time.time()
    args.out.mkdir(parents=True, exist_ok=True)
    logs = Path("/tmp/v3_ncu_logs")
    logs.mkdir(parents=True, exist_ok=True)
    meta = common.metadata(("gpu", "driver", "torch", "ncu", "commit", "command", "date"), commit=args.commit,
                           command="python3 scripts/gpu/v3_kernel/ncu_vs_cudnn.py " + " ".join(sys.argv[1:]))
    meta["ncu_flags"] = " ".join(ncu.command(METRICS, cache_control="all")[1:])
    meta["v3_sources_sha256"] = common.v3_source_hash()
    meta["skipped"] = []
    rows, done = {"base": [], "more": []}, []

    def write():
        for part, (v3_file, _) in FILES.items():
            (args.out / v3_file).write_text(json.dumps({"meta": meta, "rows": rows[part]}, indent=1))

    for dt, d, mask, n in SHAPES:
        if time.time() - t0 > args.deadline / 2:  # half the time for V3, half for cuDNN and FA2
            meta["skipped"].append(f"{dt} d={d} {mask} N={n}")
            continue
        r = {k: v for k, v in v3_row(args.bin, d, mask, n, args.launches, logs, dtype=dt).items()
             if k not in ("variant", "extra")}
        rows[part_of(dt, d, mask, n)].append(r)
        done.append((dt, d, mask, n))
        t = sorted(k["time_ns"] for k in r["kernels"] if isinstance(k.get("time_ns"), float))
        print(f"v3 {dt} d={d} {mask:6} N={n:5}: exit {r['exit']}, {len(t)} launches, median "
              f"{t[len(t) // 2] / 1e3 if t else float('nan'):.1f} us, check "
              f"{(r['run'] or {}).get('check', {}).get('pass')}", flush=True)
        write()
    write()
    shapes = ",".join(f"{dt}:{d}:{mask}:{n}" for dt, d, mask, n in done)
    left = max(10.0, args.deadline - (time.time() - t0))
    proc = subprocess.run([sys.executable, str(HERE.parent / "cudnn_baseline.py"), "--out", str(args.out),
                           "--commit", args.commit, "--passes", str(args.launches), "--backends", "cudnn,flash",
                           "--shapes", shapes, "--deadline", str(left)], text=True)
    print(f"cudnn_baseline.py exit {proc.returncode}", flush=True)
    both = args.out / "cudnn_baseline.json"
    if both.exists():  # split as V3's rows are
        doc = json.loads(both.read_text())
        for part, (_, cudnn_file) in FILES.items():
            keep = [r for r in doc["rows"] if part_of(r["dtype"], r["d"], r["mask"], r["n"]) == part]
            (args.out / cudnn_file).write_text(json.dumps({"meta": doc["meta"], "rows": keep}, indent=1) + "\n")
        both.unlink()
    with tarfile.open(args.out / "ncu_logs.tar.gz", "w:gz") as tar:
        tar.add(logs, arcname="v3_ncu_logs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
