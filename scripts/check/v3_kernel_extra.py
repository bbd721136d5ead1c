"""V3's validation run beyond the speed table (issue 27): compute-sanitizer, Nsight Compute bytes against
the simulator's sector and DRAM levels, the ablation and unit counters beside the simulator's
predictions, and the events / timeline hooks' results — each judged from the raw data here, each a page
section. Used by scripts/check/v3_kernel_data.py (its problems, page and selftest); the simulator's
figures come from the built CLI (v3_kernel_sim.py).

Data (tests/data/gpu_v3/, from scripts/gpu/v3_kernel/ncu_run.sh):
- v3_sanitizer.json (sanitize.py): per run the tool, the program's arguments, exit status, the tool's
  SUMMARY lines and the program's JSON line. A run passes when it exited 0, its summary says 0 errors
  (memcheck / synccheck "ERROR SUMMARY: 0 errors"; racecheck "RACECHECK SUMMARY: n hazards displayed
  (0 errors, w warnings)": warnings listed, not failed) and its check passed. Every run of sanitize.RUNS
  must be there.
- v3_bytes.json (ncu_bytes.py): one launch of "fa3" per config of ncu_bytes.GRID, its DRAM bytes and L2
  sectors; against `flashlab count --algo v3 ... --br B_r --bc B_c --json` for the tile the run printed:
  L2 sectors read / written (all units, or those from the SMs' L1/TEX: either) x 32 against the sector
  level's read / write bytes within SECTOR_TOL (V2's
  rule for its ncu bytes, docs/validation/h200.md: within 1%); DRAM bytes read against the DRAM level
  within DRAM_TOL; DRAM bytes written at most the DRAM level's plus DRAM_WRITE_SLACK of the sector
  level's writes (O and L may stay in the 50 MB L2 past the kernel's end, or be written back in it).
- v3_events.jsonl (events_check.py) and v3_timeline.json (timeline_compare.py): shown when present;
  an events line passes when v3 exited 0, its check passed and no agent's events differ.
"""

import re
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[0] / "gpu" / "v3_kernel"))
sys.path.insert(0, str(HERE.parents[0] / "gpu"))
import v3_kernel_sim as sim  # noqa: E402
from ncu_bytes import GRID as BYTES_GRID  # noqa: E402
from sanitize import RUNS as SANITIZER_RUNS  # noqa: E402

SECTOR_TOL = 0.01
DRAM_TOL = 0.05
DRAM_WRITE_SLACK = 0.05
PREDICT_TOL = 0.10  # the ablation's predicted speed within 10% of the measured, units within 10 points


def sanitizer_verdict(r):
    """(errors, warnings, why) of one sanitizer run, from its raw text; why is None when it passes."""
    text = " ".join(r["summary"])
    if r["tool"] == "racecheck":
        m = re.search(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)", text)
        errors, warnings = (int(m.group(2)), int(m.group(3))) if m else (None, None)
    else:
        m = re.search(r"ERROR SUMMARY: (\d+) errors?", text)
        errors, warnings = (int(m.group(1)), 0) if m else (None, None)
    run_ok = bool(r["run"]) and r["run"]["check"]["pass"] and r["run"]["check"]["repeat_identical"]
    why = None
    if errors is None:
        why = f"no summary line in the tool's output (exit {r['exit']})"
    elif errors or r["exit"] != 0:
        why = f"{errors} errors, exit {r['exit']}"
    elif not run_ok:
        why = "the program's check failed"
    return errors, warnings, why


def sanitizer_key(r):
    return r["tool"], (r["variant"], r["dtype"], r["d"], r["mask"], r["n"])


def sanitizer_problems(doc, sha):
    """What makes v3_sanitizer.json unusable: absent, another kernel's, a run missing, a run without the
    tool's summary line or whose program check failed. What the tools found is sanitizer_findings'."""
    if doc is None:
        return ["no v3_sanitizer.json: run ncu_run.sh with PARTS containing sanitizer"]
    out = []
    if doc["meta"]["v3_sources_sha256"] != sha:
        out.append(f"v3_sanitizer.json: sources {doc['meta']['v3_sources_sha256'][:12]}, not v3_ncu.json's {sha[:12]}")
    have = {sanitizer_key(r) for r in doc["rows"]}
    if set(SANITIZER_RUNS) - have:
        out.append(f"sanitizer runs missing: {sorted(set(SANITIZER_RUNS) - have)}")
    for r in doc["rows"]:
        errors, _, why = sanitizer_verdict(r)
        if why and (errors is None or why == "the program's check failed"):
            out.append(f"{r['tool']} {' '.join(r['args'])}: {why}")
    return out


def sanitizer_findings(doc):
    """Every run in which the tool reported errors (issue 27 item 4: memcheck and racecheck clean)."""
    if doc is None:
        return []  # sanitizer_problems reports the missing file
    out = []
    for r in doc["rows"]:
        errors, _, why = sanitizer_verdict(r)
        if why and errors is not None and why != "the program's check failed":
            out.append(f"{r['tool']} {' '.join(r['args'])}: {why}")
    return out


def l2_sectors(k, op):
    """The L2 sectors read (op "rd") or written ("wr") by a launch, both counts ncu gives: all units
    (instruction and constant fetches, and requests passed between the two L2 partitions, included) and
    those from the SMs' L1/TEX (the LSU's and, on Hopper, TMA's requests); either may be absent (None)."""
    return [k.get(x) if isinstance(k.get(x), float) else None for x in (f"l2_{op}", f"l2_tex_{op}")]


def nearer(counts, target):
    """The count (x 32 bytes) nearer `target`, of those present; nan when none."""
    got = [32 * x for x in counts if x is not None]
    return min(got, key=lambda x: abs(x - target)) if got else float("nan")


def bytes_missing(k):
    """The counters a bytes row lacks (ncu gave no number), [] when it has what bytes_compare reads."""
    out = [m for m in ("dram_rd", "dram_wr") if not isinstance(k.get(m), float)]
    for op in ("rd", "wr"):
        out += [] if any(x is not None for x in l2_sectors(k, op)) else [f"l2_{op}", f"l2_tex_{op}"]
    return out


def bytes_compare(cli, r):
    """One v3_bytes.json row against the simulator: {name: (measured, simulated, ok)}. L2 read (written)
    passes when either of its two counts (l2_sectors) is within SECTOR_TOL; the measured figure is the one
    nearer the simulator's."""
    k = r["kernels"][0]
    c = sim.count(cli, sim.v3_flags(r))
    sec, dram = c["memory"]["sector"], c["memory"]["dram"]
    out = {
        "L2 read": (nearer(l2_sectors(k, "rd"), sec["total_read_bytes"]), sec["total_read_bytes"]),
        "L2 written": (nearer(l2_sectors(k, "wr"), sec["total_write_bytes"]), sec["total_write_bytes"]),
        "DRAM read": (k["dram_rd"], dram["total_read_bytes"]),
        "DRAM written": (k["dram_wr"], dram["total_write_bytes"]),
    }
    tol = {"L2 read": SECTOR_TOL, "L2 written": SECTOR_TOL, "DRAM read": DRAM_TOL}
    res = {}
    for name, (m, s) in out.items():
        if name == "DRAM written":
            ok = m <= s + DRAM_WRITE_SLACK * sec["total_write_bytes"]
        else:
            ok = abs(m - s) <= tol[name] * s
        res[name] = (m, s, ok)
    return res


def bytes_problems(doc, sha, cli):
    """What makes v3_bytes.json unusable: absent, another kernel's, a row missing, not run or not checked,
    a counter missing, a config the simulator refuses. The figures outside their targets of the
    simulator's (issue 27 item 4: Nsight Compute's bytes = the sector level) are bytes_findings'."""
    if doc is None:
        return ["no v3_bytes.json: run ncu_run.sh with PARTS containing bytes"]
    out = []
    if doc["meta"]["v3_sources_sha256"] != sha:
        out.append(f"v3_bytes.json: sources {doc['meta']['v3_sources_sha256'][:12]}, not v3_ncu.json's {sha[:12]}")
    have = {(r["dtype"], r["d"], r["mask"], r["n"]) for r in doc["rows"] if r["kernels"] and not r.get("diagnostic")}
    if set(BYTES_GRID) - have:
        out.append(f"bytes grid incomplete: {sorted(set(BYTES_GRID) - have)}")
    if cli is None:
        return out + ["no flashlab CLI for the bytes' simulator figures: pass --flashlab PATH or set FLASHLAB_CLI"]
    for r in doc["rows"]:
        where = f"bytes {where_variant(r)}{r['dtype']} d={r['d']} {r['mask']} N={r['n']}"
        if r["run"] is None or r["exit"] != 0 or not r["kernels"]:
            out.append(f"{where}: exit {r['exit']}, no checked run or no launch")
            continue
        if not r["run"]["check"]["pass"]:
            out.append(f"{where}: the profiled launch's check failed")
        missing = bytes_missing(r["kernels"][0])
        if missing:
            out.append(f"{where}: no {missing}")
            continue
        try:
            bytes_compare(cli, r)
        except RuntimeError as e:
            out.append(f"{where}: the simulator refused the config: {e}")
    return out


def bytes_findings(doc, cli):
    """Every measured figure of a usable v3_bytes.json row outside its target of the simulator's."""
    if doc is None or cli is None:
        return []  # bytes_problems reports the missing file or CLI
    out = []
    for r in doc["rows"]:
        if r.get("diagnostic"):
            continue  # ncu_bytes.py DIAG: the no-mask reads under other schedulers, not a target
        if r["run"] is None or r["exit"] != 0 or not r["kernels"] or bytes_missing(r["kernels"][0]):
            continue
        where = f"bytes {r['dtype']} d={r['d']} {r['mask']} N={r['n']}"
        try:
            compared = bytes_compare(cli, r)
        except RuntimeError:
            continue
        for name, (m, s, ok) in compared.items():
            if not ok:
                out.append(f"{where}: {name} {m:,.0f} B measured, simulator {s:,.0f} B ({m / s if s else float('inf'):.4f}x)")
    return out


def events_name(e):
    c = e["config"]
    return f"{c['variant']} {c['dtype']} d {c['d']} {c['mask']} {c['batch']}x{c['n']}x{c['heads']}"


def events_verdict(e):
    """None when an events_check.py line passes: `v3 trace` exited 0 with its check passed, the simulator
    traced the same config, and no (launch, block, step, agent) group's events differ; else why."""
    check = ((e.get("v3") or {}).get("check") or {})
    if e.get("v3_exit") != 0 or not e.get("v3"):
        return f"v3 trace exit {e.get('v3_exit')}: {e.get('v3_stderr', '')[-120:]}"
    if check and not check.get("pass"):
        return "the traced run's check failed"
    if e.get("sim_exit") != 0 or "per_agent" not in e:
        return f"flashlab trace exit {e.get('sim_exit')}"
    pa = e["per_agent"]
    if pa["events_differing"] or pa["groups_differing"]:
        return (f"{pa['events_differing']} events differ in {pa['groups_differing']} of {pa['groups']} groups "
                f"(first: {pa.get('first_mismatch')})")
    return None


def events_problems(lines):
    if lines is None:
        return []
    return [f"events {events_name(e)}: {events_verdict(e)}" for e in lines if events_verdict(e)]


def fmt_bytes(x):
    return f"{x / 1e6:.3f}"


def sanitizer_section(doc):
    out = ["## compute-sanitizer\n"]
    if doc is None:
        return out + ["Not in this data set (ncu_run.sh PARTS sanitizer).", ""]
    m = doc["meta"]
    out += [f"{m['sanitizer']}; `sanitize.py` ({len(doc['rows'])} runs): each `compute-sanitizer --tool T "
            "--error-exitcode 9 v3 run VARIANT DTYPE D MASK 1 N 2 --seed 7` (the checked launch and its repeat, O and "
            "L against float64 on every row). Verdict recomputed here from the tool's summary line.\n",
            "| tool | variant | dtype | d | mask | N | exit | summary (raw) | errors | warnings | check | verdict |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in doc["rows"]:
        e, w, why = sanitizer_verdict(r)
        summary = "; ".join(s.replace("=========", "").strip() for s in r["summary"]) or "-"
        out.append(f"| {r['tool']} | {r['variant']} | {r['dtype']} | {r['d']} | {r['mask']} | {r['n']} | {r['exit']} | "
                   f"{summary} | {e} | {w} | {(r['run'] or {}).get('check', {}).get('pass')} | {why or 'pass'} |")
    return out + [""]


def where_variant(r):
    """'' for a grid row of v3_bytes.json, 'VARIANT (diagnostic) ' for ncu_bytes.py's DIAG rows."""
    return f"{r.get('variant', 'fa3')} (diagnostic) " if r.get("diagnostic") else ""


def bytes_section(doc, cli):
    out = ["## Bytes: Nsight Compute against the simulator's sector and DRAM levels\n"]
    if doc is None:
        return out + ["Not in this data set (ncu_run.sh PARTS bytes).", ""]
    out += ["One launch of \"fa3\" per row (B = 2, H = 4), the checked one, profiled after ncu flushed the caches",
            "(`ncu_bytes.py`). Measured: L2 sectors by operation, x 32 bytes, two counts each: all units",
            "(lts__t_sectors_op_read / _op_write: instruction and constant fetches and the traffic between the two L2",
            "partitions included) and the SMs' L1/TEX requests (lts__t_sectors_srcunit_tex_op_read / _write: the LSU's",
            "and TMA's) — the one nearer the simulator's is shown, either within the target passes; and",
            "DRAM bytes (dram__bytes_read / _write.sum). Rows marked (diagnostic) are ncu_bytes.py's DIAG: the no-mask",
            "shape under another scheduler (the sector level does not depend on it; compared with fa3's figures), to",
            "test whether the static scheduler's lockstep explains the no-mask L2 reads below the sector level; they",
            "are no target. Simulated: `flashlab count --algo v3 --br B_r --bc B_c --json`",
            "with the tile the run printed (the simulator's own tile for the config beside it where it differs) — the sector level (memory.sector: each TMA box and store in whole 32-byte",
            "sectors) and the DRAM level (memory.dram: the L2 model's misses and write-backs). Targets: L2 within",
            f"{SECTOR_TOL:.0%} (V2's rule for its ncu bytes), DRAM read within {DRAM_TOL:.0%}, DRAM written at most the",
            f"simulator's plus {DRAM_WRITE_SLACK:.0%} of the sector level's writes. MB = 10^6 bytes.\n",
            "| dtype | d | mask | N | B_r x B_c | L2 read MB: ncu / sim | L2 written MB: ncu / sim | DRAM read MB: ncu / sim | "
            "DRAM written MB: ncu / sim | atomics (sectors) | verdict |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    if cli is None:
        return out + ["(no flashlab CLI: the simulator's figures are not computed)", ""]
    for r in doc["rows"]:
        dt = where_variant(r) + r["dtype"]
        if not r["kernels"] or not r["run"] or bytes_missing(r["kernels"][0]):
            out.append(f"| {dt} | {r['d']} | {r['mask']} | {r['n']} | - | - | - | - | - | - | no data |")
            continue
        k = r["kernels"][0]
        try:
            c = bytes_compare(cli, r)
        except RuntimeError:
            out.append(f"| {dt} | {r['d']} | {r['mask']} | {r['n']} | {r['run']['b_r']} x {r['run']['b_c']} | "
                       "- | - | - | - | - | the simulator refused the config |")
            continue
        cell = {n: f"{fmt_bytes(m)} / {fmt_bytes(s)}" for n, (m, s, _) in c.items()}
        own = sim.count(cli, sim.v3_flags(r, tile=False))["config"]  # the same config with the simulator's own tile
        tile = f"{r['run']['b_r']} x {r['run']['b_c']}" + ("" if (own["b_r"], own["b_c"]) == (r["run"]["b_r"], r["run"]["b_c"])
                                                         else f" (sim's own: {own['b_r']} x {own['b_c']})")
        bad = [n for n, (_, _, ok) in c.items() if not ok]
        atom = sum(k.get(x, 0) for x in ("l2_atom", "l2_red") if isinstance(k.get(x), float))
        verdict = ("outside: " + ", ".join(bad) if bad else "within") + (" (no target)" if r.get("diagnostic") else "")
        out.append(f"| {dt} | {r['d']} | {r['mask']} | {r['n']} | {tile} | "
                   f"{cell['L2 read']} | {cell['L2 written']} | {cell['DRAM read']} | {cell['DRAM written']} | {atom:.0f} | "
                   f"{verdict} |")
    return out + [""]


def events_section(lines, timeline):
    out = ["## Events and timeline: the instrumented kernel against the simulator\n"]
    if lines is None:
        out.append("Events: not in this data set (`events_check.py`, ncu_run.sh PARTS hooks).\n")
    else:
        out += [f"`events_check.py` (v3_events.jsonl): {len(lines)} configs, each `v3 trace` (the instrumented kernel,",
                "O and L checked against float64) against `flashlab trace` with the flags the run printed (the same",
                "variant, tile and shape). Verdict: per (launch, block, step, agent), the events in program order",
                "equal; `flashlab diff` of the whole stream (the GPU's concurrent agents merged by a convention) shown",
                "beside it.\n",
                "| config | GPU events | simulator events | groups | groups differing | `flashlab diff` exit | verdict |",
                "|---|---|---|---|---|---|---|"]
        for e in lines:
            pa = e.get("per_agent") or {}
            out.append(f"| {events_name(e)} | {e.get('gpu_events', '-')} | {e.get('sim_events', '-')} | "
                       f"{pa.get('groups', '-')} | {pa.get('groups_differing', '-')} | {e.get('diff_exit', '-')} | "
                       f"{'equal' if events_verdict(e) is None else 'differ'} |")
        out.append("")
    if timeline is None:
        out.append("Timeline: not in this data set (`timeline_compare.py`, ncu_run.sh PARTS hooks).")
        return out + [""]
    m, pr = timeline["measured"], timeline["predicted"]
    flags = (timeline.get("v3") or {}).get("sim_flags", "-")
    out += [f"Timeline (`timeline_compare.py`, v3_timeline.json): `flashlab timeline {flags}` (SM {pr['sm']},",
            f"{pr['time_s'] * 1e6:.1f} us, {pr['tiles']} tiles) against %globaltimer stamps of {m['ctas']} CTAs (span",
            f"median {m['span_ns_median'] / 1e3:.1f} us): each agent's time per category as a fraction of the CTA's",
            "span (median over the CTAs, and the longest CTA), beside the timeline's share of its time. Not a verdict:",
            "the model's figures for tests/sim/time.\n",
            "| agent | category | measured (median CTA) | measured (longest CTA) | timeline |", "|---|---|---|---|---|"]
    for x in timeline["rows"]:
        lg, tl = x.get("measured_longest_cta"), x.get("timeline")
        out.append(f"| {x['agent']} | {x['category']} | {x['measured_median']:.3f} | "
                   f"{'-' if lg is None else f'{lg:.3f}'} | {'-' if tl is None else f'{tl:.3f}'} |")
    return out + [""]


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
    out += ["", f"{len(misses)} predictions outside {PREDICT_TOL:.0%}" + (": " + "; ".join(misses) + "." if misses else "."), ""]
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


def _sanitizer_doc(sha):
    """A made-up v3_sanitizer.json in which every run of sanitize.RUNS passes."""
    rows = []
    for tool, (v, dt, d, m, n) in SANITIZER_RUNS:
        summary = ("========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)" if tool == "racecheck"
                   else "========= ERROR SUMMARY: 0 errors")
        rows.append({"tool": tool, "variant": v, "dtype": dt, "d": d, "mask": m, "batch": 1, "n": n, "heads": 2,
                     "args": ["run", v, dt, str(d), m, "1", str(n), "2"], "exit": 0, "summary": [summary],
                     "run": {"check": {"pass": True, "repeat_identical": True}}})
    return {"meta": {"v3_sources_sha256": sha}, "rows": rows}


def _bytes_doc(sha, cli):
    """A made-up v3_bytes.json whose counters are the simulator's own figures (B_r = B_c = 128)."""
    rows = []
    for dt, d, m, n in BYTES_GRID:
        r = {"dtype": dt, "d": d, "mask": m, "n": n, "batch": 2, "heads": 4, "exit": 0,
             "run": {"b_r": 128, "b_c": 128, "check": {"pass": True}}}
        c = count_memory(cli, r)
        r["kernels"] = [{"l2_rd": c["sector"]["total_read_bytes"] / 32, "l2_wr": c["sector"]["total_write_bytes"] / 32,
                         "dram_rd": float(c["dram"]["total_read_bytes"]), "dram_wr": float(c["dram"]["total_write_bytes"])}]
        rows.append(r)
    return {"meta": {"v3_sources_sha256": sha}, "rows": rows}


def count_memory(cli, r):
    return sim.count(cli, sim.v3_flags(r))["memory"]


def selftest_cases(cli):
    """(name, problems found) for made-up data, independent of the committed files: the clean made-up sets
    must give no problem (so the checks can pass), each broken one must give one."""
    import copy
    sha, cases = "a" * 64, []
    clean = _sanitizer_doc(sha)
    cases.append(("clean sanitizer runs give no problem", ["(none)"] if not sanitizer_problems(clean, sha) + sanitizer_findings(clean) else []))
    bad = copy.deepcopy(clean)
    bad["rows"][0]["summary"] = ["========= ERROR SUMMARY: 2 errors"]
    cases.append(("memcheck reporting 2 errors", sanitizer_findings(bad)))
    bad = copy.deepcopy(clean)
    bad["rows"][1]["summary"] = []
    cases.append(("a racecheck run without its summary line", sanitizer_problems(bad, sha)))
    bad = copy.deepcopy(clean)
    bad["rows"][1]["summary"] = ["========= RACECHECK SUMMARY: 3 hazards displayed (1 errors, 2 warnings)"]
    cases.append(("racecheck reporting a hazard error", sanitizer_findings(bad)))
    bad = copy.deepcopy(clean)
    del bad["rows"][2]
    cases.append(("a sanitizer run missing", sanitizer_problems(bad, sha)))
    if cli is None:
        return cases + [("the bytes' cases (no flashlab CLI: pass --flashlab PATH)", [])]
    clean = _bytes_doc(sha, cli)
    cases.append(("bytes equal to the simulator's give no problem", ["(none)"] if not bytes_problems(clean, sha, cli) + bytes_findings(clean, cli) else []))
    bad = copy.deepcopy(clean)
    bad["rows"][4]["kernels"][0]["l2_rd"] *= 1.02
    cases.append(("L2 sectors read 2% over the sector level", bytes_findings(bad, cli)))
    bad = copy.deepcopy(clean)
    bad["rows"][5]["kernels"][0]["dram_rd"] *= 0.9
    cases.append(("DRAM read 10% under the simulator's", bytes_findings(bad, cli)))
    bad = copy.deepcopy(clean)
    bad["rows"][6]["kernels"][0]["dram_wr"] += 0.2 * count_memory(cli, bad["rows"][6])["sector"]["total_write_bytes"]
    cases.append(("DRAM written 20% of O and L over the simulator's", bytes_findings(bad, cli)))
    ev = {"config": {"variant": "fa3", "dtype": "fp16", "d": 64, "mask": "none", "batch": 1, "n": 1000, "heads": 2},
          "v3_exit": 0, "v3": {"check": {"pass": True}}, "sim_exit": 0,
          "per_agent": {"groups": 4, "groups_differing": 0, "events_differing": 0}}
    cases.append(("equal events give no problem", ["(none)"] if not events_problems([ev]) else []))
    bad = copy.deepcopy(ev)
    bad["per_agent"] |= {"groups_differing": 1, "events_differing": 3}
    cases.append(("an agent's events differing", events_problems([bad])))
    bad = copy.deepcopy(ev)
    bad["v3_exit"] = 124
    cases.append(("v3 trace timed out", events_problems([bad])))
    return cases
