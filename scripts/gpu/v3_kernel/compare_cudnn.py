#!/usr/bin/env python3
"""V3's forward against PyTorch's cuDNN attention on the H200, kernel for kernel, in the same run
(issue 27 item 5's target: V3 >= 0.85x cuDNN's speed).

    python3 scripts/gpu/v3_kernel/compare_cudnn.py --ours RESULTS.jsonl --out V3_H200.json
                                                   [--commit SHA] [--sources DIR]

Shapes: cuDNN baseline's (scripts/gpu/cudnn_baseline.py): fp16, batch x N = 16,384 tokens, hidden
2,048 (32 heads at d = 64, 16 at d = 128), no mask and causal, N 1,024 / 4,096 / 16,384. cuDNN gets
our layout: torch.randn(B, N, H, d).transpose(1, 2), i.e. [B, H, N, d] views of [B, N, H, d] memory
(if cuDNN refuses it, contiguous [B, H, N, d], recorded per row as "layout").
Timing, the same way as main.cu times V3: 3 untimed warm-up calls, then 15 repetitions of
(CUDA event, 5 back-to-back calls of scaled_dot_product_attention under
sdpa_kernel(SDPBackend.CUDNN_ATTENTION), CUDA event) / 5, median. Between the events lie the 5 calls'
host-side dispatch and whatever kernels each call launches (one profiled call lists them:
"kernels_per_call"); V3's events hold 5 launches of its one kernel. The check: the first call's
output against float32 math on two heads (max |error|). TFLOP/s = 4 B H N^2 d (halved when causal)
/ time. Writes --out: meta (gpu, driver, torch, commit, command, date, SHA-256 of the kernel's
sources), V3's rows (from --ours), cuDNN's rows and the comparison; prints the table last.
"""
import argparse
import datetime
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

TOKENS, HIDDEN = 16384, 2048
SHAPES = [(d, mask, n) for d in (64, 128) for mask in ("none", "causal") for n in (1024, 4096, 16384)]


def flops(b, h, n, d, causal):
    return 4.0 * b * h * n * n * d * (0.5 if causal else 1.0)


def time_cudnn(d, mask, n, layout):
    """layout "bnhd": [B, H, N, d] views of [B, N, H, d] memory (ours); "bhnd": contiguous [B, H, N, d]."""
    b, h = TOKENS // n, HIDDEN // d
    causal = mask == "causal"
    torch.manual_seed(n + d)
    if layout == "bnhd":
        q, k, v = (torch.randn(b, n, h, d, device="cuda", dtype=torch.float16).transpose(1, 2) for _ in range(3))
    else:
        q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=torch.float16) for _ in range(3))
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    ref = torch.softmax((q[:1, :2].float() @ k[:1, :2].float().transpose(-1, -2)) / d ** 0.5
                        + (torch.triu(torch.full((n, n), float("-inf"), device="cuda"), 1) if causal else 0), -1) \
        @ v[:1, :2].float()
    err = float((o[:1, :2].float() - ref).abs().max())
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            torch.cuda.synchronize()
        names = sorted({e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA})
        for _ in range(3):
            F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        torch.cuda.synchronize()
        a, z = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        t = []
        for _ in range(15):
            a.record()
            for _ in range(5):
                F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            z.record()
            z.synchronize()
            t.append(a.elapsed_time(z) / 5)
    t.sort()
    ms = t[len(t) // 2]
    return {"d": d, "mask": mask, "n": n, "layout": layout, "batch": b, "heads": h, "time_ms": ms, "times_ms": t,
            "tflops": flops(b, h, n, d, causal) / (ms * 1e-3) / 1e12, "max_abs_error": err, "kernels_per_call": names}


def sha_sources(folder):
    h = hashlib.sha256()
    for p in sorted(Path(folder).glob("*")):
        if p.suffix in (".cu", ".cuh"):
            h.update(p.name.encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ours", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--sources", type=Path, default=Path(__file__).resolve().parent)
    a = ap.parse_args()
    ours = [json.loads(x) for x in a.ours.read_text().splitlines() if x.startswith("{")]
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    meta = {"gpu": smi.split(",")[0].strip() if smi else torch.cuda.get_device_name(),
            "driver": smi.split(",")[1].strip() if "," in smi else "unknown", "torch": torch.__version__,
            "cudnn": torch.backends.cudnn.version(), "commit": a.commit,
            "command": "COMMIT=<sha> bash scripts/gpu/v3_kernel/run.sh",
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "kernel_sources_sha256": sha_sources(a.sources)}
    cudnn = []
    for d, mask, n in SHAPES:
        try:
            r = time_cudnn(d, mask, n, "bnhd")
        except Exception as e:  # noqa: BLE001 — a refused layout is recorded, then the contiguous one tried
            first = repr(e)
            try:
                r = time_cudnn(d, mask, n, "bhnd")
                r["bnhd_error"] = first
            except Exception as e2:  # noqa: BLE001
                r = {"d": d, "mask": mask, "n": n, "error": first + " / " + repr(e2)}
        torch.cuda.empty_cache()
        cudnn.append(r)
        print("cudnn", d, mask, n, round(r.get("time_ms", -1), 4), flush=True)
    table = []
    for c in cudnn:
        mine = [r for r in ours if r.get("variant") == "fa3" and r.get("dtype") == "fp16" and r["d"] == c["d"]
                and r["mask"] == c["mask"] and r["n"] == c["n"] and r.get("time_ms")]
        row = {"d": c["d"], "mask": c["mask"], "n": c["n"], "cudnn_tflops": c.get("tflops"),
               "v3_tflops": mine[0]["tflops"] if mine else None,
               "v3_check_rel_l2": mine[0]["check"]["rel_l2"] if mine else None}
        row["ratio"] = row["v3_tflops"] / row["cudnn_tflops"] if row["v3_tflops"] and row["cudnn_tflops"] else None
        table.append(row)
    a.out.write_text(json.dumps({"meta": meta, "v3": ours, "cudnn": cudnn, "comparison": table}, indent=1) + "\n")
    print(f"{'d':>4} {'mask':>7} {'N':>6} {'cuDNN TF/s':>11} {'V3 TF/s':>8} {'V3/cuDNN':>9}")
    for r in table:
        f = lambda x, p: "-" if x is None else f"{x:.{p}f}"  # noqa: E731
        print(f"{r['d']:>4} {r['mask']:>7} {r['n']:>6} {f(r['cudnn_tflops'], 1):>11} {f(r['v3_tflops'], 1):>8} "
              f"{f(r['ratio'], 3):>9}")
    timed = [r for r in ours if r.get("time_ms")]
    if timed:
        ns = sorted({r["n"] for r in timed})
        print("V3 variants, fp16, TFLOP/s by N: variant d mask " + " ".join(map(str, ns)))
        keys = sorted({(r["variant"], r["d"], r["mask"]) for r in timed}, key=lambda k: (k[1], k[2], k[0]))
        for v, d, m in keys:
            cells = []
            for n in ns:
                x = [r["tflops"] for r in timed if (r["variant"], r["d"], r["mask"], r["n"]) == (v, d, m, n)]
                cells.append(f"{x[0]:7.1f}" if x else "      -")
            print(f"  {v:>12} {d:>4} {m:>7} " + " ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
