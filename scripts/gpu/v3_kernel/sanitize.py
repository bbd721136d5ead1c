#!/usr/bin/env python3
"""compute-sanitizer on V3's staged kernel (issue 27: memory errors, shared-memory races and barrier
misuse checked by the tools, not only by the float64 comparison).

    python3 scripts/gpu/v3_kernel/sanitize.py --bin V3 --out DIR --commit SHA [--jobs 4] [--deadline SECONDS] [--timeout 180]

Runs (RUNS): memcheck, racecheck and synccheck on `V3 run VARIANT DTYPE D MASK 1 N 2` (no --time: the
checked launch and its repeat, O and L compared with float64 on every row) for "fa3" at fp16 d 64 / 128,
none / causal, N 1,000 (ragged tiles), bf16 d 128 causal N 3,000, and one shape per ablation variant
(variants.cuh: stages1, no_pingpong, no_overlap, no_ws, grid, static, dynamic, br128). Each run is its
own process (`compute-sanitizer --tool T --error-exitcode 9`, --timeout s at most, default 180), `--jobs` at a time (they
check, they do not time). Kept raw per run: the tool, the program's arguments, the exit status, every
line of the tool's output that holds "SUMMARY" (memcheck / synccheck: "ERROR SUMMARY: n errors";
racecheck: "RACECHECK SUMMARY: n hazards displayed (e errors, w warnings)"), the output's last 40 lines
and the program's JSON line. The verdict is the CI check's (scripts/check/v3_kernel_extra.py), from
that text. Writes DIR/v3_sanitizer.json (meta: gpu, driver, commit, command, date, the sanitizer's
version, the V3 sources' SHA-256, skipped runs) and DIR/sanitizer_logs.tar.gz (full outputs).
"""

import argparse
import json
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
import common  # noqa: E402

TOOLS = ("memcheck", "racecheck", "synccheck")
SHAPES = ([("fa3", "fp16", d, m, 1000) for d in (64, 128) for m in ("none", "causal")] + [("fa3", "bf16", 128, "causal", 3000)]
          + [("stages1", "fp16", 128, "causal", 1000), ("no_pingpong", "fp16", 128, "none", 1000),
             ("no_overlap", "fp16", 64, "causal", 1000), ("no_ws", "fp16", 128, "causal", 1000),
             ("grid", "fp16", 64, "none", 1000), ("static", "fp16", 64, "causal", 1000),
             ("dynamic", "fp16", 128, "causal", 1000), ("br128", "fp16", 64, "causal", 1000)])
RUNS = [(t, s) for s in SHAPES for t in TOOLS]


def one(binary, tool, shape, logs, timeout=180):
    """One compute-sanitizer process; returns its raw record."""
    v, dt, d, m, n = shape
    args = ["run", v, dt, str(d), m, "1", str(n), "2", "--seed", "7"]
    cmd = ["compute-sanitizer", "--tool", tool, "--error-exitcode", "9", str(binary), *args]
    rec = {"tool": tool, "variant": v, "dtype": dt, "d": d, "mask": m, "batch": 1, "n": n, "heads": 2, "args": args}
    t = time.time()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return rec | {"exit": "timeout", "summary": [], "tail": [], "run": None, "seconds": round(time.time() - t, 1)}
    text = proc.stdout + proc.stderr
    (logs / f"{tool}_{v}_{dt}_d{d}_{m}_n{n}.log").write_text(" ".join(cmd) + "\n\n" + text)
    runs = [json.loads(x) for x in proc.stdout.splitlines() if x.startswith("{")]
    return rec | {"exit": proc.returncode, "summary": [x for x in text.splitlines() if "SUMMARY" in x],
                  "tail": text.splitlines()[-40:], "run": runs[-1] if runs else None, "seconds": round(time.time() - t, 1)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--deadline", type=float, default=1e9, help="seconds from the start after which no run starts")
    ap.add_argument("--timeout", type=float, default=180, help="seconds one sanitizer process may take")
    args = ap.parse_args()
    t0 = time.time()
    args.out.mkdir(parents=True, exist_ok=True)
    logs = Path("/tmp/v3_sanitizer_logs")
    logs.mkdir(parents=True, exist_ok=True)
    meta = common.metadata(("gpu", "driver", "commit", "command", "date"), commit=args.commit,
                           command="python3 scripts/gpu/v3_kernel/sanitize.py " + " ".join(sys.argv[1:]))
    meta |= {"sanitizer": common.last_line(["compute-sanitizer", "--version"]), "v3_sources_sha256": common.v3_source_hash(),
             "skipped": []}

    rows, lock, out = [], threading.Lock(), args.out / "v3_sanitizer.json"

    def job(run):
        if time.time() - t0 > args.deadline:
            with lock:
                meta["skipped"].append(f"{run[0]} {' '.join(map(str, run[1]))}")
            return
        r = one(args.bin, *run, logs, args.timeout)
        with lock:  # the file after each run: a call cut short keeps what ran
            rows.append(r)
            out.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
        print(f"sanitizer {r['tool']:9} {r['variant']:11} {r['dtype']} d={r['d']} {r['mask']:6} N={r['n']}: exit "
              f"{r['exit']}, {r['seconds']} s, {' | '.join(r['summary']) or 'no summary'}", flush=True)

    with ThreadPoolExecutor(args.jobs) as pool:
        list(pool.map(job, RUNS))
    rows.sort(key=lambda r: RUNS.index((r["tool"], (r["variant"], r["dtype"], r["d"], r["mask"], r["n"]))))
    out.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    common.sh(["tar", "czf", str(args.out / "sanitizer_logs.tar.gz"), "-C", str(logs.parent), logs.name])
    return 0


if __name__ == "__main__":
    sys.exit(main())
