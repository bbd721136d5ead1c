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
  sectors; against `flashlab count --algo v3 ... --br B_r --bc B_c --json` for the tile the run printed,
  within SECTOR_TOL of the sector level's read / write bytes (V2's rule for its ncu bytes,
  docs/validation/h200.md: within 1%). Reads: where the row has the request side (ncu_bytes.BYTES since
  532c7b7; has_requests), the SMs' requests — TMA's global-load bytes plus the LSU's global-load bytes
  (requested_read) — and, as the cross-check, every byte read into the SMs off the XBAR; the L2's read
  lookups are only shown, since Hopper's L2 request coalescer merges reads of the same sectors from several
  SMs before the L2 counts one (without a mask 0.40-0.67x the sector level: v3_l2_share.json's probe).
  Writes there: the SMs' L2 write sectors. Rows without the request side (run 6 and earlier): L2 sectors
  read / written (all units, or those from the SMs' L1/TEX: either) x 32. DRAM bytes read against the
  DRAM level within DRAM_TOL; DRAM bytes written at most the DRAM level's plus DRAM_WRITE_SLACK of the
  sector level's writes (O and L may stay in the 50 MB L2 past the kernel's end, or be written back in it).
- v3_l2_share.json (l2_share_probe.py): the SMs' L2 read lookups and, where measured, the requests of fa3
  fp16 d 128 by Q blocks per head, beside the sector level (share_section); no target.
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


def number(k, key):
    """k[key] when it is a number (ncu printed one), else None."""
    x = k.get(key)
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def l2_sectors(k, op):
    """The L2 sectors read (op "rd") or written ("wr") by a launch, both counts ncu gives: all units
    (instruction and constant fetches, and requests passed between the two L2 partitions, included) and
    those from the SMs' L1/TEX (the LSU's and, on Hopper, TMA's requests); either may be absent (None)."""
    return [number(k, x) for x in (f"l2_{op}", f"l2_tex_{op}")]


def nearer(counts, target):
    """The count (x 32 bytes) nearer `target`, of those present; nan when none."""
    got = [32 * x for x in counts if x is not None]
    return min(got, key=lambda x: abs(x - target)) if got else float("nan")


def has_requests(k):
    """Whether a bytes row's launch was profiled with the request side (ncu_bytes.BYTES since 532c7b7):
    ncu knew l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld, so the row holds the key tma_rd_bytes
    (its value None when ncu printed no number: bytes_missing reports it). Rows without it (run 6 and
    earlier) are judged by the L2's own counts, the nearer of two (bytes_compare)."""
    return "tma_rd_bytes" in k


def requested_read(k):
    """The bytes the SMs asked the memory system for and received, upstream of the L2 request coalescer:
    TMA's global loads into L1TEX's M stage (tma_rd_bytes, whole 32-byte sectors off the XBAR) plus the
    LSU's global-load bytes (lsu_ld, l1tex__t_bytes_pipe_lsu_mem_global_op_ld: what its loads asked L1
    for, L1 hits included, so an upper bound on what they fetched; 0 in every row of run 6: the kernel
    loads Q, K, V through TMA only), lsu_ld taken as 0 where ncu gave none. None without tma_rd_bytes."""
    tma = number(k, "tma_rd_bytes")
    return None if tma is None else tma + (number(k, "lsu_ld") or 0.0)


def bytes_missing(k):
    """The counters a bytes row lacks (ncu gave no number), [] when it has what bytes_compare reads: with
    the request side, tma_rd_bytes and the SMs' L2 write sectors (l2_tex_wr); without, for each op either
    of l2_sectors' two counts."""
    out = [m for m in ("dram_rd", "dram_wr") if not isinstance(k.get(m), float)]
    if has_requests(k):
        return out + [m for m in ("tma_rd_bytes", "l2_tex_wr") if number(k, m) is None]
    for op in ("rd", "wr"):
        out += [] if any(x is not None for x in l2_sectors(k, op)) else [f"l2_{op}", f"l2_tex_{op}"]
    return out


# what each figure of a row with the request side is (bytes_findings' wording; the page's header says it too)
REQUEST_LABELS = {"L2 read": "L2 read (the SMs' requests: TMA + LSU loads)",
                  "L2 written": "L2 written (the SMs' write sectors)",
                  "XBAR read": "XBAR read (all bytes into the SMs: the requests' cross-check)"}


def bytes_compare(cli, r):
    """One v3_bytes.json row against the simulator: {name: (measured, simulated, ok)}.
    With the request side (has_requests): L2 read is requested_read against the sector level's read bytes
    within SECTOR_TOL, L2 written the SMs' write sectors (lts__t_sectors_srcunit_tex_op_write) x 32 against
    its write bytes within SECTOR_TOL, and, where ncu gave xbar_rd_bytes (every byte read into the SMs from
    the XBAR: TMA's, the LSU's misses, local memory), XBAR read against the read bytes within SECTOR_TOL
    (the cross-check: bytes reaching the SMs that the request side does not count fail it). The L2's read
    lookups are no target: Hopper's L2 request coalescer merges reads of the same sectors from several SMs
    before the L2 counts one (bytes_section, the probe).
    Without it (the old rule, run 6's data): L2 read (written) passes when either of its two counts
    (l2_sectors) is within SECTOR_TOL; the measured figure is the one nearer the simulator's.
    DRAM read within DRAM_TOL, DRAM written at most the DRAM level's plus DRAM_WRITE_SLACK of the sector
    level's writes, either way."""
    k = r["kernels"][0]
    c = sim.count(cli, sim.v3_flags(r))
    sec, dram = c["memory"]["sector"], c["memory"]["dram"]
    if has_requests(k):
        l2 = {"L2 read": (requested_read(k), sec["total_read_bytes"]),
              "L2 written": (32 * number(k, "l2_tex_wr"), sec["total_write_bytes"])}
    else:
        l2 = {"L2 read": (nearer(l2_sectors(k, "rd"), sec["total_read_bytes"]), sec["total_read_bytes"]),
              "L2 written": (nearer(l2_sectors(k, "wr"), sec["total_write_bytes"]), sec["total_write_bytes"])}
    out = l2 | {"DRAM read": (k["dram_rd"], dram["total_read_bytes"]),
                "DRAM written": (k["dram_wr"], dram["total_write_bytes"])}
    if has_requests(k) and number(k, "xbar_rd_bytes") is not None:
        out["XBAR read"] = (number(k, "xbar_rd_bytes"), sec["total_read_bytes"])
    tol = {"L2 read": SECTOR_TOL, "L2 written": SECTOR_TOL, "DRAM read": DRAM_TOL, "XBAR read": SECTOR_TOL}
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
        label = REQUEST_LABELS if has_requests(r["kernels"][0]) else {}
        for name, (m, s, ok) in compared.items():
            if not ok:
                out.append(f"{where}: {label.get(name, name)} {m:,.0f} B measured, simulator {s:,.0f} B ({m / s if s else float('inf'):.4f}x)")
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


def mb(x):
    """fmt_bytes, or '-' for a count ncu did not give (None)."""
    return "-" if x is None else fmt_bytes(x)


def sectors_mb(k, key):
    """A sector count of k (x 32 bytes) in MB, '-' when absent."""
    return mb(None if number(k, key) is None else 32 * number(k, key))


def share_rows(doc, cli):
    """v3_l2_share.json's rows beside the sector level: (row, Q blocks per head T_r = ceil(N / B_r), sector
    level's read bytes, L2 read lookups from the SMs and from all units in bytes (None when absent),
    requested_read or None). Rows without a checked launch, or whose config the simulator refuses, left out."""
    out = []
    for r in (doc or {}).get("rows", []):
        if not r["kernels"] or not r["run"] or cli is None:
            continue
        try:
            sec = sim.count(cli, sim.v3_flags(r))["memory"]["sector"]["total_read_bytes"]
        except RuntimeError:
            continue
        k = r["kernels"][0]
        tex, all_ = (None if x is None else 32 * x for x in reversed(l2_sectors(k, "rd")))
        out.append((r, -(-r["n"] // r["run"]["b_r"]), sec, tex, all_, requested_read(k)))
    return out


def share_phrase(rows):
    """The probe's figures for bytes_section's text: the SMs' L2 read lookups over the sector level, per
    Q blocks per head, without a mask and causal."""
    def by_tr(mask):
        got = {}
        for r, tr, sec, tex, _, _ in rows:
            if r["mask"] == mask and tex is not None and sec:
                got.setdefault(tr, []).append(tex / sec)
        return ", ".join(f"{min(v):.3f}x at {tr}" if len(v) == 1 or f"{min(v):.3f}" == f"{max(v):.3f}"
                         else f"{min(v):.3f}-{max(v):.3f}x at {tr}" for tr, v in sorted(got.items()))
    none, causal = by_tr("none"), by_tr("causal")
    return (f"without a mask {none} Q blocks per head" if none else "") + (
        f"; causal {causal}" if causal else "")


def request_section(doc, cli):
    """The rows with the request side: what the SMs asked for, what the LRC merged and the L2 looked up."""
    rows = [r for r in doc["rows"] if r["kernels"] and r["run"] and has_requests(r["kernels"][0])
            and not bytes_missing(r["kernels"][0])]
    out = ["### The reads: the SMs' requests, the L2 request coalescer, the L2's lookups\n"]
    if not rows:
        return out + ["Not in this data set: v3_bytes.json was profiled before ncu_bytes.py collected the request side",
                      "(532c7b7), so every row above is judged by the L2's own counts (the old rule). The next bytes run",
                      "(scripts/gpu/v3_kernel/README.md, \"The bytes' request side: the next device call\") measures it.", ""]
    out += ["MB (sector counts x 32). Sector level: the simulator's reads. Requests: TMA's global loads into the SMs",
            "plus the LSU's global loads (the target's measured side). XBAR: every byte read into the SMs (the",
            "cross-check). LRC: the sectors the L2 request coalescer returned to the GPCs",
            "(lrc__xbar2gpc_sectors_op_read), those whose request it merged with another SM's",
            "(lrc__request_sectors_op_read_coalescing_achieved_type_hardware) and those it asked the L2 for",
            "(lrc__lrc2xbar_sectors_op_read). L2 lookups: the L2's read sectors from the SMs / all units (no target).",
            "Last column: the SMs' lookups over requests - merged (1 where the LRC's merging is the whole difference).\n",
            "| dtype | d | mask | N | sector level | requests (TMA + LSU) | XBAR into the SMs | LRC to the GPCs | "
            "LRC merged | LRC to the L2 | L2 lookups: SMs / all | requests / sector level | SMs' lookups / sector level | "
            "SMs' lookups / (requests - merged) |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        k = r["kernels"][0]
        try:
            sec = sim.count(cli, sim.v3_flags(r))["memory"]["sector"]["total_read_bytes"]
        except RuntimeError:
            continue
        req, tex, merged = requested_read(k), number(k, "l2_tex_rd"), number(k, "lrc_merged_rd")
        lookups = "-" if tex is None else f"{32 * tex / sec:.3f}"
        net = "-" if tex is None or merged is None or req <= 32 * merged else f"{32 * tex / (req - 32 * merged):.3f}"
        out.append(f"| {where_variant(r)}{r['dtype']} | {r['d']} | {r['mask']} | {r['n']} | {fmt_bytes(sec)} | {mb(req)} | "
                   f"{mb(number(k, 'xbar_rd_bytes'))} | {sectors_mb(k, 'lrc_to_gpc_rd')} | {sectors_mb(k, 'lrc_merged_rd')} | "
                   f"{sectors_mb(k, 'lrc_to_l2_rd')} | {sectors_mb(k, 'l2_tex_rd')} / {sectors_mb(k, 'l2_rd')} | "
                   f"{req / sec:.3f} | {lookups} | {net} |")
    return out + [""]


def share_section(doc, cli, bytes_sha):
    """v3_l2_share.json (l2_share_probe.py): the SMs' L2 read lookups, and where measured the requests,
    beside the sector level, by Q blocks per head."""
    out = ["### The no-mask L2 reads: the probe\n"]
    if doc is None:
        return out + ["Not in this data set (`l2_share_probe.py`: v3_l2_share.json).", ""]
    m, rows = doc["meta"], share_rows(doc, cli)
    out += [f"`l2_share_probe.py` (v3_l2_share.json; commit {m['commit'][:12]}, {m['date']}, kernel sources "
            f"`{m['v3_sources_sha256'][:12]}`" + ("" if m["v3_sources_sha256"] == bytes_sha else ", not v3_bytes.json's") +
            "): fa3 fp16 d 128, B = 1, one launch per row as above, shapes whose thread blocks share a head's K/V to",
            "different degrees (Q blocks per head: ceil(N / B_r)); no target. MB.\n",
            "| mask | N | heads | Q blocks per head | B_r x B_c | sector level | L2 lookups: SMs / all | "
            "SMs' lookups / sector level | requests (TMA + LSU) | requests / sector level | LRC merged |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r, tr, sec, tex, all_, req in rows:
        k = r["kernels"][0]
        out.append(f"| {r['mask']} | {r['n']} | {r['heads']} | {tr} | {r['run']['b_r']} x {r['run']['b_c']} | "
                   f"{fmt_bytes(sec)} | {mb(tex)} / {mb(all_)} | {'-' if tex is None else f'{tex / sec:.3f}'} | {mb(req)} | "
                   f"{'-' if req is None else f'{req / sec:.3f}'} | {sectors_mb(k, 'lrc_merged_rd')} |")
    return out + [""]


def bytes_section(doc, cli, share=None):
    """The bytes page section: v3_bytes.json's rows against the simulator (bytes_compare), the request side
    (request_section) and, with v3_l2_share.json, the probe (share_section) whose figures the text cites."""
    out = ["## Bytes: Nsight Compute against the simulator's sector and DRAM levels\n"]
    if doc is None:
        return out + ["Not in this data set (ncu_run.sh PARTS bytes).", ""]
    probe = share_phrase(share_rows(share, cli)) if share else ""
    out += ["One launch of \"fa3\" per row (B = 2, H = 4), the checked one, profiled after ncu flushed the caches",
            "(`ncu_bytes.py`). Simulated: `flashlab count --algo v3 --br B_r --bc B_c --json` with the tile the run",
            "printed (the simulator's own tile for the config beside it where it differs) — the sector level",
            "(memory.sector: each TMA box and store in whole 32-byte sectors) and the DRAM level (memory.dram: the L2",
            "model's misses and write-backs).\n",
            "Which count the reads are held to. The sector level counts the sectors the kernel asks for. The L2's read",
            "counters (lts__t_sectors_op_read, _srcunit_tex_op_read) count the L2's lookups, and on Hopper those are",
            "fewer: the L2 request coalescer (LRC), between the GPCs and the L2, merges reads of the same sectors that",
            "several SMs request at about the same time into one lookup. Without a mask every Q block of a head walks",
            "the same K/V tiles in lockstep, so the L2 sees the fewer reads the more Q blocks share a head" +
            ("; the probe below, the SMs' lookups over the sector level:" if probe else "."),
            *([f"{probe}."] if probe else []),
            "So the target is the request side, counted in the SMs before the LRC: TMA's global-load bytes into L1TEX",
            "(l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld) plus the LSU's global-load bytes",
            "(l1tex__t_bytes_pipe_lsu_mem_global_op_ld: an upper bound, L1 hits included; the kernel loads through TMA",
            f"only), marked \"(requests)\", within {SECTOR_TOL:.0%} of the sector level's reads; every byte read into the SMs",
            f"from the XBAR (l1tex__m_xbar2l1tex_read_bytes) is its cross-check, within {SECTOR_TOL:.0%} too (\"XBAR read\"",
            "in the verdict). Writes, on those rows: the SMs' L2 write sectors (lts__t_sectors_srcunit_tex_op_write; all",
            "units count the writes crossing the two L2 partitions again). The L2's read lookups stay beside them as a",
            "diagnostic (no target), with the LRC's merged sectors: lookups ~ requests - merged. Rows profiled before",
            "ncu_bytes.py collected the request side (532c7b7) keep the old rule: two L2 counts each for reads and",
            "writes, all units (lts__t_sectors_op_read / _op_write: instruction and constant fetches and the traffic",
            "between the two L2 partitions included) and the SMs' L1/TEX requests (lts__t_sectors_srcunit_tex_op_read",
            "/ _write), the one nearer the simulator's shown, either within the target passes.\n",
            "DRAM bytes: dram__bytes_read / _write.sum. Rows marked (diagnostic) are ncu_bytes.py's DIAG: the no-mask",
            "shape under another scheduler (the sector level does not depend on it; compared with fa3's figures), to",
            "test whether the static scheduler's lockstep explains the no-mask L2 reads below the sector level; they",
            f"are no target. Targets: L2 within {SECTOR_TOL:.0%} (V2's rule for its ncu bytes), DRAM read within",
            f"{DRAM_TOL:.0%}, DRAM written at most the simulator's plus {DRAM_WRITE_SLACK:.0%} of the sector level's",
            "writes. MB = 10^6 bytes.\n",
            "| dtype | d | mask | N | B_r x B_c | L2 read MB: ncu / sim | L2 written MB: ncu / sim | DRAM read MB: ncu / sim | "
            "DRAM written MB: ncu / sim | L2 read lookups MB: SMs / all (no target) | atomics (sectors) | verdict |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    if cli is None:
        return out + ["(no flashlab CLI: the simulator's figures are not computed)", ""]
    for r in doc["rows"]:
        dt = where_variant(r) + r["dtype"]
        if not r["kernels"] or not r["run"] or bytes_missing(r["kernels"][0]):
            out.append(f"| {dt} | {r['d']} | {r['mask']} | {r['n']} | - | - | - | - | - | - | - | no data |")
            continue
        k = r["kernels"][0]
        try:
            c = bytes_compare(cli, r)
        except RuntimeError:
            out.append(f"| {dt} | {r['d']} | {r['mask']} | {r['n']} | {r['run']['b_r']} x {r['run']['b_c']} | "
                       "- | - | - | - | - | - | the simulator refused the config |")
            continue
        cell = {n: f"{fmt_bytes(m)} / {fmt_bytes(s)}" for n, (m, s, _) in c.items()}
        if has_requests(k):
            cell["L2 read"] += " (requests)"
        own = sim.count(cli, sim.v3_flags(r, tile=False))["config"]  # the same config with the simulator's own tile
        tile = f"{r['run']['b_r']} x {r['run']['b_c']}" + ("" if (own["b_r"], own["b_c"]) == (r["run"]["b_r"], r["run"]["b_c"])
                                                         else f" (sim's own: {own['b_r']} x {own['b_c']})")
        bad = [n for n, (_, _, ok) in c.items() if not ok]
        atom = sum(k.get(x, 0) for x in ("l2_atom", "l2_red") if isinstance(k.get(x), float))
        verdict = ("outside: " + ", ".join(bad) if bad else "within") + (" (no target)" if r.get("diagnostic") else "")
        out.append(f"| {dt} | {r['d']} | {r['mask']} | {r['n']} | {tile} | "
                   f"{cell['L2 read']} | {cell['L2 written']} | {cell['DRAM read']} | {cell['DRAM written']} | "
                   f"{sectors_mb(k, 'l2_tex_rd')} / {sectors_mb(k, 'l2_rd')} | {atom:.0f} | {verdict} |")
    out.append("")
    return out + request_section(doc, cli) + share_section(share, cli, doc["meta"]["v3_sources_sha256"])


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


def _with_requests(doc, lookups=1.0):
    """A copy of _bytes_doc's made-up set with the request side (REQUEST_KEYS, lsu_ld, the SMs' L2 counts):
    the SMs request and receive exactly the sector level's reads (TMA only, lsu_ld 0); the L2 looks up
    `lookups` of them (l2_rd, l2_tex_rd, the LRC's sectors to the L2), the LRC merging the rest."""
    import copy
    out = copy.deepcopy(doc)
    for r in out["rows"]:
        k = r["kernels"][0]
        req = k["l2_rd"]  # sectors: the sector level's reads / 32
        k |= {"tma_rd_bytes": 32 * req, "lsu_ld": 0.0, "xbar_rd_bytes": 32 * req, "lrc_to_gpc_rd": req,
              "lrc_merged_rd": (1 - lookups) * req, "lrc_to_l2_rd": lookups * req, "l2_rd": lookups * req,
              "l2_tex_rd": lookups * req, "l2_tex_wr": k["l2_wr"]}
    return out


def _without_requests(doc):
    """The same rows as ncu_bytes.py wrote them before 532c7b7: no request-side keys."""
    import copy
    out = copy.deepcopy(doc)
    for r in out["rows"]:
        for key in REQUEST_KEYS:
            r["kernels"][0].pop(key, None)
    return out


# ncu_bytes.BYTES' request-side keys (532c7b7); has_requests looks for the first
REQUEST_KEYS = ("tma_rd_bytes", "xbar_rd_bytes", "lrc_to_gpc_rd", "lrc_to_l2_rd", "lrc_merged_rd")


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
    req = _with_requests(clean)
    cases.append(("the SMs' requests equal to the sector level give no problem",
                  ["(none)"] if not bytes_problems(req, sha, cli) + bytes_findings(req, cli) else []))
    lrc = _with_requests(clean, lookups=0.5)
    cases.append(("L2 lookups 0.5x the sector level with the requests equal to it (the LRC merged half): no problem",
                  ["(none)"] if not bytes_problems(lrc, sha, cli) + bytes_findings(lrc, cli) else []))
    cases.append(("the same 0.5x lookups without the request side: outside (the old rule)",
                  bytes_findings(_without_requests(lrc), cli)))
    bad = copy.deepcopy(lrc)
    bad["rows"][4]["kernels"][0]["tma_rd_bytes"] *= 1.02
    cases.append(("the SMs' requests 2% over the sector level", [x for x in bytes_findings(bad, cli) if "the SMs' requests" in x]))
    bad = copy.deepcopy(lrc)
    bad["rows"][7]["kernels"][0]["xbar_rd_bytes"] *= 1.02
    cases.append(("the XBAR's bytes into the SMs 2% over, the requests equal",
                  [x for x in bytes_findings(bad, cli) if "XBAR read" in x]))
    bad = copy.deepcopy(lrc)
    bad["rows"][2]["kernels"][0]["tma_rd_bytes"] = None
    cases.append(("a row profiled with the request side but without its TMA bytes",
                  [x for x in bytes_problems(bad, sha, cli) if "tma_rd_bytes" in x]))
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
