#!/usr/bin/env python3
"""The instructions one consumer warp of the staged V3 kernel issues per K/V step: the body of its K/V
loop in the SASS of the compiled instances (cuobjdump -sass of variants_fa3.o and
variants_ablation.o), as scripts/gpu/sass_loops.py reads V1's and V2's tile loops.

    nvcc -gencode=arch=compute_90a,code=sm_90a -O3 -std=c++17 -c scripts/gpu/v3_kernel/variants_fa3.cu -o fa3.o
    cuobjdump -sass fa3.o > fa3.sass        # (the GPU machine: cuobjdump is not installed here)
    python3 scripts/gpu/v3_kernel/sass_steps.py --meta META.json fa3.sass ablation.sass > tests/data/gpu_v3/v3_sass_steps.json

The K/V loop is the innermost loop (a backward branch and its target) that holds d/16 + B_c/16 HGMMA
instructions, GEMM0's and GEMM1's wgmmas of one step (with intra-warpgroup overlap: GEMM0 of block j
and GEMM1 of block j + 1). `loop`: its whole body, once per iteration (a step whose tile needs the
mask); `full`: less the largest region inside it that a forward branch skips and that holds no HGMMA,
barrier (SYNCS, BAR) or TMA (UTMA) instruction: a full tile's. `classes` counts the full tile's
opcodes by their first word (MUFU, FFMA, ...). Only fp16 instances (bf16's loops are the same
length). Instance template arguments: scripts/gpu/v3_kernel/v3_forward.cuh Cfg (bf16, d, B_r, B_c,
stages, causal, warp specialization, ping-pong, intra-warpgroup overlap, scheduler 0 grid / 1 static /
2 dynamic).
"""

import argparse
import collections
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from sass_loops import functions, loops, opcode, skipped_region  # noqa: E402

CFG = re.compile(r"CfgILb(\d)ELi(\d+)ELi(\d+)ELi(\d+)ELi(\d)ELb(\d)ELb(\d)ELb(\d)ELb(\d)ELi(\d)")
KEEP = ("HGMMA", "SYNCS", "BAR", "UTMA")  # what a skipped mask region never holds


def kv_loop(body, hgmma):
    """(lo, hi, inside) of the smallest loop holding exactly `hgmma` HGMMA instructions, or None."""
    found = [(hi - lo, lo, hi, inside) for lo, hi, inside in loops(body)
             if sum(opcode(y).startswith("HGMMA") for _, y in inside) == hgmma]
    return min(found, key=lambda f: f[0])[1:] if found else None


def digest(path):
    rows = []
    for name, body in functions(path):
        m = CFG.search(name)
        if not m:
            continue
        bf16, d, br, bc, stages, causal, ws, pp, intra, sched = (int(x) for x in m.groups())
        if bf16:
            continue
        loop = kv_loop(body, d // 16 + bc // 16)
        if loop is None:
            raise SystemExit(f"{path}: {name}: no K/V loop with {d // 16 + bc // 16} HGMMA")
        _, hi, inside = loop
        skipped = skipped_region(inside, hi, lambda op: op.startswith(KEEP))
        full = [y for x, y in inside if x not in skipped]
        rows.append({"d": d, "b_r": br, "b_c": bc, "stages": stages, "causal": bool(causal), "warp_specialize": bool(ws),
                     "pingpong": bool(pp), "intra_overlap": bool(intra), "scheduler": ["grid", "static", "dynamic"][sched],
                     "loop": len(inside), "full": len(full),
                     "classes": dict(collections.Counter(opcode(y).split(".")[0] for y in full).most_common())})
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sass", nargs="+", help="cuobjdump -sass outputs (.gz allowed)")
    ap.add_argument("--meta", help="a JSON file of the run's metadata (gpu, commit, command, ...)")
    a = ap.parse_args()
    rows = []
    for p in a.sass:
        for r in digest(p):
            if r not in rows:
                rows.append(r)
    rows.sort(key=lambda r: (r["d"], r["b_r"], r["b_c"], r["causal"], r["stages"], not r["warp_specialize"],
                             not r["pingpong"], not r["intra_overlap"], r["scheduler"]))
    meta = json.loads(Path(a.meta).read_text()) if a.meta else {}
    json.dump({"meta": meta, "rows": rows}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
