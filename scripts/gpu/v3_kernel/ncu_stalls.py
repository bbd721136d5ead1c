#!/usr/bin/env python3
"""Why V3's consumer warps do not issue: Nsight Compute's warp states and PC sampling of the staged V3
kernel (issue 27, the time model's tensor/MUFU pair): per configuration one profiled launch (after the
checked launch and its repeat) with the sections WarpStateStats, SchedulerStats, InstructionStats and
SourceCounters, exported; then the report read back twice, as every metric of the launch (`--page raw`)
and as the SASS with each instruction's executed count and sampled stall reasons (`--page source
--print-source sass`).

    python3 scripts/gpu/v3_kernel/ncu_stalls.py --bin V3 --out DIR [--commit SHA] [--deadline SECONDS]
        [--config "VARIANT D MASK B N H" ...]   (default: CONFIGS below)

DIR/v3_stalls.json: meta (gpu, driver, ncu, commit, command, date, the V3 sources' SHA-256) and one row
per configuration: its run line (the check of O and L), the raw metrics whose names hold `stall`,
`issue`, `warps_active`, `inst_executed` or `cycles` (name -> value, base units), and the path of its
source page in DIR/ncu_stalls_pages.tar.gz (one CSV per configuration, as ncu printed it).
Clocks are left as they are (--clock-control none), the caches flushed before the launch.
"""

import argparse
import csv
import io
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
import common  # noqa: E402

# (variant, d, mask, batch, N, heads): FA3's schedule at both head sizes, then the switches that move
# most (ablation: no warp specialization, one stage, no intra-warpgroup overlap)
CONFIGS = [("fa3", 128, "none", 1, 16384, 16), ("fa3", 64, "none", 1, 16384, 32),
           ("fa3", 128, "causal", 1, 16384, 16), ("no_ws", 128, "none", 1, 16384, 16),
           ("stages1", 128, "none", 1, 16384, 16), ("no_overlap", 128, "none", 1, 16384, 16),
           ("no_ws", 64, "none", 1, 16384, 32), ("no_overlap", 64, "none", 1, 16384, 32),
           # what one stage, no ping-pong and no warp specialization cost at d 64, where the time models
           # miss them (docs/model.md "The compiled order"): the ablation's shapes beside FA3's
           ("fa3", 64, "none", 4, 4096, 32), ("stages1", 64, "none", 4, 4096, 32), ("stages1", 64, "none", 1, 16384, 32),
           ("fa3", 64, "causal", 1, 16384, 32), ("stages1", 64, "causal", 1, 16384, 32),
           ("no_pingpong", 64, "causal", 1, 16384, 32)]
SECTIONS = ("WarpStateStats", "SchedulerStats", "InstructionStats", "SourceCounters")
KEEP = ("stall", "issue", "warps_active", "inst_executed", "cycles", "gpu__time_duration")


def raw_metrics(text):
    """ncu --page raw --csv: the first launch's metrics kept by KEEP, name -> float (units row skipped)."""
    rows = list(csv.reader(io.StringIO(text[text.find('"ID"'):])))
    if len(rows) < 3:
        return {}
    out = {}
    for name, value in zip(rows[0], rows[2]):
        if any(k in name for k in KEEP):
            try:
                out[name] = float(value.replace(",", ""))
            except ValueError:
                pass
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--deadline", type=float, default=1e9)
    ap.add_argument("--config", action="append", default=[],
                    help='one configuration instead of CONFIGS, "VARIANT D MASK B N H" (fp16; repeatable)')
    args = ap.parse_args()
    configs = CONFIGS
    if args.config:
        configs = []
        for c in args.config:
            f = c.split()
            if len(f) != 6 or f[2] not in ("none", "causal") or not all(x.isdigit() for x in f[1:2] + f[3:]):
                ap.error(f"--config {c!r}: VARIANT D MASK B N H, MASK none or causal, D B N H integers")
            configs.append((f[0], int(f[1]), f[2], int(f[3]), int(f[4]), int(f[5])))
    t0 = time.time()
    args.out.mkdir(parents=True, exist_ok=True)
    pages = Path("/tmp/v3_ncu_stalls")
    pages.mkdir(parents=True, exist_ok=True)
    meta = common.metadata(("gpu", "driver", "ncu", "commit", "command", "date"), commit=args.commit,
                           command="python3 scripts/gpu/v3_kernel/ncu_stalls.py " + " ".join(sys.argv[1:]))
    meta |= {"sections": list(SECTIONS), "v3_sources_sha256": common.v3_source_hash(), "skipped": []}
    rows = []
    for v, d, m, b, n, h in configs:
        name = f"{v}_fp16_d{d}_{m}_b{b}_n{n}_h{h}"
        if time.time() - t0 > args.deadline:
            meta["skipped"].append(name)
            continue
        rep = pages / f"{name}.ncu-rep"
        cmd = ["ncu", "--clock-control", "none", "--cache-control", "all", *sum((["--section", s] for s in SECTIONS), []),
               "--kernel-name", "regex:v3_forward_kernel", "--launch-skip", "2", "--launch-count", "1",
               "--export", str(rep), "--force-overwrite", str(args.bin), "run", v, "fp16", str(d), m, str(b), str(n), str(h), "--time"]
        row = {"variant": v, "d": d, "mask": m, "batch": b, "n": n, "heads": h}
        try:
            proc = common.sh(cmd, timeout=180)
        except Exception as e:  # a hung kernel costs its row
            rows.append(row | {"exit": f"error: {e}"})
            continue
        lines = [json.loads(x) for x in proc.stdout.splitlines() if x.startswith("{")]
        raw = common.sh(["ncu", "--import", str(rep), "--page", "raw", "--csv", "--print-units", "base"], timeout=120)
        src = common.sh(["ncu", "--import", str(rep), "--page", "source", "--csv", "--print-source", "sass"], timeout=120)
        (pages / f"{name}.source.csv").write_text(src.stdout + ("\n--- stderr ---\n" + src.stderr if src.returncode else ""))
        (pages / f"{name}.log").write_text(" ".join(cmd) + "\n\n" + proc.stdout + "\n--- stderr ---\n" + proc.stderr)
        rep.unlink(missing_ok=True)
        metrics = raw_metrics(raw.stdout)
        rows.append(row | {"exit": proc.returncode, "run": lines[-1] if lines else None, "metrics": metrics,
                           "source_page": f"{name}.source.csv", "source_exit": src.returncode})
        print(f"stalls {name}: exit {proc.returncode}, {len(metrics)} metrics, source page exit {src.returncode} "
              f"({len(src.stdout)} chars), {time.time() - t0:.0f} s", flush=True)
    (args.out / "v3_stalls.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")
    common.sh(["tar", "czf", str(args.out / "ncu_stalls_pages.tar.gz"), "-C", str(pages.parent), pages.name])


if __name__ == "__main__":
    main()
