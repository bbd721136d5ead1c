#!/usr/bin/env python3
"""V3's staged forward kernel against PyTorch's cuDNN attention on the H200, kernel for kernel, both
timed by Nsight Compute in the same run (issue 27 item 5: V3 forward >= 0.85x cuDNN's speed).

    python3 scripts/gpu/v3_kernel/ncu_vs_cudnn.py --bin V3 --out DIR --commit SHA [--launches 5]

Both sides are timed the same way: Nsight Compute's gpu__time_duration.sum (--clock-control none
--cache-control all), kernel only — nothing lies between a kernel's start and its end but the kernel.
- V3: `V3 run fa3 fp16 D MASK B N H --time` under ncu, the kernel filter v3_forward_kernel, the first
  two launches skipped (the checked one — the binary checks O and L against float64 on it and prints
  the check as a JSON line — and its repeat, which must give the same bits) and the next `--launches`
  recorded (the first of the timed loop's warm-up and timed launches, the same work). The run's JSON line (check, tile,
  grid) is kept beside the durations.
- cuDNN: scripts/gpu/cudnn_baseline.py --backends cudnn, the same shapes, in the same device call
  (its own child processes under the same ncu flags), `--launches` calls after one warm-up call.
Shapes: cudnn_baseline.py's — fp16, batch x N = 16,384 tokens, hidden 2,048 (32 heads at d = 64, 16 at
d = 128), no mask and causal, N 1,024 / 4,096 / 16,384.
Writes DIR/v3_ncu.json: meta (gpu, driver, torch, ncu, commit, command, date, the SHA-256 of the V3
kernel's sources: scripts/gpu/v3_kernel/*.cu, *.cuh, sorted) and one row per shape with V3's raw
durations (ns) and check; cudnn_baseline.json beside it; DIR/ncu_logs.tar.gz. Verdicts (medians,
ratios, the 0.85 bar) are computed from these raw figures by the CI check, not here.
"""

import argparse
import hashlib
import json
import subprocess
import sys
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import common  # noqa: E402
import ncu  # noqa: E402

METRICS = {"time_ns": ncu.NAMES["time_ns"]}
TOKENS, HIDDEN = 16384, 2048
SHAPES = [(d, mask, n) for d in (64, 128) for mask in ("none", "causal") for n in (1024, 4096, 16384)]


def sources_sha256(root=HERE):
    """SHA-256 over the V3 kernel's sources (*.cu, *.cuh in scripts/gpu/v3_kernel, sorted by name):
    names and contents, as common.kernel_source_hash does for kernels/."""
    h = hashlib.sha256()
    for p in sorted([*root.glob("*.cu"), *root.glob("*.cuh")]):
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def v3_row(binary, d, mask, n, launches, logs, variant="fa3", extra=(), metrics=METRICS, batch=None, tag=""):
    """One ncu process: `binary run VARIANT fp16 D MASK B N H --time [extra]`, the checked launch and its
    repeat skipped, `launches` recorded with `metrics` (dict key -> ncu name). B = 16,384 // N unless
    `batch`; H = 2,048 // D. Returns the row: shape, exit, the run's JSON line, the kernels' values."""
    b, h = batch or TOKENS // n, HIDDEN // d
    cmd = ncu.command(metrics, cache_control="all") + [
        "--kernel-name", "regex:v3_forward_kernel", "--launch-skip", "2", "--launch-count", str(launches),
        str(binary), "run", variant, "fp16", str(d), mask, str(b), str(n), str(h), "--time", *extra]
    row = {"variant": variant, "extra": list(extra), "d": d, "mask": mask, "n": n, "batch": b, "heads": h}
    try:  # a hung kernel costs 120 s and its row, not the call
        proc = common.sh(cmd, timeout=120)
    except subprocess.TimeoutExpired:
        return row | {"exit": "timeout", "run": None, "kernels": []}
    name = f"ncu_v3{tag}_{variant}{''.join(extra).replace('--', '_')}_d{d}_{mask}_n{n}.csv"
    (logs / name).write_text(" ".join(cmd) + "\n\n" + proc.stdout + "\n--- stderr ---\n" + proc.stderr)
    lines = [json.loads(x) for x in proc.stdout.splitlines() if x.startswith("{")]
    ks = ncu.launches(proc.stdout, metrics, strict=False) if proc.returncode == 0 else []
    return row | {"exit": proc.returncode, "run": lines[-1] if lines else None,
                  "kernels": [{"name": k["name"][:200], "grid": k["grid"], "block": k["block"]}
                              | {m: k.get(m) for m in metrics} for k in ks]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True, type=Path, help="the v3 program (scripts/gpu/v3_kernel/run.sh builds it)")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--launches", type=int, default=5)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    logs = Path("/tmp/v3_ncu_logs")
    logs.mkdir(parents=True, exist_ok=True)
    meta = common.metadata(("gpu", "driver", "torch", "ncu", "commit", "command", "date"), commit=args.commit,
                           command="python3 scripts/gpu/v3_kernel/ncu_vs_cudnn.py " + " ".join(sys.argv[1:]))
    meta["ncu_flags"] = " ".join(ncu.command(METRICS, cache_control="all")[1:])
    meta["v3_sources_sha256"] = sources_sha256()
    rows = []
    for d, mask, n in SHAPES:
        rows.append({k: v for k, v in v3_row(args.bin, d, mask, n, args.launches, logs).items()
                     if k not in ("variant", "extra")})
        r = rows[-1]
        t = sorted(k["time_ns"] for k in r["kernels"])
        print(f"v3 d={d} {mask:6} N={n:5}: exit {r['exit']}, {len(t)} launches, median "
              f"{t[len(t) // 2] / 1e3 if t else float('nan'):.1f} us, check "
              f"{(r['run'] or {}).get('check', {}).get('pass')}", flush=True)
    (args.out / "v3_ncu.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    proc = subprocess.run([sys.executable, str(HERE.parent / "cudnn_baseline.py"), "--out", str(args.out),
                           "--commit", args.commit, "--passes", str(args.launches), "--backends", "cudnn"], text=True)
    print(f"cudnn_baseline.py exit {proc.returncode}", flush=True)
    with tarfile.open(args.out / "ncu_logs.tar.gz", "w:gz") as tar:
        tar.add(logs, arcname="v3_ncu_logs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
