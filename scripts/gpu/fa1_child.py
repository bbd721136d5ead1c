#!/usr/bin/env python3
"""Runs FlashAttention-1's forward (the module scripts/gpu/fa1_build.py built) on a list of shapes;
started by scripts/gpu/fa1_compare.py, under Nsight Compute for the timing.

    python3 scripts/gpu/fa1_child.py --ext BUILD --shapes shapes.json --mode check|time [--out check.json]

shapes.json: a list of {"batch", "heads", "n", "d", "mask"} (mask "none" or "causal": FA1's causal,
top-left, which is bottom-right too since N_q = N_k). Each shape's Q, K, V are fp16 N(0, 1) drawn from a
generator seeded by the shape's index, packed as FA1 takes them: (batch * N, heads, d) with cu_seqlens;
softmax scale 1/sqrt(d), no dropout, num_splits = 0 (FA1's own heuristic), as flash_attn_interface calls it.

--mode time: one call per shape, nothing else between the calls on the GPU but the allocations (the
parent profiles the fmha_fwd kernels only).
--mode check: O filled with NaN before the call, then (raw figures, the parent's CI test judges them):
- `finite`: every element of O was written and finite;
- per checked head (the first and the last (batch, head)): O against float64 softmax(Q K^T / sqrt(d)) V
  (`rel_fro_O` = ||O - O_64||_F / ||O_64||_F, `max_abs_O`) and FA1's log-sum-exp L against float64
  (`max_abs_L`);
- all of O against PyTorch's SDPA (flash backend: FA2) on the same fp16 inputs (`sdpa_rel_fro`, `sdpa_max_abs`).
"""

import argparse
import json
import math
import sys


def inputs(torch, shape, index):
    g = torch.Generator(device="cuda").manual_seed(1000 + index)
    b, h, n, d = shape["batch"], shape["heads"], shape["n"], shape["d"]
    q, k, v = (torch.randn(b * n, h, d, device="cuda", dtype=torch.float16, generator=g) for _ in range(3))
    cu = torch.arange(0, (b + 1) * n, n, device="cuda", dtype=torch.int32)
    return q, k, v, cu


def call(fa1, q, k, v, out, cu, shape):
    n, d = shape["n"], shape["d"]
    # fwd(q, k, v, out, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, dropout_p, softmax_scale,
    #     zero_tensors, causal, return_softmax, num_splits, generator): FA1 v1.0.9's fmha_api.cpp mha_fwd
    lse = fa1.fwd(q, k, v, out, cu, cu, n, n, 0.0, 1.0 / math.sqrt(d), False, shape["mask"] == "causal", False, 0, None)[0]
    return lse


def check(torch, fa1, shape, index):
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    b, h, n, d = shape["batch"], shape["heads"], shape["n"], shape["d"]
    causal = shape["mask"] == "causal"
    q, k, v, cu = inputs(torch, shape, index)
    out = torch.full_like(q, float("nan"))
    lse = call(fa1, q, k, v, out, cu, shape)
    torch.cuda.synchronize()
    rec = {"shape": shape, "finite": bool(torch.isfinite(out).all()), "lse_shape": list(lse.shape), "heads": []}
    for bi, hi in sorted({(0, 0), (b - 1, h - 1)}):
        rows = slice(bi * n, (bi + 1) * n)
        qh, kh, vh = (t[rows, hi].double() for t in (q, k, v))
        s = (qh @ kh.T) / math.sqrt(d)
        if causal:
            s.masked_fill_(torch.ones(n, n, dtype=torch.bool, device="cuda").triu(1), float("-inf"))
        l64 = torch.logsumexp(s, dim=1)
        o64 = torch.exp(s - l64[:, None]) @ vh
        del s
        o = out[rows, hi].double()
        rec["heads"].append({"batch": bi, "head": hi,
                             "rel_fro_O": float(torch.linalg.norm(o - o64) / torch.linalg.norm(o64)),
                             "max_abs_O": float((o - o64).abs().max()),
                             "max_abs_L": float((lse[bi, hi, :n].double() - l64).abs().max())})
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        ref = F.scaled_dot_product_attention(*(t.view(b, n, h, d).transpose(1, 2) for t in (q, k, v)), is_causal=causal)
    ref = ref.transpose(1, 2).reshape(b * n, h, d).float()
    diff = out.float() - ref
    rec["sdpa_rel_fro"] = float(torch.linalg.norm(diff) / torch.linalg.norm(ref))
    rec["sdpa_max_abs"] = float(diff.abs().max())
    return rec


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ext", required=True, help="the folder fa1_build.py built the module into")
    ap.add_argument("--shapes", required=True)
    ap.add_argument("--mode", required=True, choices=["check", "time"])
    ap.add_argument("--out")
    args = ap.parse_args()
    import torch
    sys.path.insert(0, args.ext)
    import flash_attn_cuda as fa1  # noqa: E402 - FA1's module, built on this machine
    shapes = json.loads(open(args.shapes).read())
    records = []
    for index, shape in enumerate(shapes):
        if args.mode == "check":
            records.append(check(torch, fa1, shape, index))
            print(json.dumps(records[-1]), flush=True)
        else:
            q, k, v, cu = inputs(torch, shape, index)
            out = torch.empty_like(q)
            call(fa1, q, k, v, out, cu, shape)
            torch.cuda.synchronize()
        torch.cuda.empty_cache()
    if args.out:
        open(args.out, "w").write(json.dumps(records, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
