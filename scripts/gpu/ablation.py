#!/usr/bin/env python3
"""The measured ablation from V1 to V2 (issue 10 part 4, docs/validation/ablation_h200.md), and V2
against PyTorch's FA2 in the same run (issue 10 part 3).

    python3 scripts/gpu/ablation.py --bin build-gpu/kernels/flashlab-gpu --out DIR --commit HASH

1. Ablation: for N = 1024, 4096, 16384, d = 64 and 128, batch x heads = 16 (1 x 16) and 256
   (16 x 16), no mask and top-left causal, fp16, this project's kernels time (CUDA events around
   back-to-back launches of the plain build, median) every switch alone from V1 and the path from V1
   to V2 one switch at a time (VARIANTS below; the same kernels whose events the variant grid checks
   against the simulator: scripts/gpu/split_validate.py --grid variant). Tiles: split-K warps on
   V1's (64 x 64 x 4 at d = 64, 32 x 64 x 4 at d = 128), split-Q warps on 64 x 64 x 4, and V2 on its
   tile by the rule below as well ("v2-best").
2. FA2: V2 on each compiled tile (the rule's tile and the fastest measured) and PyTorch's flash backend (scaled_dot_product_attention, CUDA
   events per call, median) on fp16 and bf16, batch 4, 16 heads, N = 4096, d = 64 and 128, no mask
   and causal, and batch 1, 16 heads, N = 16384, d = 128 causal.
Writes DIR/ablation.json (metadata and one row per run: its flashlab-gpu flags, which the CI test
replays through the simulator's time model) and prints the tables.
"""

import argparse
import json
import pathlib
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import common  # noqa: E402
import cuda_events  # noqa: E402
import grid  # noqa: E402
from grid import shape_flags  # noqa: E402

# key -> (what it adds, switches from --algo v1); the path is v1, order, order+grid, ..., v2.
VARIANTS = {
    "v1": ("V1 (FA1 Alg. 1)", ""),
    "order": ("V1 + Q outer loop", "--order q-outer"),
    "grid": ("V1 + thread block per Q block", "--grid qblock"),
    "rescale": ("V1 + delayed rescale", "--rescale delayed"),
    "split": ("V1 + split-Q warps", "--split split-q"),
    "skip": ("V1 + block skip", "--block-skip on"),
    "path-grid": ("V1 + order + grid", "--order q-outer --grid qblock"),
    "path-rescale": ("V1 + order + grid + rescale", "--order q-outer --grid qblock --rescale delayed"),
    "path-split": ("V1 + order + grid + rescale + split-Q",
                   "--order q-outer --grid qblock --rescale delayed --split split-q"),
    "v2": ("V2 (FA2 Alg. 1) = path + block skip",
           "--order q-outer --grid qblock --rescale delayed --split split-q --block-skip on"),
}
PATH = ["v1", "order", "path-grid", "path-rescale", "path-split", "v2"]
SINGLE = ["v1", "order", "grid", "rescale", "split", "skip"]
NS = [1024, 4096, 16384]
DS = [64, 128]
BATCHES = [1, 16]  # x 16 heads: batch x heads = 16 and 256
MASKS = ["none", "causal"]


def rule_shape(d):
    """V2's tile by the documented rule (docs/model.md "The tile rule"): FA2's forward launch for its
    head dim (flash_fwd_launch_template.h: 128 x 128 with 4 warps at d <= 64, 128 x 64 with 4 at
    d = 128), which is also the simulator's default tile (sim/src/config/config.cpp default_blocks,
    4 warps by default): the same flags replayed through the simulator give the same tile."""
    return "128x128x4" if d <= 64 else "128x64x4"


FA2_CASES = [(4, 4096, d, mask, dtype) for dtype in ("fp16", "bf16") for d in (64, 128) for mask in ("none", "causal")]
FA2_CASES += [(1, 16384, 128, "causal", "fp16"), (1, 16384, 128, "causal", "bf16")]


def tile(key, d):
    """Split-Q warps on the variants' tile (api.hpp kVariantShape); split-K warps on V1's tile at d
    (grid.PERF_V1_SHAPE, which is also api.hpp row_q_outer_tile, the Q outer order's split-K tile)."""
    if "split-q" in VARIANTS[key][1]:
        return shape_flags("64x64x4")
    return shape_flags(grid.PERF_V1_SHAPE[d])


def slow(key, n, batch):
    """Grid head at long N: one thread block per head, hundreds of ms per launch."""
    return "grid" not in VARIANTS[key][1] and "qblock" not in VARIANTS[key][1] and n >= 4096


def run_lines(binary, lines, timeout):
    """flashlab-gpu --configs over `lines` in one process (inputs drawn once per shape); returns the
    JSON list, or raises with flashlab-gpu's error."""
    with tempfile.TemporaryDirectory() as tmp:
        res, p = common.run_configs(binary, lines, pathlib.Path(tmp) / "lines.txt", pathlib.Path(tmp) / "r.json",
                                    timeout=timeout)
        if p.returncode != 0:
            raise RuntimeError((p.stderr or p.stdout)[-1500:])
        return res


def ablation_rows(binary):
    rows, lines = [], []
    for n in NS:
        for d in DS:
            for batch in BATCHES:
                for mask in MASKS:
                    for key in list(VARIANTS) + ["v2-best"]:
                        if key == "split" and d == 128:
                            continue  # split-Q warps with O_i through HBM: compiled on 64 x 64 x 4 at d <= 64 only
                        switches = VARIANTS["v2"][1] if key == "v2-best" else VARIANTS[key][1]
                        shape = shape_flags(rule_shape(d)) if key == "v2-best" else tile(key, d)
                        reps = "--warmup 1 --reps 3" if key != "v2-best" and slow(key, n, batch) else "--warmup 3 --reps 10"
                        line = (f"--algo v1 {switches} {shape} --batch {batch} --heads 16 --seq {n} --d {d} "
                                f"--mask {mask} --dtype fp16 --no-events --no-check --time {reps}")
                        rows.append({"key": key, "n": n, "d": d, "batch": batch, "heads": 16, "mask": mask,
                                     "flags": line})
                        lines.append(line)
    results = run_lines(binary, lines, timeout=560)
    for row, r in zip(rows, results):
        row["median_ms"] = r["timing"]["median_ms"]
        row["tflops"] = r["timing"].get("tflops")
    return rows


def time_torch(batch, n, d, mask, dtype):
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    t = torch.float16 if dtype == "fp16" else torch.bfloat16
    q, k, v = (torch.randn(batch, 16, n, d, device="cuda", dtype=t) for _ in range(3))

    def call():
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            F.scaled_dot_product_attention(q, k, v, is_causal=mask == "causal")
    return cuda_events.median_ms(call, warmup=5, reps=30)


def fa2_rows(binary):
    rows = []
    for batch, n, d, mask, dtype in FA2_CASES:
        lines = []
        shapes = grid.PERF_V2_SHAPES[d]
        for shape in shapes:
            lines.append(f"--algo v2 {shape_flags(shape)} --batch {batch} --heads 16 --seq {n} --d {d} "
                         f"--mask {mask} --dtype {dtype} --no-events --no-check --time --warmup 5 --reps 20")
        ours = run_lines(binary, lines, timeout=300)
        torch_ms = time_torch(batch, n, d, mask, dtype)
        flops = 4.0 * batch * 16 * n * n * d * (0.5 if mask == "causal" else 1.0)  # causal: half the pairs (+ diagonal)
        by_shape = {s: r["timing"]["median_ms"] for s, r in zip(shapes, ours)}
        best = min(by_shape, key=by_shape.get)
        rule = rule_shape(d)
        rows.append({"batch": batch, "heads": 16, "n": n, "d": d, "mask": mask, "dtype": dtype, "v2_ms": by_shape,
                     "rule_shape": rule, "rule_ms": by_shape[rule],
                     "best_shape": best, "best_ms": by_shape[best], "torch_ms": torch_ms,
                     "v2_tflops": ours[shapes.index(rule)]["timing"]["tflops"],
                     "torch_tflops_approx": flops / (torch_ms * 1e-3) / 1e12,
                     "ratio": torch_ms / by_shape[rule], "best_ratio": torch_ms / by_shape[best]})
        print(f"FA2 {dtype} b{batch} N={n} d={d} {mask}: V2 on the rule's {rule} {by_shape[rule]:.3f} ms (fastest {best} "
              f"{by_shape[best]:.3f}), torch {torch_ms:.3f} ms, V2/torch speed {torch_ms / by_shape[rule]:.2f}", flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--out", type=pathlib.Path, required=True)
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--part", choices=["all", "ablation", "fa2"], default="all")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    meta = common.metadata(("gpu", "driver", "commit", "command", "date"), commit=a.commit,
                           command=" ".join(["python3", "scripts/gpu/ablation.py"] + sys.argv[1:]))
    doc = {"metadata": meta, "variants": {k: v[0] for k, v in VARIANTS.items()}, "path": PATH, "single": SINGLE}
    if a.part in ("all", "ablation"):
        doc["ablation"] = ablation_rows(a.bin)
        for r in doc["ablation"]:
            print(f"{r['key']:>13} N={r['n']:>5} d={r['d']:>3} bh={r['batch'] * 16:>3} {r['mask']:>6}: "
                  f"{r['median_ms']:10.3f} ms {r['tflops'] or 0:7.1f} TFLOP/s", flush=True)
    if a.part in ("all", "fa2"):
        import torch
        meta["torch"] = torch.__version__
        doc["fa2"] = fa2_rows(a.bin)
    (a.out / "ablation.json").write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
