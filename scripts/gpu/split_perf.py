"""Split-KV's speed on the GPU: this project's split kernels against the same V2 unsplit and against
PyTorch's FA2 on the calls where FA2 itself splits (small grids, prefill chunks, decoding).

    python3 scripts/gpu/split_perf.py --bin build-gpu/kernels/flashlab-gpu --out DIR --commit HASH

For each configuration of CONFIGS (fp16), in one script so that the ratios share a machine state:
  - flashlab split: flashlab-gpu --kernel fa2 (FA2's split count and tile; a decode step's grouped
    heads folded into rows, as FA2 runs it), --time (CUDA events around back-to-back launches of the
    plain build: the split launch and the combine, median of --reps);
  - flashlab unsplit: the same problem with --splits 1 and a 64 x 128 tile (one thread block per
    (batch, head, Q block): the parallelism V2 has without a split);
  - PyTorch: the flash backend on the same shape (scaled_dot_product_attention, or its entry point
    aten._flash_attention_forward for grouped heads and N_q != N_k, whose causal mask is
    bottom-right), CUDA events per call, median.
Then the kernels alone, as tests/data/pytorch_fa2/fa2_launches.json measured PyTorch's: each split
configuration's two launches under Nsight Compute (--clock-control none, L2 flushed before each
kernel), gpu__time_duration per kernel ("ncu" in each row). PyTorch's per-call time above includes
its host work (the call, the allocation of the fp32 partial results); the ncu durations do not.
Writes DIR/split_perf.json (metadata, one row per configuration) and prints a table.
"""

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
import types

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import common  # noqa: E402
import cuda_events  # noqa: E402
import ncu  # noqa: E402

# (batch, heads, kv_heads, n_q, n_k, d, causal)
CONFIGS = [
    (1, 8, 8, 1000, 1000, 64, False),
    (1, 8, 8, 1000, 1000, 64, True),
    (1, 4, 4, 1024, 1024, 128, False),
    (1, 8, 2, 512, 512, 64, False),
    (1, 8, 8, 16, 4096, 64, True),
    (1, 32, 32, 1, 8192, 128, True),
    (1, 32, 8, 1, 8192, 128, True),
    (4, 32, 8, 1, 4096, 128, True),
    (1, 8, 1, 1, 16384, 64, False),
    (8, 32, 8, 1, 32768, 128, True),
]
REPS = 50


def flags(b, h, hk, nq, nk, d, causal):
    return (f"--batch {b} --heads {h} --kv-heads {hk} --nq {nq} --nk {nk} --d {d} "
            f"--mask {'causal-br' if causal else 'none'} --dtype fp16")


def run_ours(binary, line):
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "r.json"
        cmd = [binary] + line.split() + ["--no-events", "--no-check", "--time", "--reps", str(REPS), "--json", str(out)]
        p = common.sh(cmd)
        if p.returncode != 0:
            return {"error": (p.stderr or p.stdout).strip()[-400:], "command": " ".join(cmd)}
        r = json.loads(out.read_text())[0]
        return {"median_ms": r["timing"]["median_ms"], "config": r.get("config"), "command": " ".join(cmd)}


def time_torch(b, h, hk, nq, nk, d, causal):
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    q = torch.randn(b, h, nq, d, device="cuda", dtype=torch.float16)
    k = torch.randn(b, hk, nk, d, device="cuda", dtype=torch.float16)
    v = torch.randn(b, hk, nk, d, device="cuda", dtype=torch.float16)
    if nq == nk and hk == h:
        def call():
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    else:
        qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)

        def call():
            torch.ops.aten._flash_attention_forward(qt, kt, vt, None, None, nq, nk, 0.0, causal, False)
    return cuda_events.median_ms(call, warmup=5, reps=REPS)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--out", type=pathlib.Path, required=True)
    ap.add_argument("--commit", default="unknown")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    import torch
    meta = common.metadata(("gpu", "driver", "torch", "commit", "reps", "command", "date"), torch=torch.__version__,
                           commit=args.commit, reps=REPS,
                           command="python3 scripts/gpu/split_perf.py --bin build-gpu/kernels/flashlab-gpu --out DIR --commit HASH")
    rows = []
    print(f"{'config':58} {'split ms':>9} {'unsplit':>9} {'torch':>9} {'unsplit/split':>13} {'torch/split':>11}")
    for c in CONFIGS:
        line = flags(*c)
        split = run_ours(args.bin, line + " --kernel fa2")
        unsplit = run_ours(args.bin, line + " --kernel fa2 --splits 1 --br 64 --bc 128")
        torch_ms = time_torch(*c)
        row = {"batch": c[0], "heads": c[1], "kv_heads": c[2], "n_q": c[3], "n_k": c[4], "d": c[5],
               "mask": "causal-br" if c[6] else "none", "flashlab_split": split, "flashlab_unsplit": unsplit,
               "torch_ms": torch_ms}
        rows.append(row)
        s, u = split.get("median_ms"), unsplit.get("median_ms")
        print(f"{line:58} {s if s else float('nan'):9.4f} {u if u else float('nan'):9.4f} {torch_ms:9.4f} "
              f"{(u / s) if s and u else float('nan'):13.2f} {(torch_ms / s) if s else float('nan'):11.2f}")
        for name, r in (("split", split), ("unsplit", unsplit)):
            if "error" in r:
                print(f"    {name}: {r['error']}")
    # the kernels alone under Nsight Compute: every row splits under --kernel fa2 (two launches)
    grid = [types.SimpleNamespace(flags=flags(*c) + " --kernel fa2") for c in CONFIGS]
    try:
        prof = ncu.profile(args.bin, grid, args.out, args.out / "ncu.log", kernels=[2] * len(grid), per_kernel=True)
        for row, p in zip(rows, prof):
            row["ncu"] = [{"name": l["name"][:40], "time_ns": l["time_ns"], "ld": l["ld"], "st": l["st"]} for l in p["launches"]]
            print(f"{row['n_q']:>5} {row['n_k']:>6} d={row['d']}: kernels " +
                  " + ".join(f"{l['time_ns'] / 1e3:.1f}" for l in row["ncu"]) + " us")
    except (RuntimeError, subprocess.SubprocessError) as e:
        print(f"ncu: {e}")
    (args.out / "split_perf.json").write_text(json.dumps({"metadata": meta, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
