"""What PyTorch's FlashAttention-2 launches, measured: Nsight Compute on scaled_dot_product_attention.

For each configuration of CONFIGS this script calls PyTorch's flash backend once (fp16, inputs of
shape (B, H, N, d) as SDPA takes them; grouped K/V heads through enable_gqa, or FA2's own entry
point when SDPA refuses) under one `ncu` process, and records every flash_fwd* kernel it launches:
name, grid, block, global load and store bytes (the requests, at sector granularity), DRAM bytes
and duration. `flashlab count --kernel fa2` must reproduce the launches, the grids and the bytes:
tests/sim/executor/fa2_launches_test.cpp reads the JSON this writes.

    python3 scripts/gpu/fa2_launches.py --out DIR --commit HASH     # on the GPU machine
writes DIR/fa2_launches.json (metadata + one row per configuration) and DIR/ncu.log.
"""

import argparse
import json
import pathlib
import sys

# (batch, heads, kv_heads, n_q, n_k, d, causal). causal is FA2's (bottom-right) mask.
CONFIGS = [
    # the standard kernel (grid >= 0.8 x 2 x SMs thread blocks of 64 rows)
    (1, 16, 16, 4096, 4096, 64, False),
    (1, 16, 16, 4096, 4096, 64, True),
    (1, 16, 16, 4096, 4096, 128, False),
    (2, 32, 8, 2048, 2048, 128, True),    # GQA prefill
    # split-KV (small grids)
    (1, 8, 8, 1000, 1000, 64, False),
    (1, 8, 8, 1000, 1000, 64, True),
    (1, 2, 2, 777, 777, 32, True),
    (1, 4, 4, 1024, 1024, 128, False),
    (1, 8, 2, 512, 512, 64, False),       # GQA, split
    (1, 8, 8, 16, 4096, 64, True),        # a prefill chunk against a cache: bottom-right causal
    (1, 3, 3, 200, 3000, 96, False),      # d = 96: FA2's 64 x 128 split tile, ragged everything
    # decode: one query row against a long cache
    (1, 32, 32, 1, 8192, 128, True),      # no GQA: causal dropped, 32 heads x 1 block
    (1, 32, 8, 1, 8192, 128, True),       # Llama-3-8B: 4 query heads per K/V head folded into rows
    (4, 32, 8, 1, 4096, 128, True),
    (1, 8, 1, 1, 16384, 64, False),       # MQA
]

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import common  # noqa: E402
import ncu  # noqa: E402

METRICS = ncu.METRICS  # ld, st, dram_rd, dram_wr (bytes), time_ns


def run_configs():
    """Child mode (under ncu): one flash call per configuration, in CONFIGS order."""
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    torch.manual_seed(0)
    entry = []
    for (b, h, hk, nq, nk, d, causal) in CONFIGS:
        q = torch.randn(b, h, nq, d, device="cuda", dtype=torch.float16)
        k = torch.randn(b, hk, nk, d, device="cuda", dtype=torch.float16)
        v = torch.randn(b, hk, nk, d, device="cuda", dtype=torch.float16)
        torch.cuda.synchronize()
        # SDPA's is_causal is top-left; FA2's causal (and its entry point) bottom-right: with
        # N_q != N_k or grouped heads, call the flash backend's entry point, which SDPA calls
        used = "sdpa"
        if nq == nk and hk == h:
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        else:
            used = "aten._flash_attention_forward"
            torch.ops.aten._flash_attention_forward(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                                    None, None, nq, nk, 0.0, causal, False)
        torch.cuda.synchronize()
        entry.append(used)
    print("ENTRY " + json.dumps(entry), flush=True)


def metadata(commit, cmd):
    return common.metadata(("gpu", "driver", "torch", "ncu", "commit", "command", "ncu_flags", "date"), missing="",
                           commit=commit, command=cmd,
                           ncu_flags="--clock-control none (caches flushed between kernels: ncu's default)")


def dims(text):
    """'(16, 2, 8)' -> [16, 2, 8]"""
    return [int(x) for x in text.strip("() ").split(",")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=pathlib.Path)
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        run_configs()
        return
    args.out.mkdir(parents=True, exist_ok=True)
    proc = ncu.run(ncu.command(METRICS) + ["--kernel-name", "regex:flash_fwd", sys.executable,
                                           str(pathlib.Path(__file__).resolve()), "--child"], args.out / "ncu.log")
    if proc.returncode != 0:
        raise SystemExit(f"ncu exited with {proc.returncode}; see ncu.log")
    entry = json.loads(next(l for l in proc.stdout.splitlines() if l.startswith("ENTRY "))[6:])
    # each call launches flash_fwd_kernel, or flash_fwd_splitkv_kernel then its combine kernel
    try:
        groups = ncu.flash_calls(["forward"] * len(CONFIGS), ncu.launches(proc.stdout, METRICS))
    except RuntimeError as e:
        raise SystemExit(f"ncu's flash launches do not match the configurations: {e}")
    rows = []
    for n, ((b, h, hk, nq, nk, d, causal), group) in enumerate(zip(CONFIGS, groups)):
        launches = [{"kernel": x["name"], "grid": dims(x["grid"]), "block": dims(x["block"])} |
                    {k: int(x[k]) for k in METRICS if k in x} for x in group]
        rows.append({"batch": b, "heads": h, "kv_heads": hk, "n_q": nq, "n_k": nk, "d": d,
                     "mask": "causal-br" if causal else "none", "dtype": "fp16", "entry": entry[n], "launches": launches})
    common.write_launch_rows(
        args.out / "fa2_launches.json",
        metadata(args.commit, "python3 scripts/gpu/fa2_launches.py --out DIR --commit HASH"), METRICS, rows,
        ("batch", "heads", "kv_heads", "n_q", "n_k", "d", "mask", "entry"),
        lambda x: (x["kernel"][:90], x["grid"], x["block"], *(x.get(k) for k in ("ld", "st", "dram_rd", "time_ns"))))


if __name__ == "__main__":
    main()
