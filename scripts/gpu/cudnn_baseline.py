#!/usr/bin/env python3
"""PyTorch's cuDNN attention and its FA2 (flash backend) on the H200, kernel for kernel: the baseline
that issue 27 item 5 holds a V3 kernel to (V3 forward >= 0.85x cuDNN in the same run).

    python3 scripts/gpu/cudnn_baseline.py --out DIR [--commit SHA] [--shapes DTYPE:D:MASK:N,...] [--deadline S]

The shapes are FA3's benchmark's (batch x N = 16,384 tokens, hidden 2,048: 32 heads at d = 64, 16 at
d = 128; batch 1 where N > 16,384), fp16 (bf16 with --dtypes fp16,bf16), no mask and causal, N 1,024 to 16,384, or the
list --shapes gives (scripts/gpu/v3_kernel/ncu_vs_cudnn.py's). Each shape runs in a child process
under Nsight Compute (--clock-control none --cache-control all, gpu__time_duration.sum: kernel only,
nothing else between a kernel's start and end): scaled_dot_product_attention with SDPBackend.
CUDNN_ATTENTION, then with SDPBackend.FLASH_ATTENTION, `--passes` calls each after one untimed
warm-up call, every attention kernel (names matching fmha, sdpa, flash or cudnn) recorded. The
warm-up call's output is compared with a float32 reference on the same inputs (two heads of the first
batch): its max |error| is kept raw, for a test to judge. Writes DIR/cudnn_baseline.json (meta, rows: shape, backend, kernels with their
durations, check) and DIR/cudnn_logs.tar.gz. --backends cudnn leaves FA2 out. Shapes not started before
--deadline seconds are left out and named in meta.skipped.
"""

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import common  # noqa: E402
import ncu  # noqa: E402

METRICS = {"time_ns": ncu.NAMES["time_ns"]}
TOKENS, HIDDEN = 16384, 2048

CHILD = r'''
import json, sys, torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
n, d, causal, dtype, passes = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "causal", sys.argv[4], int(sys.argv[5])
backends = sys.argv[6].split(",")
dt = torch.bfloat16 if dtype == "bf16" else torch.float16
b, h = max(1, 16384 // n), 2048 // d
torch.manual_seed(0)
q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=dt) for _ in range(3))
ref = F.scaled_dot_product_attention(q[:1, :2].float(), k[:1, :2].float(), v[:1, :2].float(), is_causal=causal)
checks = {}
for name, backend in (("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION)):
    if name not in backends:
        continue
    with sdpa_kernel(backend):
        o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)  # untimed warm-up, and the check
        torch.cuda.synchronize()
        checks[name] = float((o[:1, :2].float() - ref).abs().max())
        for _ in range(passes):
            F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        torch.cuda.synchronize()
print("CHECKS " + json.dumps(checks))
'''


def shapes(dtypes):
    """(N, d, mask, dtype) of every row."""
    return [(n, d, mask, dtype) for dtype in dtypes for d in (64, 128) for mask in ("none", "causal")
            for n in (1024, 4096, 16384)]


def split_calls(launches, passes):
    """ncu's launches of one child as {backend: [kernels]}: cuDNN's (names with "cudnn"), FA2's (names
    with "flash_fwd"), each backend's warm-up call (its first of passes + 1) dropped; "other": the
    float32 reference's kernels (the check), kept apart."""
    out = {"cudnn": [], "flash": [], "other": []}
    for k in launches:
        out["cudnn" if "cudnn" in k["name"] else "flash" if "flash_fwd" in k["name"] else "other"].append(k)
    for b in ("cudnn", "flash"):
        out[b] = out[b][len(out[b]) // (passes + 1):]
    return out


def parse_shapes(text):
    """--shapes "fp16:64:causal:32768,..." -> [(N, d, mask, dtype)]; ValueError naming a bad entry."""
    out = []
    for item in text.split(","):
        f = item.split(":")
        if len(f) != 4 or f[0] not in ("fp16", "bf16") or f[1] not in ("64", "128") or f[2] not in ("none", "causal") \
                or not f[3].isdigit() or int(f[3]) < 1:
            raise ValueError(f"--shapes entry {item!r}: DTYPE:D:MASK:N with DTYPE fp16|bf16, D 64|128, MASK none|causal, N >= 1")
        out.append((int(f[3]), int(f[1]), f[2], f[0]))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--dtypes", default="fp16", help="comma-separated: fp16, bf16")
    ap.add_argument("--work", type=Path, default=Path("/tmp/flashlab-cudnn"))
    ap.add_argument("--backends", default="cudnn,flash", help="comma-separated: cudnn, flash (PyTorch's FA2)")
    ap.add_argument("--shapes", help="comma-separated DTYPE:D:MASK:N (default: shapes(--dtypes))")
    ap.add_argument("--deadline", type=float, default=1e9, help="seconds after which no shape starts")
    a = ap.parse_args()
    if not a.backends or any(x not in ("cudnn", "flash") for x in a.backends.split(",")):
        ap.error(f"--backends = {a.backends}: cudnn, flash or both, comma-separated")
    if a.passes < 1:
        ap.error(f"--passes = {a.passes}: at least 1")
    t0 = time.time()
    dtypes = a.dtypes.split(",")
    if not dtypes or any(x not in ("fp16", "bf16") for x in dtypes):
        ap.error(f"--dtypes = {a.dtypes}: fp16, bf16 or both, comma-separated")
    logs = a.work / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    a.out.mkdir(parents=True, exist_ok=True)
    child = a.work / "child.py"
    child.write_text(CHILD)
    cmd = ncu.command(METRICS, cache_control="all")
    doc = {"meta": common.metadata(("gpu", "driver", "torch", "ncu", "commit", "command", "ncu_flags", "date"),
                                   commit=a.commit, command="python3 scripts/gpu/cudnn_baseline.py " + " ".join(sys.argv[1:]),
                                   ncu_flags=" ".join(cmd[1:])),
           "rows": []}
    try:
        todo = parse_shapes(a.shapes) if a.shapes else shapes(dtypes)
    except ValueError as e:
        ap.error(str(e))
    doc["meta"]["skipped"] = []
    for n, d, mask, dtype in todo:
        if time.time() - t0 > a.deadline:
            doc["meta"]["skipped"].append(f"{dtype} d={d} {mask} N={n}")
            continue
        tag = f"n{n}_d{d}_{mask}_{dtype}"
        proc = ncu.run(cmd + ["--kernel-name", "regex:fmha|sdpa|flash|cudnn", sys.executable, str(child), str(n), str(d),
                              mask, dtype, str(a.passes), a.backends], logs / f"{tag}.csv")
        row = {"n": n, "d": d, "mask": mask, "dtype": dtype, "batch": max(1, TOKENS // n), "heads": HIDDEN // d,
               "passes": a.passes, "exit": proc.returncode}
        line = next((x for x in proc.stdout.splitlines() if x.startswith("CHECKS ")), None)
        row["max_abs_error"] = json.loads(line[len("CHECKS "):]) if line else None
        if proc.returncode == 0:
            row["kernels"] = split_calls(ncu.launches(proc.stdout, METRICS, strict=False), a.passes)
        print(tag, "exit", proc.returncode, {b: [round(k.get("time_ns", 0) / 1e3, 1) for k in v][:6]
                                             for b, v in row.get("kernels", {}).items()}, flush=True)
        doc["rows"].append(row)
        (a.out / "cudnn_baseline.json").write_text(json.dumps(doc, indent=1) + "\n")
    common.tar_folder(a.out / "cudnn_logs.tar.gz", logs)
    return 0 if all(r["exit"] == 0 for r in doc["rows"]) else 1


if __name__ == "__main__":
    sys.exit(main())
