#!/usr/bin/env python3
"""The order of the staged V3 kernel's compiled K/V loop: where a consumer warp waits for its GEMMs,
releases K_j and V_j, and runs its softmax, read from the SASS of Nsight Compute's source pages
(ncu_stalls.py's `stalls` part; the pages hold each instruction in address order with its execution
count).

    python3 scripts/gpu/v3_kernel/loop_order.py [--pages TARBALL ...] [--check]
        (default: the pages of stalls_table.py's three runs, tests/data/gpu_v3/ncu_stalls_pages_*h100.tar.gz)
    python3 scripts/gpu/v3_kernel/loop_order.py --self-test

The loop is the instructions that ran the loop's number of times (the largest execution count that at
least 100 instructions share, give or take 0.01%); it is read cyclically from its first mbarrier wait (SYNCS...TRYWAIT:
K_j's full barrier). Printed per page: the rank of K's wait, the first HGMMA, V's wait, each
WARPGROUP.DEPBAR (wgmma.wait_group), each release (SYNCS.ARRIVE...A1T0) and the first and last
MUFU.EX2, and the share of the loop's instructions from the first HGMMA to the last DEPBAR (issued
while the GEMMs run).

--check asserts what docs/model.md says ("The compiled order"): with intra-warpgroup overlap and warp
specialization (fa3, stages1) no MUFU.EX2 of the loop comes before its last DEPBAR.LE gsb0, 0x0 and the
release after it (V's): the warp waits for GEMM0_j and GEMM1_(j+1) and releases K and V before block
j's softmax, not after it as the source reads (v3_forward.cuh Consumer::tile); without warp
specialization (no_ws) at most 15% of the exponentials come before V's release; without intra-warpgroup
overlap (no_overlap) every MUFU.EX2 lies between GEMM0's wait and GEMM1's first HGMMA, as the source
reads, 60-80% of them after V's full-barrier wait (the compiler hoisted that wait into the softmax).
"""

import argparse
import collections
import csv
import io
import re
import sys
from pathlib import Path

from stalls_table import RUNS, source_pages  # the same folder: the runs and their tarballs, read as the table reads them

PAGES = [pages for _, pages in RUNS]  # the pages of stalls_table.py's PC-sampling runs (same kernel sources)


def loop_of(text):
    """The loop's SASS lines, in address order rotated to start at its first mbarrier wait."""
    rows = list(csv.reader(io.StringIO(text)))
    head = rows[1]
    ix = {h: i for i, h in enumerate(head)}
    body = [(int(r[ix["Instructions Executed"]] or 0), r[ix["Source"]].strip()) for r in rows[2:] if len(r) >= len(head)]
    counts = collections.Counter(n for n, _ in body if n > 0)
    top = max(n for n, k in counts.items() if k >= 100)
    # the loop's count, give or take a few executions: a wait's retry path may run a path of it again
    # (no_ws at d 128 on the run of 6f6b1b4: 488 instructions at 1,523,712, 215 at 1,523,714)
    loop = [s for n, s in body if abs(n - top) <= top * 1e-4]
    first_wait = next(k for k, s in enumerate(loop) if "TRYWAIT" in s)
    return loop[first_wait:] + loop[:first_wait]


def marks(loop):
    """Ranks of the loop's waits, releases and exponentials."""
    find = lambda pat: [k for k, s in enumerate(loop) if re.search(pat, s)]  # noqa: E731
    return {"trywait": find(r"TRYWAIT"), "hgmma": find(r"HGMMA"), "depbar1": find(r"DEPBAR\.LE gsb0, 0x1"),
            "depbar0": find(r"DEPBAR\.LE gsb0, 0x0"), "release": find(r"SYNCS\.ARRIVE\.TRANS64\.A1T0"),
            "ex2": find(r"MUFU\.EX2"), "n": len(loop)}


def shares(m):
    """The share of the loop's MUFU.EX2 before V's release (the release after the last DEPBAR.LE 0) and
    the share after the loop's second mbarrier wait (V's full barrier)."""
    last_wait = m["depbar0"][-1]
    v_release = next((r for r in m["release"] if r > last_wait), m["n"])
    v_wait = m["trywait"][1] if len(m["trywait"]) > 1 else m["n"]
    n = len(m["ex2"])
    return sum(e < v_release for e in m["ex2"]) / n, sum(e > v_wait for e in m["ex2"]) / n


def verdict(variant, m):
    """None where the page's loop has the order docs/model.md gives, else what differs."""
    if not m["ex2"] or not m["depbar0"]:
        return "no MUFU.EX2 or no DEPBAR.LE 0 in the loop"
    before, after_v_wait = shares(m)
    if variant in ("fa3", "stages1") and before > 0:
        return f"{100 * before:.0f}% of the exponentials before V's release (none expected)"
    if variant == "no_ws" and before > 0.15:
        return f"{100 * before:.0f}% of the exponentials before V's release (at most 15% expected)"
    if variant == "no_overlap":
        first = m["depbar0"][0]
        gemm1 = next((h for h in m["hgmma"] if h > first), m["n"])
        if not first < min(m["ex2"]) <= max(m["ex2"]) < gemm1:
            return f"MUFU.EX2 at ranks {min(m['ex2'])}-{max(m['ex2'])}, not between GEMM0's wait {first} and GEMM1's issue {gemm1}"
        if not 0.60 <= after_v_wait <= 0.80:
            return f"{100 * after_v_wait:.0f}% of the exponentials after V's wait (60-80% expected)"
    return None


def self_test():
    """verdict on hand-made loops (the source's order, the compiled one): 0 when each is judged as it
    should be. The loop: K's wait, GEMM0's HGMMA, V's wait, GEMM1's HGMMA, the waits and releases, four
    exponentials placed as the case says."""
    def loop(order):
        text = {"kw": "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR4+0x10], R3", "vw": "SYNCS.PHASECHK.TRANS64.TRYWAIT P1, [UR4+0x20], R3",
                "h": "HGMMA.64x128x16.F32 R24, gdesc[UR8], RZ", "d1": "WARPGROUP.DEPBAR.LE gsb0, 0x1",
                "d0": "WARPGROUP.DEPBAR.LE gsb0, 0x0", "r": "@!P0 SYNCS.ARRIVE.TRANS64.A1T0 RZ, [UR4+0x18], RZ",
                "e": "MUFU.EX2 R1, R2", "f": "FFMA R1, R2, R3, R4"}
        return marks([text[k] for k in order.split()])
    compiled = loop("kw h vw h d1 r d0 r f e e e e f")      # both waits and releases, then the exponentials
    source = loop("kw h vw h d1 r f e e e e d0 r f")        # the exponentials between the two waits
    no_overlap = loop("kw h d0 r e vw e e e h d0 r")        # V's wait hoisted among the exponentials
    cases = [("fa3", compiled, True), ("fa3", source, False), ("no_ws", source, False),
             ("no_overlap", no_overlap, True), ("no_overlap", compiled, False)]
    bad = [f"{v} judged {'wrong' if ok else 'right'}" for v, m, ok in cases if (verdict(v, m) is None) != ok]
    for b in bad:
        print("FAIL:", b, file=sys.stderr)
    print(f"self-test: {len(cases) - len(bad)} of {len(cases)} hand-made loops judged as they should be")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=Path, action="append", help="a tarball of source pages (repeatable; default: the three runs')")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--self-test", action="store_true", help="judge hand-made loops (no pages read)")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    pages = {}
    for tarball in args.pages or PAGES:
        pages |= {k: v for k, v in source_pages(tarball).items() if k.endswith(".source.csv")}
    fails, seen = [], 0
    for name in sorted(pages):
        variant = name.split("_fp16")[0]
        m = marks(loop_of(pages[name]))
        issued = (m["depbar0"][-1] - m["hgmma"][0]) / m["n"] if m["hgmma"] and m["depbar0"] else float("nan")
        print(f"{name}: {m['n']} instructions; K wait {m['trywait'][:1]}, first HGMMA {m['hgmma'][:1]}, "
              f"waits {m['trywait'][1:]}, DEPBAR.LE 1 {m['depbar1']}, DEPBAR.LE 0 {m['depbar0']}, "
              f"releases {m['release']}, MUFU.EX2 {m['ex2'][:1]}..{m['ex2'][-1:]}; "
              f"first HGMMA to last DEPBAR {issued:.2f} of the loop; exponentials before V's release "
              f"{shares(m)[0]:.2f}, after V's wait {shares(m)[1]:.2f}")
        if variant in ("fa3", "stages1", "no_ws", "no_overlap"):
            seen += 1
            why = verdict(variant, m)
            if why:
                fails.append(f"{name}: {why}")
    if not args.check:
        return 0
    if seen < 6:
        fails.append(f"{seen} pages of fa3, stages1, no_ws, no_overlap (6 or more expected)")
    for f in fails:
        print("FAIL:", f, file=sys.stderr)
    print(f"check: {seen - len(fails)} of {seen} loops in the order docs/model.md gives" if not fails else "check: failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
