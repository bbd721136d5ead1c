#!/usr/bin/env python3
"""V2's backward against PyTorch's FA2 backward, kernel for kernel (issue 25 item 1), on a GPU machine.

    python3 scripts/gpu/backward_perf.py --out DIR [--bin build-gpu/kernels/flashlab-gpu] [--commit SHA]
    python3 scripts/gpu/backward_perf.py --report tests/data/gpu_backward/fa2_parity.json \\
        --doc docs/validation/backward_h200.md        (no GPU: regenerates the doc's section from the data)

On every shape of SHAPES (fp16 and bf16, d = 64 and 128, no mask and causal, N = 1k to 32k, batch x
heads 16 to 256; the released form, and the deterministic form on the rows marked so), in one run at the kernel sources' hash it records (time_dataset.metadata):
1. checks: the same kernel instance (tile, d, dtype, mask) through flashlab-gpu's full check on a
   problem the float64 reference affords (time_configs.check_flags: N at most 1024 + N mod 128,
   batch 1, at most 4 heads): the instrumented kernels' events against the simulator's, dQ, dK, dV
   against the float64 chain rule; the raw figures are kept and CI judges them;
2. this project's three backward launches (fl_v2_bwd_dot_do_o, fl_v2_bwd_dq_dk_dv,
   fl_v2_bwd_convert_dq) on FA2's own backward tile for the head dim (tiles.hpp; the forward that
   flashlab-gpu runs first to write O and L is profiled but not counted) and
3. PyTorch's FA2 backward on the same shape (torch.autograd through scaled_dot_product_attention on
   the flash backend: flash_bwd_dot_do_o_kernel, flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel,
   flash_bwd_convert_dq_kernel; its forward is profiled too and not counted); a deterministic row
   runs it under torch.use_deterministic_algorithms(True), which PyTorch passes to FA2's mha_bwd as
   deterministic = true (nsplits dQ accumulators, as this project's `--backward-form deterministic`),
   both under Nsight Compute with time_dataset.NCU's flags (gpu__time_duration.sum per launch:
   kernel only, nothing else between its start and end; --clock-control none, --cache-control all),
   `--passes` passes over all shapes (one sample per launch and pass).
The ratio of a shape (computed by CI from the raw samples, tests/kernels/gpu_backward_test.cpp) is
the sum over FA2's three launches of the median duration over the sum over this project's three.
Writes DIR/fa2_parity.json (meta, shapes: flags, check, ours and torch launches with every sample)
and DIR/backward_perf_logs.tar.gz. With --candidates, each shape also times this project's kernels
on the other compiled backward tiles (rows marked "candidate": development data, not the target).
"""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
import common  # noqa: E402
import time_configs  # noqa: E402
import time_dataset  # noqa: E402

# FA2's backward tile per head dim on sm_90 (flash_bwd_launch_template.h; the launch names PyTorch
# 2.11 ran on the H200, tests/data/gpu_time/h200.json): Flash_bwd_kernel_traits<64, 128, 128, 8, ...>
# and <128, 64, 128, 8, ...>, B_r x B_c x warps.
FA2_TILE = {64: "128x128x8", 128: "64x128x8"}
CANDIDATES = {64: ["64x64x4"], 128: ["64x64x4"]}  # the other compiled backward tile, timed with --candidates
# (dtype, d, mask, batch, heads, N, form), one a line: every dtype x d x mask, N from 1k to 32k, batch x
# heads 16 to 256, in the released form; the deterministic form on both head dims and masks
SHAPES = common.text_table("""
fp16   64 none    4 16  4096 released
fp16  128 causal  2 32  8192 released
fp16   64 causal  1 16 32768 released
bf16  128 causal  1 16 32768 released
fp16  128 none   16 16  1024 released
bf16   64 none   16 16  1024 released
bf16   64 causal  8 32  2048 released
fp16  128 causal  4 16  4096 released
bf16  128 none    2 16  8192 released
fp16   64 none    1 16 16384 released
bf16   64 causal  4  8 16384 released
fp16  128 none    8 16  2048 released
fp16   64 none    4 16  4096 deterministic
bf16   64 causal  8 32  2048 deterministic
fp16  128 causal  4 16  4096 deterministic
bf16  128 none    2 16  8192 deterministic
""", str, int, str, int, int, int, str, sep=None)
SHAPE_TYPES = (str, int, str, int, int, int, str)
DOC_BEGIN = "<!-- backward_perf.py: generated from tests/data/gpu_backward/fa2_parity.json, do not edit by hand -->"
DOC_END = "<!-- end backward_perf.py -->"


def our_flags(dtype, d, mask, b, h, n, form, tile):
    return (f"--pass backward --backward-form {form} --algo v2 {time_configs.tile_flags(tile)} "
            f"{time_configs.problem_flags(n, n, d, b, h, mask, dtype)}")


def torch_row(dtype, d, mask, b, h, n, form):
    return ("backward" if form == "released" else "backward-deterministic", b, h, h, n, n, d, mask == "causal", dtype)


def measure(args):
    work, logs = args.work, args.work / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    args.out.mkdir(parents=True, exist_ok=True)
    table_rows = SHAPES if not args.shapes else common.text_table(Path(args.shapes).read_text(), *SHAPE_TYPES, sep=None)
    shapes = table_rows[: args.limit or None]
    rows = []  # (shape, tile, candidate)
    for s in shapes:
        rows.append((s, FA2_TILE[s[1]], False))
        if args.candidates:
            rows += [(s, t, True) for t in CANDIDATES[s[1]]]
    flags = [our_flags(*s, t) for s, t, _ in rows]
    meta = time_dataset.metadata(args.commit, [])
    meta["command"] = "python3 scripts/gpu/backward_perf.py " + " ".join(sys.argv[1:])
    doc = {"meta": meta, "shapes": [], "errors": {}}
    t0 = time.monotonic()
    checks, ours, torch = [], [], []
    for step, fn in [("checks", lambda: checks.extend(time_dataset.checks(args.bin, flags, work, logs))),
                     ("ours", lambda: time_dataset.ours(args.bin, flags, work, logs, args.passes, ours, lambda: None)),
                     ("torch", lambda: torch.extend(time_dataset.pytorch(work, logs, args.passes,
                                                                         [torch_row(*s) for s in shapes])))]:
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - recorded; the other steps still run
            doc["errors"][step] = str(e)
            print(f"{step}: {e}", flush=True)
        print(f"{step}: done at {time.monotonic() - t0:.0f} s", flush=True)
    by_shape = {s: k for k, s in enumerate(shapes)}
    for k, (s, tile, candidate) in enumerate(rows):
        entry = {"dtype": s[0], "d": s[1], "mask": s[2], "batch": s[3], "heads": s[4], "n": s[5], "form": s[6], "tile": tile,
                 "candidate": candidate, "flags": flags[k],
                 "check": checks[k] if k < len(checks) else None,
                 "ours": ours[k]["launches"] if k < len(ours) else [],
                 "torch": torch[by_shape[s]]["launches"] if by_shape[s] < len(torch) else []}
        doc["shapes"].append(entry)
    (args.out / "fa2_parity.json").write_text(json.dumps(doc, indent=1) + "\n")
    common.tar_folder(args.out / "backward_perf_logs.tar.gz", logs)
    print(table(doc))
    return 0 if not doc["errors"] else 1


def backward_ms(launches, fa2):
    """Sum of the median durations (ms) of a row's backward launches: this project's three (the row's
    launches, the forward already left out), or FA2's three (its forward dropped by name)."""
    keep = [x for x in launches if (not fa2 or "bwd" in x["name"])]
    return sum(statistics.median(x["time_ns"]) for x in keep) / 1e6, len(keep)


def table(doc):
    lines = ["| form | dtype | d | mask | batch x heads | N | tile | ours: dot_do_o + dq_dk_dv + convert_dq (ms) | "
             "FA2 (ms) | FA2 / ours | checked |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in doc["shapes"]:
        if not r["ours"] or not r["torch"]:
            lines.append(f"| {r.get('form', 'released')} | {r['dtype']} | {r['d']} | {r['mask']} | {r['batch']} x {r['heads']} | {r['n']} | {r['tile']} | "
                         "missing | | | |")
            continue
        ours_ms, _ = backward_ms(r["ours"], False)
        fa2_ms, _ = backward_ms(r["torch"], True)
        parts = " + ".join(f"{statistics.median(x['time_ns']) / 1e6:.3f}" for x in r["ours"])
        c = r["check"] or {}
        ok = (c.get("events", {}).get("gpu") == c.get("events", {}).get("sim") and
              all(h[g] <= h["tol"] for h in c.get("grads", {}).get("heads", []) for g in ("rel_fro_dQ", "rel_fro_dK", "rel_fro_dV")))
        tile = r["tile"] + (" (candidate)" if r["candidate"] else "")
        lines.append(f"| {r.get('form', 'released')} | {r['dtype']} | {r['d']} | {r['mask']} | {r['batch']} x {r['heads']} | {r['n']} | {tile} | "
                     f"{parts} = {ours_ms:.3f} | {fa2_ms:.3f} | {fa2_ms / ours_ms:.2f} | "
                     f"{'events and gradients' if ok and c else 'NO'} |")
    return "\n".join(lines)


def report(data, doc_path):
    doc = json.loads(Path(data).read_text())
    m = doc["meta"]
    text = "\n".join([
        DOC_BEGIN, "",
        f"Run of {m['date']} on an {m['gpu']} (driver {m['driver']}, PyTorch {m['torch']}, {m['ncu']}) at commit "
        f"{m['commit'][:12]}, kernel sources {m['kernel_sources_sha256'][:16]}: `{m['command']}`.",
        f"Nsight Compute `{m['ncu_flags']}`; the median of each launch's samples, this project's three",
        "launches summed against FA2's three (each side's forward left out). The checks column: the same",
        "kernel instance in the same run, events against the simulator's and dQ, dK, dV against float64",
        "(tests/kernels/gpu_backward_test.cpp recomputes both verdicts and each ratio from the raw data).", "",
        table(doc), "", DOC_END])
    p = Path(doc_path)
    old = p.read_text()
    if DOC_BEGIN in old and DOC_END in old:
        new = old[:old.index(DOC_BEGIN)] + text + old[old.index(DOC_END) + len(DOC_END):]
    else:
        new = old.rstrip("\n") + "\n\n" + text + "\n"
    p.write_text(new)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", type=Path, default=ROOT / "build-gpu" / "kernels" / "flashlab-gpu")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--passes", type=int, default=2, help="ncu passes over every shape (one sample each)")
    ap.add_argument("--work", type=Path, default=Path("/tmp/flashlab-backward-perf"))
    ap.add_argument("--limit", type=int, default=0, help="only the first N shapes (a quick try)")
    ap.add_argument("--candidates", action="store_true", help="also time the other compiled backward tiles")
    ap.add_argument("--shapes", help="a file of shapes in SHAPES' format to run instead (shapes the project has "
                    "not measured: a try of the bar on new shapes)")
    ap.add_argument("--report", help="fa2_parity.json to turn into the doc's section (no GPU)")
    ap.add_argument("--doc", default=str(ROOT / "docs" / "validation" / "backward_h200.md"))
    a = ap.parse_args()
    if a.report:
        return report(a.report, a.doc)
    if not a.out:
        ap.error("--out DIR (or --report FILE)")
    return measure(a)


if __name__ == "__main__":
    sys.exit(main())
