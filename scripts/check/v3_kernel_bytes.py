"""V3's bytes (issue 27): Nsight Compute's DRAM bytes and L2 sectors of the staged kernel against the
simulator's sector and DRAM levels, and the no-mask L2 reads' probe — judged from the raw data here, each
a section of docs/validation/v3_h200.md. Used by scripts/check/v3_kernel_data.py (its problems, page and
selftest); the simulator's figures come from the built CLI (v3_kernel_sim.py).

Data (tests/data/gpu_v3/, from scripts/gpu/v3_kernel/ncu_run.sh):
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
- both, with the fabric counter: DRAM written and the L2's two partitions (v3_l2_partitions.py's section);
  with the H100's launches of the same kernel, O's write-back as a model fitted on one card and scored on
  the other (v3_l2_writeback.py's section).
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[0] / "gpu" / "v3_kernel"))
sys.path.insert(0, str(HERE.parents[0] / "gpu"))
import v3_kernel_sim as sim  # noqa: E402
from ncu_bytes import GRID as BYTES_GRID  # noqa: E402
import v3_l2_partitions as partitions  # noqa: E402
import v3_l2_writeback as writeback  # noqa: E402

SECTOR_TOL = 0.01
DRAM_TOL = 0.05
DRAM_WRITE_SLACK = 0.05


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


def fmt_bytes(x):
    return f"{x / 1e6:.3f}"


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
    return (out + request_section(doc, cli) + share_section(share, cli, doc["meta"]["v3_sources_sha256"])
            + partitions.section(doc, share) + writeback_section(cli))


def writeback_section(cli):
    """v3_l2_writeback.py's section: the model fitted on the H100's launches, scored on the H200's, and
    the simulator's figures beside it (`cli`)."""
    by_card = writeback.load()
    if not by_card:
        return []
    return writeback.section(by_card, writeback.fit(by_card[writeback.FIT_ON]), writeback.simulated_all(cli, by_card))


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


def selftest_cases(cli, sha):
    """(name, problems found) for made-up bytes data (the simulator's own figures, then each broken one):
    the clean sets must give no problem, each broken one must give one."""
    import copy
    cases = []
    if cli is None:
        return [("the bytes' cases (no flashlab CLI: pass --flashlab PATH)", [])]
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
    return cases
