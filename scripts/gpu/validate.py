#!/usr/bin/env python3
"""Validates the CUDA kernels against the simulator on a GPU machine, in one command.

    python3 scripts/gpu/validate.py --out OUT [--bin flashlab-gpu | --build-dir DIR] [--commit SHA]

For the grid of scripts/gpu/grid.py (and any --extra file of flashlab-gpu flag lines):
  1. events: the instrumented kernel's block-level event stream equals the simulator's
     (flashlab diff inside flashlab-gpu);
  2. numbers: O and L of the plain kernel against float64 within the dtype's tolerance, and m, l
     after every step of one Q block against the simulator's numerics;
  3. hardware: Nsight Compute's global load/store bytes against the simulator's HBM bytes and
     against the kernels' own sector-exact byte model (every difference named), DRAM bytes beside;
     compute-sanitizer memcheck and racecheck on a subset;
  4. PyTorch's scaled_dot_product_attention on the same inputs;
then times V2, V1 and standard attention against PyTorch's flash backend (fp16, batch 4, 16 heads,
N = 4096, d = 64 and 128, no mask and causal). Writes OUT/report.md (also to --report),
OUT/results.json, OUT/gpu_traces.tar.gz (the traces also go to --traces), OUT/logs.tar.gz.
Exit status 0 when every check passed, 1 otherwise.
"""

import argparse
import json
import os
import shutil
import sys
import tarfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import grid as grid_mod  # noqa: E402
import common  # noqa: E402
import ncu  # noqa: E402
import report  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def metadata(commit):
    """The report's record of the run (common.metadata)."""
    return common.metadata(("gpu", "driver", "memory", "max_sm_clock", "cuda", "torch", "commit", "date"),
                           missing="", commit=commit)


def run_lines(binary, lines, json_path, log, common_flags, timeout=None):
    """flashlab-gpu --configs over `lines`; returns the JSON list (one object per line)."""
    results, proc = common.run_configs(binary, lines, json_path.with_suffix(".txt"), json_path, common_flags, log,
                                       timeout=timeout)
    if proc.returncode not in (0, 3) or not json_path.exists():
        raise RuntimeError(f"flashlab-gpu exited with {proc.returncode}: {proc.stderr[-2000:]}")
    return results


def hardware_status(res, prof):
    """Compares ncu's bytes with the simulator's and with the kernels' byte model."""
    out = {}
    for key in ("ld", "st"):
        sim, model, meas = res["bytes"]["sim"][key], res["bytes"]["kernel"][key], prof[key]
        out[key] = {"sim": sim, "model": model, "measured": meas,
                    "vs_sim": (meas - sim) / sim if sim else 0.0,
                    "vs_model": (meas - model) / model if model else 0.0}
    out["within_1pct_of_sim"] = all(abs(out[k]["vs_sim"]) <= 0.01 for k in ("ld", "st"))
    out["equals_model"] = all(out[k]["measured"] == out[k]["model"] for k in ("ld", "st"))
    out["passed"] = out["within_1pct_of_sim"] or out["equals_model"]
    out["dram_rd"], out["dram_wr"] = prof["dram_rd"], prof["dram_wr"]
    return out


def sanitize(binary, grid, names, tool, work, logs):
    """compute-sanitizer's `tool` over the rows `names` (one flashlab-gpu --configs process)."""
    cfg = work / f"sanitizer_{tool}.txt"
    cfg.write_text("".join(grid[n].flags + "\n" for n in names))
    proc, summary = common.compute_sanitizer(binary, ["--configs", str(cfg)], tool, logs / f"sanitizer_{tool}.log")
    last = summary[-1] if summary else ""
    # Exit 9 is the sanitizer's own (--error-exitcode); 3 would be a failed flashlab check, which
    # the grid table reports: the sanitizer verdict is its summary line.
    clean = proc.returncode != 9 and ("0 errors" in last) and ("RACECHECK" not in last or "0 hazards" in last)
    return {"tool": tool, "configs": names, "exit": proc.returncode, "clean": clean, "summary": last}


def performance(binary, work, logs, common_flags, timeout):
    """V2 (every shape), then V1 and standard attention, and PyTorch's flash backend, per case."""
    import torch_check
    g = grid_mod
    t_end = time.monotonic() + timeout
    v2_lines, v2_keys, other_lines, other_keys = [], [], [], []
    for d, mask in g.PERF_CASES:
        base = f"{g.PERF_COMMON} --d {d} --mask {mask}"
        for shape in g.PERF_V2_SHAPES[d]:
            dump = f" --dump {work}/perf-dump-{d}-{mask}" if shape == "128x128x8" else ""
            v2_lines.append(f"--algo v2 {g.shape_flags(shape)} {base} {g.PERF_V2_REPS}{dump}")
            v2_keys.append((d, mask, "v2", shape))
        for algo, shape in (("v1", g.PERF_V1_SHAPE[d]), ("standard", g.PERF_STANDARD_SHAPE)):
            other_lines.append(f"--algo {algo} {g.shape_flags(shape)} {base} {g.PERF_OTHER_REPS}")
            other_keys.append((d, mask, algo, shape))
    v2 = run_lines(binary, v2_lines, work / "perf_v2.json", logs / "perf_v2.log", common_flags, t_end - time.monotonic())
    rows = []
    for d, mask in g.PERF_CASES:
        runs = {k[3]: r for k, r in zip(v2_keys, v2) if k[0] == d and k[1] == mask}
        best = max(runs, key=lambda s: runs[s]["timing"]["tflops"])
        torch_ms = torch_check.time_flash(d, mask == "causal")
        rows.append({"d": d, "mask": mask, "v2": runs, "v2_best": best, "torch_ms": torch_ms,
                     "torch_tflops": runs[best]["timing"]["flops"] / (torch_ms * 1e-3) / 1e12,
                     "torch_agreement": torch_check.compare_perf_dump(work / f"perf-dump-{d}-{mask}")})
    try:
        others = run_lines(binary, other_lines, work / "perf_other.json", logs / "perf_other.log", common_flags,
                           t_end - time.monotonic())
    except Exception as e:  # noqa: BLE001 — V2 and PyTorch are kept; the report says what is missing
        for row in rows:
            row["other_error"] = str(e)
        return rows
    for row in rows:
        for k, r in zip(other_keys, others):
            if k[0] == row["d"] and k[1] == row["mask"]:
                row[k[2]] = r
    return rows


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--bin", type=Path, help="a built flashlab-gpu (default: build one in --build-dir)")
    ap.add_argument("--build-dir", type=Path, default=Path("/tmp/flashlab-gpu-build"))
    ap.add_argument("--commit", default=os.environ.get("FLASHLAB_COMMIT", "unknown"))
    ap.add_argument("--extra", type=Path, help="more configs: one line of flashlab-gpu flags each")
    ap.add_argument("--report", type=Path, default=ROOT / "docs/validation/h200.md")
    ap.add_argument("--traces", type=Path, default=ROOT / "tests/data/gpu")
    ap.add_argument("--work", type=Path, default=Path("/tmp/flashlab-validate"),
                    help="scratch folder (inputs dumped for PyTorch, logs); not under --out")
    ap.add_argument("--budget", type=float, default=3600, help="seconds; later stages are skipped past it")
    ap.add_argument("--no-perf", action="store_true")
    return ap.parse_args()


class Run:
    """One validation: the arguments, the folders (out, work, logs), the binary, the flags every
    flashlab-gpu line gets, the grid, and everything known so far (the report's input)."""

    def __init__(self, args):
        self.args, self.deadline = args, time.monotonic() + args.budget
        self.out, self.work, self.logs = args.out, args.work, args.work / "logs"
        self.out.mkdir(parents=True, exist_ok=True)
        for p in (self.work / "traces", self.work / "dumps", self.logs):
            p.mkdir(parents=True, exist_ok=True)
        self.meta = metadata(args.commit)
        self.binary = args.bin or common.build(self.logs, args.build_dir)
        self.flags = ["--commit", args.commit, "--driver", self.meta["driver"]]
        self.grid = grid_rows(args.extra)
        self.everything = {}

    def left(self):
        return self.deadline - time.monotonic()

    def save(self):
        """Writes what is known so far (a later stage may not finish); returns whether it all passed."""
        text, passed = report.render(self.everything)
        (self.out / "results.json").write_text(json.dumps(self.everything, indent=1))
        (self.out / "report.md").write_text(text)
        self.args.report.parent.mkdir(parents=True, exist_ok=True)
        self.args.report.write_text(text)
        common.tar_folder(self.out / "logs.tar.gz", self.logs)
        return passed

    def stage(self, name, step):
        """Runs step(); an exception is reported under stage_errors[name], not fatal to the other stages."""
        try:
            step()
        except Exception as e:  # noqa: BLE001 — reported, not fatal for the other levels
            self.everything["stage_errors"][name] = str(e)


def grid_rows(extra):
    """grid.py's GRID, then one row per line of the --extra file (blank lines and # comments skipped)."""
    grid = list(grid_mod.GRID)
    if extra:
        for k, line in enumerate(x for x in extra.read_text().splitlines() if x.strip() and not x.startswith("#")):
            grid.append(grid_mod.GridConfig(f"extra-{k}", line, "from --extra"))
    return grid


def events_and_numbers(run):
    """Level 1 and 2: every row through flashlab-gpu (traces and PyTorch's inputs kept where marked)."""
    lines = [g.flags + (common.trace_flags(f"{run.work}/traces/{g.name}.trace") if g.trace else "")
             + (f" --dump {run.work}/dumps/{g.name}" if g.torch else "") for g in run.grid]
    results = run_lines(run.binary, lines, run.work / "grid.json", run.logs / "grid.log", run.flags)
    print(f"grid: {sum(r['passed'] for r in results)}/{len(results)} passed events and numbers", flush=True)
    run.meta["cuda_runtime"] = results[0]["device"]["cuda_runtime"] if results else "unknown"
    run.everything = {"meta": run.meta, "grid": [{"name": g.name, "flags": g.flags, "covers": g.covers, **r}
                                                 for g, r in zip(run.grid, results)],
                      "sanitizer": [], "torch": [], "perf": [], "stage_errors": {}}
    return results


def keep_traces(run, results):
    """The traces of the rows marked trace and their manifest: to --traces and OUT/gpu_traces.tar.gz."""
    meta, args = run.meta, run.args
    manifest = [{"file": f"{g.name}.trace", "flags": g.flags, "covers": g.covers, "commit": args.commit,
                 "gpu": meta["gpu"], "driver": meta["driver"], "cuda": meta["cuda"], "date": meta["date"],
                 "events_agree_with_sim": r["events"]["agree"]} for g, r in zip(run.grid, results) if g.trace]
    (run.work / "traces" / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    args.traces.mkdir(parents=True, exist_ok=True)
    with tarfile.open(run.out / "gpu_traces.tar.gz", "w:gz") as tar:
        for f in sorted((run.work / "traces").iterdir()):
            tar.add(f, arcname=f.name)
            shutil.copy(f, args.traces / f.name)


def hardware(run):
    """Level 3: Nsight Compute's bytes of every row against the simulator's and the byte model."""
    prof = ncu.profile(run.binary, run.grid, run.work, run.logs / "ncu.csv")
    for r, p in zip(run.everything["grid"], prof):
        r["hardware"] = hardware_status(r, p)


def sanitizers(run):
    """Level 3: memcheck on grid.py's SANITIZER rows, racecheck on the first five."""
    names = {g.name: g for g in run.grid}
    run.everything["sanitizer"].append(sanitize(run.binary, names, grid_mod.SANITIZER, "memcheck", run.work, run.logs))
    run.everything["sanitizer"].append(sanitize(run.binary, names, grid_mod.SANITIZER[:5], "racecheck", run.work, run.logs))


def pytorch(run, results):
    """Level 4: PyTorch's SDPA on the inputs of the rows marked torch, within twice the row's O tolerance."""
    import torch_check
    for g, r in zip(run.grid, results):
        if g.torch:
            c = torch_check.compare(run.work / "dumps" / g.name)
            c["tol"] = 2 * r["numbers"]["tol_O"]
            c["agree"] = c["rel_fro"] <= c["tol"]
            run.everything["torch"].append({"name": g.name, **c})


def timed(run):
    """The performance table, in the time left (15 s kept for the report)."""
    run.everything["perf"] = performance(run.binary, run.work, run.logs, run.flags, timeout=max(run.left() - 15, 1))


def main():
    run = Run(parse_args())
    results = events_and_numbers(run)
    keep_traces(run, results)
    run.save()
    run.stage("ncu", lambda: hardware(run))
    print(f"ncu done ({run.left():.0f} s left)", flush=True)
    run.save()
    run.stage("sanitizer", lambda: sanitizers(run))
    print(f"sanitizers done ({run.left():.0f} s left)", flush=True)
    run.stage("torch", lambda: pytorch(run, results))
    shutil.rmtree(run.work / "dumps", ignore_errors=True)
    print(f"torch comparison done ({run.left():.0f} s left)", flush=True)
    run.save()
    if not run.args.no_perf:
        run.stage("perf", lambda: timed(run))
        for dump in run.work.glob("perf-dump-*"):
            shutil.rmtree(dump, ignore_errors=True)
    print("performance done", flush=True)
    passed = run.save()
    print(report.summary(run.everything))
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
