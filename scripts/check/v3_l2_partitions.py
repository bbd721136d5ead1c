#!/usr/bin/env python3
"""V3's DRAM writes and the H200's two L2 partitions, read from the staged kernel's Nsight Compute
counters (issue 27: fa3 at d 128 N 4096 writes 1.2 MB of O to DRAM during the launch, where the
simulator's fully associative LRU alone wrote none; its early write-back, v3_l2_writeback.py, came of
these readings). A section of docs/validation/v3_h200.md (v3_kernel_bytes.py's
bytes_section appends it) and claims docs/model.md ("L2 and DRAM", "The two partitions") makes.

    python3 scripts/check/v3_l2_partitions.py [--check] [--table]

Data: tests/data/gpu_v3/v3_bytes.json (ncu_bytes.py, B = 2, H = 4) and v3_l2_share.json
(l2_share_probe.py, fp16 d 128, B = 1, Q blocks per head 32 down to 1); the L2's size as the device
reports it, tests/data/gpu_ceilings/h200.json l2_bytes. Per row, from the launch's shape: Q, K, V read
and O written, B H N d x 2 bytes each (L's B H N x 4 left out); from the counters: DRAM read and written
(dram__bytes_read / _write.sum) and the sectors one L2 partition reads from the other
(lts__t_sectors_srcunit_ltcfabric_op_read.sum x 32: "fabric").

--check asserts, from the raw figures:
- where each K/V tile has one reader (one Q block per head), the fabric moves half of what DRAM gives
  (0.49-0.51): an SM's partition keeps a copy of the half of the lines homed in the other;
- on every row the fabric moves at least that half and at most one more crossing of each K/V byte
  (K and V read by SMs on both sides are held by both partitions);
- DRAM written during the launch is under 0.1% of O where the L2 holds (Q, K, V, O plus the copies the
  fabric brought over) at most 45% of its size, under 1% at most 65%, and at least 5% from 70%: lines
  leave the L2 well before it is full, which a fully associative LRU of the whole L2 (the simulator's
  model) does not do.
--table prints the section. Exit 1 when a claim fails, 2 when the data are missing.
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from verdict import verdict  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "gpu_v3"
L2_BYTES = json.loads((ROOT / "tests" / "data" / "gpu_ceilings" / "h200.json").read_text())["l2_bytes"]
HALF = (0.49, 0.51)
CROSSING_SLACK = 1.05
WRITTEN = ((0.45, "<", 0.001), (0.65, "<", 0.01))  # held / L2 at most x: written / O below y
WRITTEN_FROM = (0.70, 0.05)  # held / L2 from x: written / O at least y


def row_figures(r, source):
    """One launch's figures: the shape's bytes, the counters, what the L2 held (bytes)."""
    k = r["kernels"][0]
    one = r["batch"] * r["heads"] * r["n"] * r["d"] * 2
    fabric = 32 * k["l2_fabric_rd"]
    held = 4 * one + fabric
    return {"source": source, "variant": r["variant"], "dtype": r["dtype"], "d": r["d"], "mask": r["mask"], "n": r["n"],
            "batch": r["batch"], "heads": r["heads"], "q_blocks": -(-r["n"] // r["run"]["b_r"]),
            "o": one, "kv": 2 * one, "dram_rd": k["dram_rd"], "dram_wr": k["dram_wr"], "fabric": fabric,
            "held": held, "held_l2": held / L2_BYTES, "written_o": k["dram_wr"] / one}


def rows(bytes_doc, share_doc):
    """Every checked launch of both files, in their order."""
    out = []
    for doc, source in ((bytes_doc, "v3_bytes"), (share_doc, "v3_l2_share")):
        for r in (doc or {}).get("rows", []):
            if r.get("kernels") and r.get("run") and isinstance(r["kernels"][0].get("l2_fabric_rd"), float):
                out.append(row_figures(r, source))
    return out


def claims(rs):
    """The failed claims (texts), [] when all hold."""
    bad = []
    name = lambda x: f"{x['source']} {x['variant']} {x['dtype']} d {x['d']} {x['mask']} N {x['n']} B {x['batch']} H {x['heads']}"
    one_reader = [x for x in rs if x["q_blocks"] == 1]
    if not one_reader:
        bad.append("no row with one Q block per head")
    for x in one_reader:
        f = x["fabric"] / x["dram_rd"]
        if not HALF[0] <= f <= HALF[1]:
            bad.append(f"{name(x)}: fabric / DRAM read {f:.3f}, not within {HALF}")
    for x in rs:
        lo, hi = HALF[0] * x["dram_rd"], CROSSING_SLACK * (x["dram_rd"] + x["kv"]) / 2
        if not lo <= x["fabric"] <= hi:
            bad.append(f"{name(x)}: fabric {x['fabric'] / 1e6:.3f} MB outside [{lo / 1e6:.3f}, {hi / 1e6:.3f}]")
        for top, _, most in WRITTEN:
            if x["held_l2"] <= top and x["written_o"] >= most:
                bad.append(f"{name(x)}: held {x['held_l2']:.2f} of the L2, written {x['written_o']:.4f} of O (not below {most})")
        if x["held_l2"] >= WRITTEN_FROM[0] and x["written_o"] < WRITTEN_FROM[1]:
            bad.append(f"{name(x)}: held {x['held_l2']:.2f} of the L2, written {x['written_o']:.4f} of O (below {WRITTEN_FROM[1]})")
    if not any(x["held_l2"] >= WRITTEN_FROM[0] for x in rs) or not any(x["held_l2"] <= WRITTEN[0][0] for x in rs):
        bad.append("no rows at both ends of the L2's fill")
    return bad


def band(rs, lo, hi):
    """DRAM written over O of the rows holding more than `lo` and at most `hi` of the L2: 'a-b%'."""
    w = [x["written_o"] for x in rs if lo < x["held_l2"] <= hi]
    return f"{100 * min(w):.2f}-{100 * max(w):.2f}%" if w else "-"


def section(bytes_doc, share_doc):
    """The page's section (Markdown lines)."""
    rs = rows(bytes_doc, share_doc)
    out = ["### DRAM written: the two L2 partitions\n"]
    if not rs:
        return out + ["Not in this data set (v3_bytes.json / v3_l2_share.json without the fabric counter).", ""]
    out += ["The rows above whose DRAM written the simulator's LRU alone missed, read with the counter of the sectors one L2",
            "partition reads from the other (lts__t_sectors_srcunit_ltcfabric_op_read, \"fabric\"). Where each K/V",
            "tile has one reader the fabric moves half of what DRAM gives: each partition keeps a copy of the half",
            "of the lines homed in the other that its SMs read, so the L2 holds 1.5x such bytes; K and V read by",
            "SMs on both sides cross once more (at most one more crossing of each K/V byte). Held: Q, K, V and O",
            f"(4 B H N d x 2 bytes) plus the fabric's copies, over the L2's {L2_BYTES:,} bytes. DRAM written",
            f"during the launch grows with it long before the L2 is full: {band(rs, 0, WRITTEN[0][0])} of O up to",
            f"{WRITTEN[0][0]:.0%} held, {band(rs, WRITTEN[0][0], WRITTEN[1][0])} up to {WRITTEN[1][0]:.0%},"
            f" {band(rs, WRITTEN_FROM[0], 9)} from {WRITTEN_FROM[0]:.0%}.",
            "A fully associative LRU of the whole size without copies (the simulator's L2 before its early",
            "write-back, next section) writes none on every row; `scripts/check/v3_l2_partitions.py --check` (ctest `v3_l2_partitions`)",
            "asserts these readings from the raw counters. MB = 10^6 bytes.\n",
            "| data | variant | dtype | d | mask | N | B x H | Q blocks per head | DRAM read MB | fabric MB | fabric / DRAM read | "
            "held MB | held / L2 | DRAM written MB | written / O |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for x in sorted(rs, key=lambda x: x["held_l2"]):
        out.append(f"| {x['source']} | {x['variant']} | {x['dtype']} | {x['d']} | {x['mask']} | {x['n']} | "
                   f"{x['batch']} x {x['heads']} | {x['q_blocks']} | {x['dram_rd'] / 1e6:.3f} | {x['fabric'] / 1e6:.3f} | "
                   f"{x['fabric'] / x['dram_rd']:.3f} | {x['held'] / 1e6:.1f} | {x['held_l2']:.2f} | "
                   f"{x['dram_wr'] / 1e6:.3f} | {x['written_o']:.4f} |")
    return out + [""]


def load(name):
    path = DATA / name
    return json.loads(path.read_text()) if path.exists() else None


def main(argv):
    bytes_doc, share_doc = load("v3_bytes.json"), load("v3_l2_share.json")
    if bytes_doc is None or share_doc is None:
        print("v3_l2_partitions: tests/data/gpu_v3/v3_bytes.json or v3_l2_share.json missing", file=sys.stderr)
        return 2
    if "--table" in argv:
        print("\n".join(section(bytes_doc, share_doc)))
    if "--check" in argv:
        return verdict("v3_l2_partitions", claims(rows(bytes_doc, share_doc)),
                       f"all claims hold ({len(rows(bytes_doc, share_doc))} launches)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
