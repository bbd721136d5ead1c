#!/usr/bin/env python3
"""Where a V3 consumer warp's time goes, per K/V step: ncu_stalls.py's PC samples (one warp of each SM
sampled every 2,048 cycles, its SASS instruction and stall reason) summed by what the instruction does,
and turned into cycles per consumer warp per step.

    python3 scripts/gpu/v3_kernel/stalls_table.py [--run JSON PAGES ...] [--check] [--write] [--pace FILE]

Runs (default: all three, all on an H100, kernel sources a84c34c1): tests/data/gpu_v3/v3_stalls_h100.json
with ncu_stalls_pages_h100.tar.gz (fa3 and the switches at N 16384, batch 1: the pace's fit),
v3_stalls_d64_h100.json with ncu_stalls_pages_d64_h100.tar.gz (six d 64 configurations for the one-stage
and no-ping-pong misses: fa3 and one stage at N 4096 batch 4, one stage at N 16384; the causal ones in
a table of their own, each tile's K/V steps up to its diagonal counted, not used by --check) and v3_stalls_switches_h100.json with ncu_stalls_pages_switches_h100.tar.gz (no ping-pong and
the grid scheduler at N 16384, fa3 and one stage at d 128 N 4096 batch 4, no ping-pong and no
intra-warpgroup overlap at d 64 N 4096 batch 4). Each row also gets its SM clock (SM cycles over the
launch's duration).

Categories, by the sampled instruction's opcode: executing the softmax and the rest of the loop's
arithmetic (FP32, MUFU, integer, shuffles: `compute`), the uniform datapath (wgmma descriptors, loop
bookkeeping: `uniform`), issuing wgmma (HGMMA), waiting for a wgmma group (WARPGROUP: wgmma.wait_group
and warpgroup.arrive), waiting on an mbarrier (the try_wait loop: SYNCS and its BRA), the rest.
A sample is one warp at one instant, so a category's share of an SM's samples is its share of the warps'
resident time; cycles per consumer warp per step = share x warps x the SM's elapsed cycles / (consumer
warps x K/V steps per SM), the steps being all tiles' K/V blocks / 132 (no-mask shapes). With warp
specialization the producer warp is one of the resident warps: its share (1 / warps of the samples,
almost all in its try_wait loop) is taken from `mbar`.

--check asserts what docs/model.md says of these data ("Where the consumer warps' time goes"), from the
raw pages: at d 128 FA3's consumers spend 15-30% of their time waiting for wgmma and at d 64 under 5%;
a consumer warp's execution (compute + uniform) per step is at least 1.3x longer in FA3 than with one
stage at d 128; per executed instruction it is longer at d 64 (3 warps per SMSP) than at d 128 (2);
the pace's line (--write: tests/data/gpu_v3/v3_pace_h100.json, the timeline's constants,
sim/src/time/v3_pace.hpp) is the first run's pages' and meets each variant of that run within 8%; one
stage at d 64 costs a step at least twice as many cycles over FA3's at N 4096 batch 4 as at N 16384,
and at both its waits (mbarrier, wgmma wait, wgmma issue) grow by at least the step's growth; the SM
clock is lower where the tensor pipe is busier (clock_claims).
"""

import argparse
import csv
import io
import json
import math
import re
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data" / "gpu_v3"
RUNS = [(DATA / "v3_stalls_h100.json", DATA / "ncu_stalls_pages_h100.tar.gz"),  # commit 8cdb512
        (DATA / "v3_stalls_d64_h100.json", DATA / "ncu_stalls_pages_d64_h100.tar.gz"),  # commit 6f6b1b4
        (DATA / "v3_stalls_switches_h100.json", DATA / "ncu_stalls_pages_switches_h100.tar.gz")]  # commit e73ee3a
SMS = 132
TILE = {128: (128, 176), 64: (192, 128)}  # the kernel's B_r x B_c without a mask (v3_ncu.json)
COMPUTE = {"MUFU", "FMNMX", "FADD", "FFMA", "FMUL", "F2FP", "SHFL", "FSETP", "FSEL", "LOP3", "SHF", "ISETP",
           "IMAD", "VIADD", "LEA", "MOV", "SEL", "IADD3", "PRMT", "I2F", "F2I", "FCHK", "CS2R", "S2R"}
CATEGORIES = ("compute", "uniform", "hgmma", "wg_wait", "mbar", "other")


def opcode(source):
    s = re.sub(r"^@!?U?P\w+\s+", "", source.strip())
    return s.split()[0].split(".")[0] if s else "?"


def category(op):
    if op in COMPUTE:
        return "compute"
    if op.startswith("U") or op in ("R2UR", "S2UR"):
        return "uniform"
    if op == "HGMMA":
        return "hgmma"
    if op == "WARPGROUP":
        return "wg_wait"
    if op in ("BRA", "SYNCS"):
        return "mbar"
    return "other"


def page_samples(text):
    """The source page's samples and executed instructions summed by category."""
    rows = list(csv.reader(io.StringIO(text)))
    head = rows[1]
    ix = {h: i for i, h in enumerate(head)}
    out = {c: 0 for c in CATEGORIES} | {"all": 0, "inst": 0}
    for r in rows[2:]:
        if len(r) < len(head):
            continue
        n = int(r[ix["# Samples"]] or 0)
        out[category(opcode(r[ix["Source"]]))] += n
        out["all"] += n
        out["inst"] += int(r[ix["Instructions Executed"]] or 0)
    return out


def source_pages(pages_path):
    """ncu_stalls.py's tarball of pages: file name -> text (the source pages and the run logs)."""
    with tarfile.open(pages_path) as tf:
        return {Path(m.name).name: tf.extractfile(m).read().decode() for m in tf.getmembers() if m.isfile()}


def block_steps(n, br, bc, causal):
    """K/V steps of one (batch, head): every tile's blocks; causal (top-left), Q block i's first
    ceil(min(N, (i + 1) B_r) / B_c) blocks."""
    t_r = math.ceil(n / br)
    if not causal:
        return t_r * math.ceil(n / bc)
    return sum(math.ceil(min(n, (i + 1) * br) / bc) for i in range(t_r))


def table(json_path, pages_path, causal=False):
    """The rows without a mask (with `causal`: the causal ones instead, steps counted per tile)."""
    meta_rows = json.loads(Path(json_path).read_text())
    pages = source_pages(pages_path)
    out = []
    for r in meta_rows["rows"]:
        if r.get("exit") != 0 or (r["mask"] == "causal") != causal:
            continue
        m = r["metrics"]
        s = page_samples(pages[r["source_page"]])
        br, bc = (r["run"]["b_r"], r["run"]["b_c"]) if r["mask"] == "causal" else TILE[r["d"]]
        steps = r["heads"] * r["batch"] * block_steps(r["n"], br, bc, r["mask"] == "causal") / SMS
        warps = 4 * m["smsp__warps_active.avg.per_cycle_active"]
        ws = r["variant"] != "no_ws"
        consumers = 4 * br // 64
        cycles = m["gpc__cycles_elapsed.avg"]
        share = {c: s[c] / s["all"] for c in CATEGORIES}
        if ws:
            share["mbar"] = max(0.0, share["mbar"] - 1 / warps)
        per = {c: share[c] * warps * cycles / (consumers * steps) for c in CATEGORIES}
        inst = s["inst"] / (SMS * consumers * steps)  # warp-instructions per consumer warp per step
        out.append({"variant": r["variant"], "mask": r["mask"], "d": r["d"], "n": r["n"], "batch": r["batch"],
                    "clock_ghz": cycles / m["gpu__time_duration.sum"],
                    "step_cycles": cycles / steps, "cycles": per,
                    "consumer_share": {c: per[c] * steps / cycles for c in CATEGORIES},
                    "inst": inst, "exec_cpi": (per["compute"] + per["uniform"]) / inst})
    return out


VARIANT_SWITCHES = {  # the kernel's switches of each profiled variant, to find its compiled loop (sass_steps.py)
    "fa3": dict(stages=2, warp_specialize=True, pingpong=True, intra_overlap=True, scheduler="static"),
    "stages1": dict(stages=1, warp_specialize=True, pingpong=True, intra_overlap=True, scheduler="static"),
    "no_overlap": dict(stages=2, warp_specialize=True, pingpong=True, intra_overlap=False, scheduler="static"),
    "no_ws": dict(stages=2, warp_specialize=False, pingpong=False, intra_overlap=True, scheduler="grid"),
    "no_pingpong": dict(stages=2, warp_specialize=True, pingpong=False, intra_overlap=True, scheduler="static"),
    "grid": dict(stages=2, warp_specialize=True, pingpong=True, intra_overlap=True, scheduler="grid"),
}


def pace(rows, sass_path=DATA / "v3_sass_steps.json"):
    """The consumer's pace: executing cycles (compute + uniform) per compiled instruction of the K/V loop's
    full tile (v3_sass_steps.json) against the other consumer warps of its SMSP executing beside it
    ((warpgroups - 1) x the executing share of the step: independent phases), a least-squares line over
    the variants whose warpgroups keep phases of their own (all but no_ws, whose warpgroups run in
    phase: each has all the others beside it) but FA3 at d 64, a held-out shape of the V3 time test.
    Returns (c0, c1, points)."""
    sass = json.loads(Path(sass_path).read_text())["rows"]
    pts = []
    for x in rows:
        br, bc = TILE[x["d"]]
        sw = VARIANT_SWITCHES[x["variant"]]
        full = [r["full"] for r in sass if (r["d"], r["b_r"], r["b_c"]) == (x["d"], br, bc) and not r["causal"]
                and all(r[k] == v for k, v in sw.items())][0]
        ex = x["cycles"]["compute"] + x["cycles"]["uniform"]
        groups = br // 64
        in_phase = not sw["warp_specialize"]
        others = (groups - 1) * (1.0 if in_phase else ex / x["step_cycles"])
        pts.append({"variant": x["variant"], "d": x["d"], "others": others, "cycles_per_instruction": ex / full,
                    "compiled": full, "in_phase": in_phase, "first_run": x["first_run"]})
    # fitted on the first run's variants with phases of their own, FA3 at d 64 (a held-out shape of the
    # V3 time test, tests/sim/time/v3_time_test.cpp) left out and shown beside
    for q in pts:
        q["fitted"] = q["first_run"] and not q["in_phase"] and not (q["variant"] == "fa3" and q["d"] == 64)
    fit = [q for q in pts if q["fitted"]]
    mk = sum(q["others"] for q in fit) / len(fit)
    my = sum(q["cycles_per_instruction"] for q in fit) / len(fit)
    c1 = sum((q["others"] - mk) * (q["cycles_per_instruction"] - my) for q in fit) / sum((q["others"] - mk) ** 2 for q in fit)
    return my - c1 * mk, c1, pts


def one_stage_claims(rows):
    """What one stage costs at d 64 (the second run's shapes, FA3 at N 16384 from the first): the step's
    extra cycles over FA3's at the same shape, and how much of it the waits hold. Returns the claims
    that fail (two claims)."""
    at = {(x["variant"], x["n"], x["batch"]): x for x in rows if x["d"] == 64}
    waits = ("mbar", "wg_wait", "hgmma")
    extra = {}
    for shape in ((4096, 4), (16384, 1)):
        one, fa3 = at.get(("stages1", *shape)), at.get(("fa3", *shape))
        if not one or not fa3:
            return [f"no stages1 and fa3 rows at d 64, N {shape[0]}, batch {shape[1]}"] * 2
        step = one["step_cycles"] - fa3["step_cycles"]
        wait = sum(one["cycles"][c] - fa3["cycles"][c] for c in waits)
        print(f"one stage at d 64, N {shape[0]}, batch {shape[1]}: {step:+.0f} SM cycles a step "
              f"({one['step_cycles']:.0f} against {fa3['step_cycles']:.0f}), waits {wait:+.0f}")
        extra[shape] = (step, wait)
    fails = []
    (s4, w4), (s16, w16) = extra[4096, 4], extra[16384, 1]
    if not s4 >= 2 * s16 > 0:
        fails.append(f"one stage's extra per step at N 4096 ({s4:.0f}) not >= 2 x N 16384's ({s16:.0f})")
    if not (w4 >= s4 and w16 >= s16):
        fails.append(f"one stage's waits grow less than its step ({w4:.0f} vs {s4:.0f}; {w16:.0f} vs {s16:.0f})")
    return fails


def clock_claims(rows):
    """The SM clock under the launch's load (docs/model.md "The clock under load, again"): at d 128 without a
    mask, where FA3 keeps the tensor pipe busiest, the variants that keep it as busy (fa3, no_pingpong,
    grid) run at most 1.65 GHz and those that idle it more (stages1, no_overlap, no_ws) at least 1.72;
    at d 64, N 16384, every variant at 1.76-1.86. Returns the claim if it fails (one claim)."""
    d128 = {x["variant"]: x["clock_ghz"] for x in rows if x["d"] == 128 and x["n"] == 16384}
    d64 = [x["clock_ghz"] for x in rows if x["d"] == 64 and x["n"] == 16384]
    busy, idler = ("fa3", "no_pingpong", "grid"), ("stages1", "no_overlap", "no_ws")
    if not all(v in d128 for v in busy + idler) or not d64:
        return ["clock: a variant's row at d 128 or d 64, N 16384, is missing"]
    if max(d128[v] for v in busy) <= 1.65 and min(d128[v] for v in idler) >= 1.72 and all(1.76 <= c <= 1.86 for c in d64):
        return []
    return [f"clock: d 128 {', '.join(f'{v} {d128[v]:.3f}' for v in busy + idler)}; d 64 {min(d64):.3f}-{max(d64):.3f} GHz"]


def print_table(rows):
    print("| variant | d | N, batch | SM clock, GHz | SM cycles per step | " + " | ".join(CATEGORIES) + " | instructions | cycles per instruction executing |")
    print("|---|---|---|---|---|" + "---|" * len(CATEGORIES) + "---|---|")
    for x in rows:
        print(f"| {x['variant']} | {x['d']} | {x['n']}, {x['batch']} | {x['clock_ghz']:.3f} | {x['step_cycles']:.0f} | "
              + " | ".join(f"{x['cycles'][c]:.0f}" for c in CATEGORIES) + f" | {x['inst']:.0f} | {x['exec_cpi']:.2f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", nargs=2, action="append", metavar=("JSON", "PAGES"),
                    help="a run's ncu_stalls.py JSON and its source pages (repeatable; default: the three runs, RUNS)")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--pace", type=Path, default=DATA / "v3_pace_h100.json",
                    help="the pace's line (--write writes it; --check compares it with the pages')")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    rows = [x | {"first_run": k == 0} for k, run in enumerate(args.run or RUNS) for x in table(*run)]
    c0, c1, pts = pace(rows)
    print(f"pace: {c0:.3f} + {c1:.3f} x (other warps executing beside) cycles per compiled instruction")
    for q in pts:
        print(f"  {q['variant']:10s} d {q['d']:3d}  others {q['others']:.3f}  measured {q['cycles_per_instruction']:.3f}"
              f"  line {c0 + c1 * q['others']:.3f}" + ("" if q["first_run"] else "  (a later run)"))
    if args.write:
        meta = {"from": ["tests/data/gpu_v3/v3_stalls_h100.json", "tests/data/gpu_v3/ncu_stalls_pages_h100.tar.gz",
                         "tests/data/gpu_v3/v3_sass_steps.json"],
                "command": "python3 scripts/gpu/v3_kernel/stalls_table.py --write", "gpu": "NVIDIA H100 80GB HBM3"}
        kept = [{k: v for k, v in q.items() if k != "first_run"} for q in pts if q["first_run"]]
        args.pace.write_text(json.dumps({"meta": meta, "c0": round(c0, 3), "c1": round(c1, 3), "points": kept}, indent=1) + "\n")
    print_table(rows)
    causal = [x for run in (args.run or RUNS) for x in table(*run, causal=True)]
    if causal:
        print("causal (the kernel's tile; steps: each tile's K/V blocks up to its diagonal):")
        print_table(causal)
    if not args.check:
        return 0
    by = {(x["variant"], x["d"]): x for x in rows if x["first_run"]}
    fails = []
    wait128 = by["fa3", 128]["consumer_share"]["wg_wait"]
    wait64 = by["fa3", 64]["consumer_share"]["wg_wait"]
    if not 0.15 <= wait128 <= 0.30:
        fails.append(f"fa3 d 128: wgmma wait {wait128:.3f} of a consumer's time, not 0.15-0.30")
    if not wait64 < 0.05:
        fails.append(f"fa3 d 64: wgmma wait {wait64:.3f} of a consumer's time, not under 0.05")
    ex = lambda v, d: by[v, d]["cycles"]["compute"] + by[v, d]["cycles"]["uniform"]  # noqa: E731
    if not ex("fa3", 128) >= 1.3 * ex("stages1", 128):
        fails.append(f"d 128: execution per step fa3 {ex('fa3', 128):.0f} not >= 1.3 x stages1's {ex('stages1', 128):.0f}")
    if not by["fa3", 64]["exec_cpi"] > by["fa3", 128]["exec_cpi"]:
        fails.append("executing cycles per instruction not longer at d 64 than at d 128")
    kept = json.loads(args.pace.read_text())
    if (kept["c0"], kept["c1"]) != (round(c0, 3), round(c1, 3)):
        fails.append(f"{args.pace.name}: c0 {kept['c0']}, c1 {kept['c1']}; the pages give {c0:.3f}, {c1:.3f}")
    worst = max(abs((c0 + c1 * q["others"]) / q["cycles_per_instruction"] - 1) for q in pts if q["first_run"])
    if worst > 0.08:
        fails.append(f"the pace's line misses a variant by {100 * worst:.1f}% (at most 8%)")
    fails += one_stage_claims(rows)
    fails += clock_claims(rows)
    for f in fails:
        print("FAIL:", f, file=sys.stderr)
    print(f"check: {9 - len(fails)} of 9 hold")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
