#!/usr/bin/env python3
"""FA2's deterministic backward (`--backward-form deterministic`) on a GPU machine.

    python3 scripts/gpu/deterministic_validate.py --out OUT [--gpu build-gpu/kernels/flashlab-gpu]
                                                  [--commit SHA] [--driver VER]

  1. events and numbers: every row of GRID runs through flashlab-gpu --pass backward
     --backward-form deterministic: the instrumented backward's block-level events must equal the
     simulator's (flashlab-gpu diffs them), dQ, dK, dV must be within the simulator's tolerance of
     the float64 chain rule; the rows marked trace keep their text GPU traces (the CI test
     tests/kernels/gpu_deterministic_test.cpp diffs them against fresh simulator traces);
  2. with --ncu, Nsight Compute's global load, store and reduction (atomic) bytes of the three
     backward kernels of the rows marked ncu (the CI test compares them with the simulator's
     request bytes per launch);
  3. the same backward REPEATS times in each form (fp16, batch 1, 2 heads, N = 4096, d = 64, FA2's
     128 x 128 tile with 8 warps; the same seeded inputs every run): whether dQ (fp16 bits, as the
     convert launch stores it) is bit-identical across the runs, and the largest difference seen.
Writes OUT/deterministic_results.json, OUT/deterministic_report.md, the traces OUT/det-*.trace and
OUT/deterministic_logs.txt (config files and dQ dumps go to --work). Exit 0 when every row passed and the deterministic runs were identical.
"""

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import ncu  # noqa: E402

NCU_METRICS = {k: ncu.NAMES[k] for k in ("ld", "st", "red", "atom")}
NCU_ROWS = ["det-ragged", "det-causal", "det-nokey"]

GRID = [  # (name, flags, covers, trace)
    ("det-ragged", "--nq 1000 --nk 1000 --d 64 --br 64 --bc 64 --warps 4 --batch 4 --heads 11",
     "44 heads: nsplits = 3 over T_c = 16 (thread blocks walk 6, 5, 5 K/V blocks), ragged last tile", True),
    ("det-causal", "--nq 1024 --nk 1024 --d 64 --br 128 --bc 128 --warps 8 --mask causal --batch 2 --heads 12",
     "causal, FA2's d = 64 tile, nsplits = 6 over T_c = 8", True),
    ("det-nokey", "--nq 700 --nk 500 --d 64 --br 64 --bc 64 --warps 4 --mask causal-br",
     "one head: nsplits = 132 > T_c = 8 (idle thread blocks), rows with no key", True),
    ("det-d128-window", "--nq 600 --nk 900 --d 128 --br 64 --bc 64 --warps 4 --dtype bf16 --mask window:100,50 --batch 3 --heads 5",
     "d = 128 bf16 window, nsplits = 9 over T_c = 15", False),
    ("det-d128-fa2", "--nq 1000 --nk 1000 --d 128 --br 64 --bc 128 --warps 8 --mask causal --batch 2 --heads 9",
     "FA2's d = 128 tile (64 x 128 x 8), causal, 18 heads: nsplits = 8 over T_c = 8", False),
    ("det-d32", "--nq 257 --nk 511 --d 32 --br 128 --bc 128 --warps 8 --mask causal-br --dtype bf16 --batch 2 --heads 33",
     "d = 32, 66 heads: nsplits = 2 over T_c = 4", False),
]
BASE = "--algo v2 --pass backward --backward-form deterministic"
REPEAT = "--algo v2 --pass backward --nq 4096 --nk 4096 --d 64 --br 128 --bc 128 --warps 8 --batch 1 --heads 2 --dtype fp16"
REPEATS = 5


def run_gpu(gpu, lines, work, name, commit, driver, log):
    extra = (["--commit", commit] if commit else []) + (["--driver", driver] if driver else [])
    res, p = common.run_configs(gpu, lines, work / f"{name}.txt", work / f"{name}.json", extra)
    log.append(f"$ {' '.join(p.args)}\n{p.stdout}\n--- stderr ---\n{p.stderr}\n")
    return res


def nsplits(flags, sms):
    """FA2's nsplits = ceil(SMs / (batch x heads)) (flash_api.cpp mha_bwd)."""
    w = flags.split()
    bh = int(w[w.index("--batch") + 1]) if "--batch" in w else 1
    bh *= int(w[w.index("--heads") + 1]) if "--heads" in w else 1
    return -(-sms // bh)


# What determinism costs: the backward of issue 12's performance rows (fp16, batch 4, 16 heads,
# N = 4096; FA2's tile at d = 64, 64 x 64 x 4 at d = 128) in both forms, CUDA events, median.
TIME_ROWS = [f"--algo v2 --pass backward --batch 4 --heads 16 --seq 4096 --d {d} {tile} --mask {mask} --dtype fp16"
             for d, tile in ((64, "--br 128 --bc 128 --warps 8"), (128, "--br 64 --bc 64 --warps 4"))
             for mask in ("none", "causal")]


def time_forms(a, out, work, log):
    lines = [f"{row} --backward-form {form} --no-events --no-check --time --warmup 3 --reps 20"
             for row in TIME_ROWS for form in ("released", "deterministic")]
    res = run_gpu(a.gpu, lines, work, "timing", a.commit, a.driver, log)
    rows = [{"flags": line, "median_ms": r["timing"]["median_ms"], "tflops": r["timing"]["tflops"]}
            for line, r in zip(lines, res)]
    device = res[0]["device"] if res else {}
    doc = {"meta": common.metadata(("device", "driver", "commit", "command", "date"), device=device.get("name", ""),
                                   driver=device.get("driver", a.driver), commit=a.commit,
                                   command=" ".join(["python3"] + sys.argv)),
           "rows": rows}
    (out / "timing.json").write_text(json.dumps(doc, indent=1) + "\n")
    for k in range(0, len(rows), 2):
        r, d = rows[k], rows[k + 1]
        print(f"{r['flags'][:90]}: released {r['median_ms']:.3f} ms, deterministic {d['median_ms']:.3f} ms "
              f"({d['median_ms'] / r['median_ms']:.2f}x)")
    return 0 if len(res) == len(lines) else 1


def fp16_bits(path):
    return np.fromfile(path, dtype=np.uint16)


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--gpu", default="build-gpu/kernels/flashlab-gpu")
    ap.add_argument("--commit", default="")
    ap.add_argument("--driver", default="")
    ap.add_argument("--work", default="/tmp/deterministic_work", help="config files and dQ dumps (not kept)")
    ap.add_argument("--ncu", action="store_true", help="Nsight Compute bytes of the rows in NCU_ROWS")
    ap.add_argument("--only-ncu", action="store_true", help="the Nsight Compute step alone (ncu_results.json)")
    ap.add_argument("--only-time", action="store_true",
                    help="what determinism costs: released and deterministic backward timed (timing.json)")
    return ap.parse_args()


def nsight(a, out, work, log):
    """Step 2: the three backward kernels of each NCU_ROWS row under ncu (OUT/ncu_results.json).
    Returns whether ncu reported three kernels per row."""
    rows = [(n, f) for n, f, _, _ in GRID if n in NCU_ROWS]
    cfg = work / "ncu_configs.txt"
    cfg.write_text("".join(f"{BASE} {f} --profile\n" for _, f in rows))
    cmd = ncu.command(NCU_METRICS) + ["--kernel-name", "regex:^fl_v2_bwd", str(a.gpu), "--configs", str(cfg)]
    p = common.sh(cmd)
    log.append(f"$ {' '.join(cmd)}\n{p.stdout}\n--- stderr ---\n{p.stderr}\n")
    found = ncu.launches(p.stdout, NCU_METRICS)
    ncu_rows = []
    for k, (name, flags) in enumerate(rows):  # three kernels per row: dot_do_o, dq_dk_dv, convert_dq
        for hw in found[3 * k:3 * k + 3]:
            ncu_rows.append({"row": name, "flags": f"{BASE} {flags}", "kernel": ncu.short_name(hw["name"]),
                             "grid": hw["grid"], "ncu": {m: int(hw.get(m, 0)) for m in NCU_METRICS}})
    (out / "ncu_results.json").write_text(json.dumps({"command": " ".join(sys.argv), "rows": ncu_rows}, indent=1) + "\n")
    print(json.dumps(ncu_rows, indent=1))
    return len(found) == 3 * len(rows)


def grid_rows(a, out, work, log):
    """Step 1: every GRID row's events and gradients. Returns (the rows, whether all ran and passed,
    the device flashlab-gpu reported)."""
    lines = [f"{BASE} {flags}" + (common.trace_flags(out / (name + ".trace")) if trace else "")
             for name, flags, _, trace in GRID]
    res = run_gpu(a.gpu, lines, work, "grid", a.commit, a.driver, log)
    rows = []
    for (name, flags, covers, _), r in zip(GRID, res):
        g = r["grads"]["heads"]
        rows.append({"name": name, "flags": f"{BASE} {flags}", "covers": covers,
                     "dq_splits": nsplits(flags, r["device"]["sms"]), "events_agree": r["events"]["agree"],
                     "gpu_events": r["events"]["gpu"], "sim_events": r["events"]["sim"],
                     "worst_dQ": common.worst(g, "rel_fro_dQ"), "worst_dK": common.worst(g, "rel_fro_dK"),
                     "worst_dV": common.worst(g, "rel_fro_dV"), "tol": g[0]["tol"],
                     "within": r["grads"]["within"], "canary": r["numbers"]["canary_intact"], "passed": r["passed"]})
    ok = len(res) == len(GRID) and all(r["passed"] for r in res)
    return rows, ok, res[0]["device"] if res else {}


def repeated(a, form, work, log):
    """Step 3: the REPEAT backward REPEATS times in `form`: how far dQ's fp16 bits move from run 0's.
    Returns (the summary, whether every run gave a result)."""
    lines = []
    for k in range(REPEATS):
        check = "" if k == 0 else " --no-check"
        lines.append(f"{REPEAT} --backward-form {form} --no-events{check} --dump {work / form / str(k)}")
    rr = run_gpu(a.gpu, lines, work, f"repeat-{form}", a.commit, a.driver, log)
    dq = [fp16_bits(work / form / str(k) / "dq.bin") for k in range(REPEATS)]
    first = dq[0].view(np.float16).astype(np.float64)
    max_diff, differing = 0.0, []
    for k in range(1, REPEATS):
        other = dq[k].view(np.float16).astype(np.float64)
        differing.append(int(np.count_nonzero(dq[k] != dq[0])))
        max_diff = max(max_diff, float(np.max(np.abs(other - first))))
    return {"flags": f"{REPEAT} --backward-form {form}", "runs": REPEATS, "elements": int(dq[0].size),
            "bit_identical": all(n == 0 for n in differing),
            "elements_differing_from_run_0": differing, "max_abs_diff": max_diff,
            "max_abs_dQ": float(np.max(np.abs(first))),
            "run0_within": rr[0]["grads"]["within"] if rr else None,
            "run0_worst_dQ": common.worst(rr[0]["grads"]["heads"], "rel_fro_dQ") if rr else None}, len(rr) == REPEATS


def report(result):
    """The Markdown report of deterministic_results.json's document."""
    meta, repeats = result["meta"], result["repeats"]
    md = [f"# Deterministic backward on {meta['device']} (driver {meta['driver']}, commit {meta['commit']})", "",
          f"`{meta['command']}`, {meta['date']}", ""]
    md += common.table_head("row", "covers", "events gpu = sim", "worst dQ", "worst dK", "worst dV", "tol", "passed")
    for r in result["grid"]:
        md.append(f"| {r['name']} | {r['covers']} | {r['gpu_events']} = {r['sim_events']}: {r['events_agree']} | "
                  f"{r['worst_dQ']:.2e} | {r['worst_dK']:.2e} | {r['worst_dV']:.2e} | {r['tol']:.2e} | {r['passed']} |")
    md += ["", f"Repeats ({REPEATS} runs each, same inputs): `{REPEAT}`", ""]
    md += common.table_head("form", "dQ bit-identical",
                            f"elements differing from run 0 (of {repeats['released']['elements']})",
                            "max abs difference", "max abs dQ")
    for form, x in repeats.items():
        md.append(f"| {form} | {x['bit_identical']} | {x['elements_differing_from_run_0']} | {x['max_abs_diff']:.3e} | "
                  f"{x['max_abs_dQ']:.3e} |")
    return md


def main():
    a = parse_args()
    out, work = Path(a.out), Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    log = []
    if a.only_time:
        return time_forms(a, out, work, log)
    if a.ncu or a.only_ncu:
        found_all = nsight(a, out, work, log)
        if a.only_ncu:
            (out / "deterministic_logs.txt").write_text("\n".join(log))
            return 0 if found_all else 1
    rows, ok, device = grid_rows(a, out, work, log)
    repeats = {}
    for form in ("released", "deterministic"):
        repeats[form], ran = repeated(a, form, work, log)
        ok = ok and ran
    ok = ok and repeats["deterministic"]["bit_identical"]
    meta = common.metadata(("device", "driver", "nvidia_smi", "sms", "commit", "command", "date"),
                           device=device.get("name"), driver=device.get("driver"), sms=device.get("sms"),
                           commit=a.commit, command=" ".join(sys.argv))
    result = {"meta": meta, "grid": rows, "repeats": repeats, "passed": ok}
    (out / "deterministic_results.json").write_text(json.dumps(result, indent=1) + "\n")
    common.write_markdown(out / "deterministic_report.md", report(result))
    (out / "deterministic_logs.txt").write_text("\n".join(log))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
