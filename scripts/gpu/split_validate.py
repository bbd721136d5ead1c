#!/usr/bin/env python3
"""Validates split-KV (fl_v2_forward_split + fl_v2_combine) and grouped K/V heads, or with --grid
variant every combination of the forward's five switches (the variants between V1 and V2), on a GPU
machine.

    python3 scripts/gpu/split_validate.py --out OUT [--grid split|variant] [--build-dir DIR] [--commit SHA]

Builds nothing: flashlab-gpu and flashlab must already be built in --build-dir (default build-gpu).
For every row of SPLIT_GRID or VARIANT_GRID (scripts/gpu/grid.py):
  1. events and numbers: flashlab-gpu runs the instrumented launches, whose block-level events (and
     m, l of one Q block, every split's) must equal the simulator's (flashlab diff), then the plain
     ones, whose O and L must be within the simulator's tolerance of float64 (and Oacc, Lacc, O, L
     written exactly where they belong: canaries intact);
  2. Nsight Compute: each kernel's global load and store bytes against the simulator's sector level
     (the bytes the kernels move in whole 32-byte sectors: flashlab-gpu's bytes.kernel, per tensor,
     summed over the tensors each launch moves) and beside its request level per launch (`flashlab
     count --json` launches: the papers' bytes);
  3. compute-sanitizer memcheck on the rows marked sanitize.
Writes OUT/results.json, OUT/report.md, OUT/traces/*.trace (text GPU traces of the rows marked
trace) and OUT/logs.tar.gz. Exit 0 when every check passed.
"""

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import grid as grid_mod  # noqa: E402
import ncu  # noqa: E402

# The tensors each split-KV launch loads and stores (schedule.hpp make_split_schedule): the sector
# level per launch is the sum of its tensors' (no tensor moves the same way in both launches).
LAUNCH_TENSORS = {
    "v2_forward_split": {"ld": ["Q", "K", "V"], "st": ["Oacc", "Lacc"]},
    "flash_combine": {"ld": ["Lacc", "Oacc"], "st": ["O", "L"]},
}


# The grids this script runs: grid.py's list and the report's title.
GRIDS = {"split": ("SPLIT_GRID", "Split-KV and grouped K/V heads"),
         "variant": ("VARIANT_GRID", "The variants between V1 and V2 (every combination of the five switches)")}


def run_grid(gpu, rows, out, logs, commit):
    """flashlab-gpu on every row, one process; returns the JSON list (one object per row)."""
    lines = [g.flags + (common.trace_flags(out / "traces" / (g.name + ".trace")) if g.trace else "") for g in rows]
    (out / "traces").mkdir(parents=True, exist_ok=True)
    results, p = common.run_configs(gpu, lines, logs / "configs.txt", logs / "grid.json",
                                    ["--commit", commit] if commit else [], logs / "grid.log")
    print(p.stdout[-6000:], p.stderr[-2000:], flush=True)
    return results, p.returncode


def config_flags(flags):
    """The configuration flags of a flashlab-gpu line (without flashlab-gpu's own --stats-blocks)."""
    words = flags.split()
    out = []
    for k in range(0, len(words), 2):
        if words[k] != "--stats-blocks":
            out += words[k:k + 2]
    return out


def sector_per_launch(result, launches):
    """The simulator's sector bytes of each launch: one launch, the row's totals; split-KV's two, by tensor."""
    kernel = result["bytes"]["kernel"]
    if len(launches) == 1:
        return [{"ld": kernel["ld"], "st": kernel["st"]}]
    tensors = kernel["tensors"]
    out = []
    for sl in launches:
        want = LAUNCH_TENSORS.get(sl["name"])
        if want is None:  # standard attention's three kernels: compared as a whole
            return None
        out.append({d: sum(tensors.get(t, {}).get(d, 0) for t in want[d]) for d in ("ld", "st")})
    return out


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--build-dir", default="build-gpu")
    ap.add_argument("--commit", default="")
    ap.add_argument("--grid", choices=sorted(GRIDS), default="split")
    ap.add_argument("--quick", action="store_true", help="events and numbers only (no Nsight Compute, no sanitizer)")
    return ap.parse_args()


def grid_row(g, r, rc):
    """The report's row for grid row g: its events, m and l, O and L against float64 (r: its result)."""
    if r is None:
        return {"name": g.name, "flags": g.flags, "covers": g.covers, "error": f"no result (rc {rc})"}
    heads, ev, num, cfg = r["numbers"]["heads"], r["events"], r["numbers"], r["config"]
    return {"name": g.name, "flags": g.flags, "covers": g.covers, "splits": cfg.get("splits", 1),
            "tile": f"{cfg['b_r']}x{cfg['b_c']}x{cfg['warps']}",
            "events_agree": ev["agree"], "gpu_events": ev["gpu"], "sim_events": ev["sim"],
            "stat_values": ev["stat_values"], "stat_differing": ev["stat_differing"],
            "worst_O": common.worst(heads, "rel_fro_O"), "tol_O": num["tol_O"],
            "worst_L_over_tol": common.worst(heads, "L_over_tol"),
            "within": num["within"], "canary": num["canary_intact"],
            "passed": r["passed"], "diff": "" if ev["agree"] else ev["report"][:3000]}


def kernel_rows(g, result, launches, p):
    """Yields, per kernel of row g, ncu's bytes (p: ncu.profile's row, per kernel) beside the simulator's
    sector level and request level (launches: `flashlab count --json`'s)."""
    sector = sector_per_launch(result, launches)
    if sector is None:  # compared as a whole: the row's totals
        hw = [{"name": "+".join(ncu.short_name(x["name"]) for x in p["launches"]),
               "ld": p["ld"], "st": p["st"], "dram_rd": p["dram_rd"], "dram_wr": p["dram_wr"]}]
        sector = [{"ld": result["bytes"]["kernel"]["ld"], "st": result["bytes"]["kernel"]["st"]}]
        request = [{"name": "all launches", "read_bytes": sum(x["read_bytes"] for x in launches),
                    "write_bytes": sum(x["write_bytes"] for x in launches)}]
    else:
        hw = [x | {"name": ncu.short_name(x["name"])} for x in p["launches"]]
        request = launches
    for h, sec, req in zip(hw, sector, request):
        row = {"row": g.name, "kernel": req["name"], "ncu_kernel": h["name"],
               "ncu": {m: h[m] for m in ("ld", "st", "dram_rd", "dram_wr")},
               "sector": sec, "request": {"ld": req["read_bytes"], "st": req["write_bytes"]}}
        row["equals_sector"] = h["ld"] == sec["ld"] and h["st"] == sec["st"]
        yield row


def nsight(gpu, flashlab, rows, results, logs, quick):
    """Level 2: the rows marked ncu (none with `quick`, though ncu still runs), per kernel. Returns
    (kernel rows, the error or None)."""
    by_name = {g.name: r for g, r in zip(rows, results)}
    prof_rows = [g for g in rows if g.ncu and g.name in by_name and not quick]
    sims = [common.simulated_launches(flashlab, config_flags(g.flags)) for g in prof_rows]
    out = []
    try:
        prof = ncu.profile(gpu, prof_rows, logs, logs / "ncu.log", kernels=[len(s) for s in sims], per_kernel=True)
        for g, s, p in zip(prof_rows, sims, prof):
            out.extend(kernel_rows(g, by_name[g.name], s, p))  # the rows before an error kept
    except Exception as e:  # noqa: BLE001 - reported, not fatal to the other checks
        return out, repr(e)
    return out, None


def memcheck(gpu, rows, logs):
    """Level 3: compute-sanitizer memcheck on the rows marked sanitize, one process each."""
    out = []
    for g in [g for g in rows if g.sanitize]:
        p, summary = common.compute_sanitizer(gpu, g.flags.split(), "memcheck", logs / f"sanitizer-memcheck-{g.name}.log")
        clean = p.returncode == 0 and bool(summary) and "0 errors" in summary[-1]
        out.append({"row": g.name, "tool": "memcheck", "rc": p.returncode, "summary": summary[-1:] or [""],
                    "clean": clean})
    return out


def grid_table(grid_rows):
    md = common.table_head("row", "splits", "tile", "events (gpu/sim)", "m, l", "O rel. err", "tol", "L / tol", "result")
    for r in grid_rows:
        if "error" in r:
            md.append(f"| {r['name']} | | | {r['error']} | | | | | FAIL |")
            continue
        md.append(f"| {r['name']} | {r['splits']} | {r['tile']} | "
                  f"{'agree' if r['events_agree'] else 'DIFFER'} ({r['gpu_events']}/{r['sim_events']}) | "
                  f"{r['stat_values'] - r['stat_differing']}/{r['stat_values']} | {r['worst_O']:.2e} | {r['tol_O']:.1e} | "
                  f"{r['worst_L_over_tol']:.3f} | {'ok' if r['passed'] else 'FAIL'}{'' if r['canary'] else ' (canary)'} |")
    return md


def ncu_table(ncu_rows):
    md = ["Nsight Compute, global load and store bytes per kernel: measured / the simulator's sector level "
          "(what the kernels move in 32-byte sectors) / its request level (the papers' bytes):", ""]
    md += common.table_head("row", "kernel", "ld ncu / sector / request", "st ncu / sector / request", "equal", "DRAM rd / wr")
    for r in ncu_rows:
        n, s, q = r["ncu"], r["sector"], r["request"]
        md.append(f"| {r['row']} | {r['kernel']} | {n['ld']:,} / {s['ld']:,} / {q['ld']:,} | "
                  f"{n['st']:,} / {s['st']:,} / {q['st']:,} | {'yes' if r['equals_sector'] else 'NO'} | "
                  f"{n['dram_rd']:,} / {n['dram_wr']:,} |")
    return md


def report(res, title, commit):
    """The Markdown report of results.json's document `res`."""
    meta = res["meta"]
    md = [f"# {title} on {meta['device']}", "",
          f"driver {meta['driver']}, {meta['cuda']}, commit {commit}, {meta['date']}", "", f"`{meta['command']}`", ""]
    md += grid_table(res["grid"]) + [""] + ncu_table(res["ncu"])
    if res["ncu_error"]:
        md.append(f"\nncu failed: {res['ncu_error']}")
    md += ["", "compute-sanitizer:", ""] + [f"- {s['row']} {s['tool']}: rc {s['rc']} {s['summary'][0]}"
                                           for s in res["sanitizer"]]
    return md + ["", f"passed: {res['passed']}"]


def main():
    a = parse_args()
    out = Path(a.out)
    logs = out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    gpu, flashlab = common.binaries(a.build_dir)
    meta = common.metadata(("device", "driver", "commit", "command", "cuda", "date"), missing="?", commit=a.commit,
                           command=" ".join(sys.argv))
    rows, title = getattr(grid_mod, GRIDS[a.grid][0]), GRIDS[a.grid][1]
    results, rc = run_grid(gpu, rows, out, logs, a.commit)
    grid_rows = [grid_row(g, r, rc) for g, r in common.with_results(rows, results)]
    ncu_rows, ncu_error = nsight(gpu, flashlab, rows, results, logs, a.quick)
    sanitizer = memcheck(gpu, rows, logs) if not a.quick else []
    ok = (all(r.get("passed", False) for r in grid_rows) and all(r["equals_sector"] for r in ncu_rows)
          and ncu_error is None and all(s["clean"] for s in sanitizer))
    res = {"meta": meta, "grid": grid_rows, "ncu": ncu_rows, "ncu_error": ncu_error, "sanitizer": sanitizer,
           "passed": ok}
    (out / "results.json").write_text(json.dumps(res, indent=1) + "\n")
    common.write_markdown(out / "report.md", report(res, title, a.commit))
    common.tar_folder(out / "logs.tar.gz", logs)
    for f in logs.iterdir():  # only the tarball comes back
        if f.is_file():
            f.unlink()
    logs.rmdir()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
