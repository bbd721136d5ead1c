#!/usr/bin/env python3
"""Which part of a forward kernel decides how much of O leaves the L2 during its launch (issue 27's DRAM
written): three kernels at the same shapes on one card, then the traffic probe that changes one factor
at a time.

    python3 scripts/check/l2_writeback_kernels.py [--check] [--table]

Data (an H100; Nsight Compute, caches flushed before each launch; raw counters only):
- tests/data/gpu_timing/h100_footprint_2.json (scripts/gpu/timing.py --set footprint): the project's V2
  kernel (tiles 128 x 64 with 8 warps, 128 x 64 with 4 — FA2's own d 128 tile — and 64 x 64 with 4) and
  PyTorch's FA2, fp16 d 128 N 4096 B 2 at 1-8 heads, with the L2's fabric read sectors (lines brought
  from the far partition: the copies that make up the bytes held beyond Q, K, V and O);
- tests/data/gpu_v3/v3_l2_footprint_h100.json: the staged V3 kernel at the same shapes (no mask);
- tests/data/gpu_ceilings/h100_l2_writeback.json, when present (scripts/gpu/l2_writeback.py): V2's
  traffic without the math, with the walk's order, O's layout and the thread blocks per SM changed alone.
Measured: written / O = dram__bytes_write.sum / (B H N d x 2 bytes); fabric / O = 32 x
lts__t_sectors_srcunit_ltcfabric_op_read.sum / O.

--check asserts:
1. the bytes held do not tell the kernels apart: from 3 heads on, at each head count the largest fabric /
   O of the kernels is within 1.25x of the smallest;
2. the write-back does: at 3 and 4 heads (0.75-1.0 of the L2 held) FA2 and V3 each write at least 5x the
   share of O that every V2 tile writes;
3. (the probe, when present) at 4 heads, the factor the probe names changes written / O by at least
   0.05 of O with the other two fixed, in every setting of those two — printed, with the factors that
   change it less.
--table prints the Markdown section docs/model.md quotes. Exit 1 when a claim fails, 2 when data are missing.
"""

import itertools
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOOTPRINT = ROOT / "tests" / "data" / "gpu_timing" / "h100_footprint_2.json"
V3 = ROOT / "tests" / "data" / "gpu_v3" / "v3_l2_footprint_h100.json"
PROBE = ROOT / "tests" / "data" / "gpu_ceilings" / "h100_l2_writeback.json"
D, N, BATCH = 128, 4096, 2
HELD_SPREAD = 1.25
WRITE_RATIO = 5.0
FACTOR_MIN = 0.05
SECTOR = 32


def flag(flags, name):
    return re.search(rf"--{name} (\S+)", flags).group(1)


def kernels():
    """{kernel label: {heads: (fabric / O, written / O)}} at fp16 d 128 N 4096 B 2, no mask."""
    out = {}
    doc = json.loads(FOOTPRINT.read_text())
    for r in doc["runs"]:
        f = r["flags"]
        if (int(flag(f, "d")), int(flag(f, "nq")), int(flag(f, "batch")), flag(f, "mask")) != (D, N, BATCH, "none"):
            continue
        heads = int(flag(f, "heads"))
        o = BATCH * heads * N * D * 2
        label = f"V2 {flag(f, 'br')} x {flag(f, 'bc')}, {flag(f, 'warps')} warps"
        out.setdefault(label, {})[heads] = (SECTOR * r["l2_fabric_rd"] / o, r["dram_write"] / o)
    for r in doc["torch"]:
        if (r["d"], r["n"], r["batch"], r["causal"]) == (D, N, BATCH, False) and len(r["kernels"]) == 1:
            o = BATCH * r["heads"] * N * D * 2
            out.setdefault("FA2 (PyTorch)", {})[r["heads"]] = (SECTOR * r["l2_fabric_rd"] / o, r["dram_write"] / o)
    for r in json.loads(V3.read_text())["rows"]:
        k, run = (r.get("kernels") or [{}])[0], r.get("run") or {}
        if run.get("check", {}).get("pass") and (r["d"], r["n"], r["batch"], r["mask"]) == (D, N, BATCH, "none"):
            o = BATCH * r["heads"] * N * D * 2
            out.setdefault("V3 (staged)", {})[r["heads"]] = (SECTOR * k["l2_fabric_rd"] / o, k["dram_wr"] / o)
    return out


def probe():
    """The probe's rows: {(layout, walk, blocks per SM, heads): written / O}, or None."""
    if not PROBE.exists():
        return None
    return {(r["layout"], r["walk"], r["blocks_per_sm"], r["heads"]): r["dram_wr"] / r["o_bytes"]
            for r in json.loads(PROBE.read_text())["rows"]}


def factor_effects(rows, heads):
    """{factor: the smallest |change of written / O| when that factor alone changes, over the settings
    of the other two} at `heads`."""
    values = {"layout": ("bhsd", "bshd"), "walk": ("fwd", "bwd"),
              "blocks": tuple(sorted({k[2] for k in rows if k[3] == heads}))}
    out = {}
    for i, name in enumerate(values):
        others = [v for j, v in enumerate(values.values()) if j != i]
        changes = []
        for rest in itertools.product(*others):
            keys = []
            for v in values[name]:
                key = list(rest)
                key.insert(i, v)
                keys.append((*key, heads))
            if all(k in rows for k in keys):
                changes.append(abs(rows[keys[1]] - rows[keys[0]]))
        out[name] = min(changes) if changes else None
    return out


def claims(ks, pr):
    bad = []
    for heads in sorted({h for v in ks.values() for h in v if h >= 3}):
        fab = [v[heads][0] for v in ks.values() if heads in v]
        if max(fab) > HELD_SPREAD * min(fab):
            bad.append(f"{heads} heads: fabric / O from {min(fab):.2f} to {max(fab):.2f}, more than {HELD_SPREAD}x apart")
    for heads in (3, 4):
        v2 = max(v[heads][1] for k, v in ks.items() if k.startswith("V2") and heads in v)
        for label in ("FA2 (PyTorch)", "V3 (staged)"):
            w = ks.get(label, {}).get(heads)
            if w is None or w[1] < WRITE_RATIO * v2:
                bad.append(f"{heads} heads: {label} writes {w and w[1]:.3f} of O, not {WRITE_RATIO}x V2's {v2:.3f}")
    if pr is not None:
        effects = factor_effects(pr, 4)
        if not any(e is not None and e >= FACTOR_MIN for e in effects.values()):
            bad.append(f"probe at 4 heads: no factor alone changes written / O by {FACTOR_MIN} of O: {effects}")
    return bad


def section(ks, pr):
    heads = sorted({h for v in ks.values() for h in v})
    out = ["| kernel (H100, fp16 d 128 N 4096 B 2) | " + " | ".join(f"H {h}" for h in heads) + " |",
           "|---|" + "---|" * len(heads)]
    for label in sorted(ks):
        cells = [f"{ks[label][h][1]:.3f} ({ks[label][h][0]:.2f})" if h in ks[label] else "" for h in heads]
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    out.append("\nEach cell: DRAM written / O (fabric read / O).")
    if pr is not None:
        out += ["", "| probe: layout, walk, blocks per SM | " + " | ".join(
            f"H {h}" for h in sorted({k[3] for k in pr})) + " |", "|---|" + "---|" * len({k[3] for k in pr})]
        for key in sorted({k[:3] for k in pr}):
            out.append(f"| {', '.join(str(x) for x in key)} | " + " | ".join(
                f"{pr[(*key, h)]:.3f}" if (*key, h) in pr else "" for h in sorted({k[3] for k in pr})) + " |")
        effects = factor_effects(pr, 4)
        out.append("\nAt 4 heads, the smallest change of written / O when one factor alone changes: " + ", ".join(
            f"{k} {v:.3f}" for k, v in effects.items() if v is not None) + ".")
    return out


def main(argv):
    if not FOOTPRINT.exists() or not V3.exists():
        print(f"l2_writeback_kernels: {FOOTPRINT.name} or {V3.name} is missing", file=sys.stderr)
        return 2
    ks, pr = kernels(), probe()
    if "--table" in argv:
        print("\n".join(section(ks, pr)))
    if "--check" in argv:
        bad = claims(ks, pr)
        for b in bad:
            print("l2_writeback_kernels:", b)
        print(f"l2_writeback_kernels: {'FAILED' if bad else 'all claims hold'} ({len(ks)} kernels"
              + (f", probe {len(pr)} launches" if pr else ", no probe data") + ")")
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
