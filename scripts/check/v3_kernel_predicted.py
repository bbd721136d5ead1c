"""V3's measured ablation and unit counters beside the simulator's predictions (issue 27 items 2 and 5):
`flashlab count --algo v3 --json` (the analytic time model) for each variant's speed relative to "fa3",
and `flashlab timeline --json` for the busy fraction of each unit — two sections of
docs/validation/v3_h200.md, with the rows outside PREDICT_TOL listed (the time model's targets,
tests/sim/time; not verdicts on the kernel). Used by scripts/check/v3_kernel_data.py; the simulator's
figures come from the built CLI (v3_kernel_sim.py).
"""

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import v3_kernel_sim as sim  # noqa: E402

PREDICT_TOL = 0.10  # the ablation's predicted speed within 10% of the measured, units within 10 points


def ablation_predicted(cli, ncu_rows, abl_rows):
    """(d, mask, n) -> {variant: (measured speed vs fa3, predicted)}; None where the simulator has no such
    switch (static, dynamic)."""
    base = {(r["d"], r["mask"], r["n"]): r for r in ncu_rows if r.get("dtype", "fp16") == "fp16" and r["kernels"]}
    out = {}
    for r in abl_rows:
        s = (r["d"], r["mask"], r["n"])
        if s not in base or not r["kernels"] or not r["run"]:
            continue
        f = base[s]
        meas = statistics.median(k["time_ns"] for k in f["kernels"]) / statistics.median(k["time_ns"] for k in r["kernels"])
        flags = sim.v3_flags(r, r["variant"])
        pred = None
        if flags and cli:
            try:
                pred = sim.count(cli, sim.v3_flags(f))["predicted"]["time_s"] / sim.count(cli, flags)["predicted"]["time_s"]
            except RuntimeError:  # a tile the simulator refuses: no prediction (-)
                pred = None
        out.setdefault(s, {})[r["variant"]] = (meas, pred)
    return out


def cycle_speeds(unit_rows):
    """(d, mask, n) -> {variant: (fa3's SM cycles over the variant's, the variant's SM clock over fa3's)} from
    v3_units.json (one launch each; sm__cycles_elapsed.sum, all SMs, over the launch's time for the clock): the
    speed with the SM clock held equal. The H200 sets its clock under its power limit, so it differs by variant."""
    cyc = {}
    for r in unit_rows or []:
        if r["kernels"] and r["run"] and isinstance(r["kernels"][0].get("sm_cycles_elapsed"), (int, float)):
            k = r["kernels"][0]
            cyc.setdefault((r["d"], r["mask"], r["n"]), {})[r["variant"]] = (k["sm_cycles_elapsed"], k["time_ns"])
    out = {}
    for s, row in cyc.items():
        if "fa3" not in row:
            continue
        (cf, tf) = row["fa3"]
        out[s] = {v: (cf / c, (c / t) / (cf / tf)) for v, (c, t) in row.items() if v != "fa3"}
    return out


def ablation_prediction_section(cli, ncu_rows, abl_rows, unit_rows=None):
    """The predicted ablation beside the measured speed (time), and, with v3_units.json's rows, beside the speed
    in SM cycles (cycle_speeds: the clock held equal, as the simulator's is)."""
    ab = ablation_predicted(cli, ncu_rows, abl_rows)
    out = ["### The ablation beside the simulator's prediction\n",
           "Speed relative to \"fa3\" (its time over the variant's), measured (the table above) and predicted by",
           "`flashlab count --algo v3 --json` (predicted.time_s, the analytic time model; docs/model.md \"V3\") for the",
           "same shape and tile with the variant's switch: stages1 `--stages 1`, no_pingpong `--pingpong off`,",
           "no_overlap `--intra-overlap off`, grid `--scheduler grid`, no_ws `--warp-specialize off --pingpong off",
           "--scheduler grid` (as the kernel's variant is compiled). static / dynamic: persistent schedulers the",
           f"simulator does not tell apart (-). Rows with the prediction outside {PREDICT_TOL:.0%} of the measured are",
           "listed under the table (the time model's target, tests/sim/time; not a verdict on the kernel).\n",
           "| variant (measured / predicted) | " + " | ".join(f"d {d} {m} {n // 1024}k" for d, m, n in ab) + " |",
           "|---|" + "---|" * len(ab)]
    misses = []
    for v in ("stages1", "no_pingpong", "no_overlap", "no_ws", "grid"):
        cells = []
        for (d, m, n), row in ab.items():
            meas, pred = row.get(v, (None, None))
            cells.append("-" if meas is None else f"{meas:.3f} / {pred:.3f}" if pred else f"{meas:.3f} / -")
            if meas and pred and abs(pred / meas - 1) > PREDICT_TOL:
                misses.append(f"{v} d {d} {m} N {n}: predicted {pred:.3f}, measured {meas:.3f} ({pred / meas:.3f}x)")
        out.append(f"| {v} | " + " | ".join(cells) + " |")
    out += ["", f"{len(misses)} prediction{'' if len(misses) == 1 else 's'} outside {PREDICT_TOL:.0%}" + (": " + "; ".join(misses) + "." if misses else "."), ""]
    cy = cycle_speeds(unit_rows)
    pairs = [(v, s, cy[s][v], p) for s, row in ab.items() for v, (_, p) in row.items() if p and v in cy.get(s, {})]
    if pairs:
        clocks = [c for _, _, (_, c), _ in pairs]
        cmiss = [f"{v} d {s[0]} {s[1]} N {s[2]}: predicted {p:.3f}, in cycles {c:.3f}" for v, s, (c, _), p in pairs
                 if abs(p / c - 1) > PREDICT_TOL]
        out += ["The SM clock differs by variant (v3_units.json, one launch each: sm__cycles_elapsed over the launch's "
                f"time): the variants' clock is {min(clocks):.2f}-{max(clocks):.2f}x fa3's (the H200's power limit: a "
                "variant that keeps the tensor cores less busy runs a faster clock), and the simulator has one clock. "
                "Against the speed in SM cycles (fa3's cycles over the variant's) "
                f"{len(pairs) - len(cmiss)} of {len(pairs)} predictions are within {PREDICT_TOL:.0%}" +
                (": not " + "; ".join(cmiss) + "." if cmiss else "."), ""]
    return out


# measured busy (v3_kernel_data.BUSY's unit names) for each timeline unit the counters can stand for
TIMELINE_UNITS = {"tensor": "tensor pipe", "sfu": "XU (MUFU)", "issue": "FMA pipe"}


def units_prediction_section(cli, unit_rows, busy):
    out = ["### The unit counters beside `flashlab timeline`\n",
           "Busy fractions of \"fa3\" at N = 16,384: measured (the table above) and predicted by `flashlab timeline",
           "--json` (one SM's units, the busiest SM) for the same shape and tile. Compared as tests/sim/time/",
           "timeline_h200_test.cpp does: tensor with the tensor pipe, sfu with the XU (x 8 cycles), issue with the",
           "FMA pipe (the timeline's issue lane holds FP32's time); smem and l2 shown, not compared (the LSU",
           "wavefronts leave out wgmma's and TMA's shared-memory reads; lts__t_sectors is the whole L2's load, not",
           f"one SM's port). Target {PREDICT_TOL * 100:.0f} points.\n",
           "| d | mask | tensor: ncu / timeline | sfu: ncu / timeline | issue: ncu / timeline | smem (timeline) | l2 (timeline) |",
           "|---|---|---|---|---|---|---|"]
    misses = []
    for r in unit_rows:
        if r["variant"] != "fa3" or r["n"] != 16384 or not r["kernels"] or not r["run"] or cli is None:
            continue
        meas = busy(r["kernels"][0])
        try:
            pred = sim.timeline_units(cli, sim.v3_flags(r))
        except RuntimeError as e:
            misses.append(f"d {r['d']} {r['mask']}: {e}")
            continue
        if meas is None:
            continue
        cells = []
        for u, name in TIMELINE_UNITS.items():
            cells.append(f"{meas[name]:.3f} / {pred.get(u, float('nan')):.3f}")
            if abs(meas[name] - pred.get(u, float("nan"))) > PREDICT_TOL or u not in pred:
                misses.append(f"d {r['d']} {r['mask']} {u}: timeline {pred.get(u, float('nan')):.3f}, measured {meas[name]:.3f}")
        out.append(f"| {r['d']} | {r['mask']} | " + " | ".join(cells) +
                   f" | {pred.get('smem', float('nan')):.3f} | {pred.get('l2', float('nan')):.3f} |")
    out += ["", f"{len(misses)} units outside {PREDICT_TOL * 100:.0f} points" + (": " + "; ".join(misses) + "." if misses else "."), ""]
    return out
