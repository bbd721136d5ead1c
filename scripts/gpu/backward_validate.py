#!/usr/bin/env python3
"""Validates the backward kernels (V1: FA1 Alg. 4; V2: FA2 Alg. 2 as released) on a GPU machine.

    python3 scripts/gpu/backward_validate.py --out OUT [--build-dir DIR] [--commit SHA]

  1. events and numbers: for every row of BACKWARD_GRID (scripts/gpu/grid.py), flashlab-gpu
     --pass backward runs the forward, then the instrumented backward, whose block-level events must
     equal the simulator's (flashlab diff), then the plain backward, whose dQ, dK, dV must be within
     the simulator's tolerance of the float64 chain rule (numerics.hpp compare_grads);
  2. PyTorch: dQ, dK, dV of the rows marked torch against torch.autograd on
     scaled_dot_product_attention (the flash backend where the mask allows it) on the same inputs;
  3. Nsight Compute: global load, store and reduction (atomic) bytes of each backward kernel against
     the simulator's request bytes per launch (`flashlab count --pass backward --json`);
  4. compute-sanitizer memcheck and racecheck on two small rows;
  5. time: the V2 backward against PyTorch's flash backward (fp16, batch 4, 16 heads, N = 4096,
     d = 64 and 128, no mask and causal), TFLOP/s of the five matmuls.
Writes OUT/backward_report.md, OUT/backward_results.json, OUT/backward_traces.tar.gz (text GPU
traces of the rows marked trace) and OUT/backward_logs.tar.gz. Exit 0 when every check passed.
"""

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import cuda_events  # noqa: E402
import grid as grid_mod  # noqa: E402
import ncu  # noqa: E402

COMMIT = [""]  # --commit: recorded in the GPU traces' headers
METRICS = {k: ncu.NAMES[k] for k in ("ld", "st", "red", "atom", "dram_rd", "dram_wr")}
PERF = [  # (name, flashlab-gpu flags, d, causal)
    ("perf-d64-none", "--algo v2 --pass backward --nq 4096 --nk 4096 --d 64 --br 128 --bc 128 --warps 8 --batch 4 --heads 16", 64, False),
    ("perf-d64-causal", "--algo v2 --pass backward --nq 4096 --nk 4096 --d 64 --br 128 --bc 128 --warps 8 --batch 4 --heads 16 --mask causal", 64, True),
    ("perf-d64-none-64x64", "--algo v2 --pass backward --nq 4096 --nk 4096 --d 64 --br 64 --bc 64 --warps 4 --batch 4 --heads 16", 64, False),
    ("perf-d128-none", "--algo v2 --pass backward --nq 4096 --nk 4096 --d 128 --br 64 --bc 64 --warps 4 --batch 4 --heads 16", 128, False),
    ("perf-d128-causal", "--algo v2 --pass backward --nq 4096 --nk 4096 --d 128 --br 64 --bc 64 --warps 4 --batch 4 --heads 16 --mask causal", 128, True),
]


def run_grid(gpu, rows, work, logs):
    """flashlab-gpu on every row, one process; returns (the JSON list, one object per row, its exit status)."""
    lines = [g.flags + (common.trace_flags(work / "traces" / (g.name + ".trace")) if g.trace else "")
             + (f" --dump {work / 'dumps' / g.name}" if g.torch else "") for g in rows]
    (work / "traces").mkdir(parents=True, exist_ok=True)
    results, p = common.run_configs(gpu, lines, work / "backward_configs.txt", work / "grid.json",
                                    ["--commit", COMMIT[0]] if COMMIT[0] else [], logs / "grid.log")
    return results, p.returncode


def torch_compare(folder):
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import torch_check
    meta, tensor = torch_check.dumped(folder)
    nq, nk = meta["n_q"], meta["n_k"]

    def t(name, n, grad=False):
        return tensor(name, n).requires_grad_(grad)

    q, k, v = t("q.bin", nq, True), t("k.bin", nk, True), t("v.bin", nk, True)
    do = t("do.bin", nq)
    visible = torch_check.band_mask(meta)
    rows = visible.any(dim=1)
    if meta["mask"] in ("none", "causal") and nq == nk:
        backend = "flash"
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            o = F.scaled_dot_product_attention(q, k, v, is_causal=meta["mask"] == "causal", scale=meta["scale"])
    else:
        backend = "math (attn_mask)"
        with sdpa_kernel(SDPBackend.MATH):
            o = F.scaled_dot_product_attention(q, k, v, attn_mask=visible, scale=meta["scale"])
    o = torch.where(rows.view(1, 1, nq, 1), o, torch.zeros_like(o))  # rows with no key: O = 0 (FA2)
    dq_ref, dk_ref, dv_ref = torch.autograd.grad(o, (q, k, v), do)
    out = {"backend": backend}
    for name, ref, n in (("dq", dq_ref, nq), ("dk", dk_ref, nk), ("dv", dv_ref, nk)):
        got = t(name + ".bin", n).float()
        ref = torch.nan_to_num(ref.float())
        out["rel_fro_" + name] = (got - ref).norm().item() / max(ref.norm().item(), 1e-30)
    return out


def torch_time(d, causal, batch=4, heads=16, n=4096, warmup=5, reps=20):
    """Median ms of PyTorch's flash backward (autograd.grad of sdpa under the flash backend)."""
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    q, k, v = (torch.randn(batch, heads, n, d, device="cuda", dtype=torch.float16, requires_grad=True) for _ in range(3))
    do = torch.randn(batch, heads, n, d, device="cuda", dtype=torch.float16)
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        return cuda_events.median_ms(lambda: torch.autograd.grad(o, (q, k, v), do, retain_graph=True), warmup, reps)


def ncu_profile(gpu, flashlab, rows, work, logs):
    """Per backward kernel of each row: ncu's bytes beside the simulator's per-launch request bytes."""
    cfg = work / "ncu_configs.txt"
    cfg.write_text("".join(f"{g.flags} --profile\n" for g in rows))
    p = ncu.run(ncu.command(METRICS) + ["--kernel-name", "regex:^fl_v2_bwd|^fl_v1_backward", str(gpu), "--configs", str(cfg)],
                logs / "ncu.log")
    ordered = [{"name": x["name"]} | {k: int(x[k]) for k in METRICS if k in x}
               for x in (ncu.launches(p.stdout, METRICS) if '"ID"' in p.stdout else [])]
    out, pos = [], 0
    for g in rows:
        launches = common.simulated_launches(flashlab, g.flags.split())
        n = len(launches)
        for hw, sl in zip(ordered[pos:pos + n], launches):
            out.append({"row": g.name, "kernel": sl["name"], "ncu_kernel": ncu.short_name(hw["name"]),
                        "ncu": {m: hw.get(m, 0) for m in METRICS},
                        "sim": {"ld": sl["read_bytes"], "st": sl["write_bytes"], "red": sl["atomic_bytes"]}})
        pos += n
    return out, p.returncode, len(ordered)


def perf_rows(gpu, work, logs):
    """PERF's rows: this project's backward (flashlab-gpu --time, median) beside PyTorch's flash
    backward on the same shapes, in one process each, one after the other."""
    perf = []
    for name, flags, d, causal in PERF:
        p = common.sh([str(gpu), "--json", str(work / f"{name}.json"), "--time", "--reps", "20", "--no-events"] + flags.split())
        (logs / f"{name}.log").write_text(p.stdout + p.stderr)
        r = json.loads((work / f"{name}.json").read_text())[0] if (work / f"{name}.json").exists() else None
        torch_ms = torch_time(d, causal)
        flops = r["timing"]["flops"] if r else 0
        perf.append({"name": name, "ms": r["timing"]["median_ms"] if r else None, "tflops": r["timing"]["tflops"] if r else None,
                     "torch_ms": torch_ms, "torch_tflops": flops / (torch_ms * 1e-3) / 1e12 if flops else None,
                     "ratio": (torch_ms / r["timing"]["median_ms"]) if r and r["timing"]["median_ms"] else None,
                     "grads_within": r["grads"]["within"] if r else None})
        print(f"{name}: {perf[-1]['ms']} ms, torch {torch_ms:.3f} ms, ratio {perf[-1]['ratio']}", flush=True)
    return perf


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--build-dir", default="build-gpu")
    ap.add_argument("--commit", default="")
    ap.add_argument("--only-perf", action="store_true", help="PERF's rows against PyTorch alone (OUT/perf.json)")
    return ap.parse_args()


def grid_row(g, r):
    """The report's row for grid row g: its events and gradients against float64 (r: its result)."""
    if r is None:
        return {"name": g.name, "flags": g.flags, "error": "no result"}
    heads = r["grads"]["heads"]
    return {"name": g.name, "flags": g.flags, "covers": g.covers, "events_agree": r["events"]["agree"],
            "gpu_events": r["events"]["gpu"], "sim_events": r["events"]["sim"],
            "worst_dQ": common.worst(heads, "rel_fro_dQ"), "worst_dK": common.worst(heads, "rel_fro_dK"),
            "worst_dV": common.worst(heads, "rel_fro_dV"), "tol": heads[0]["tol"] if heads else None,
            "within": r["grads"]["within"], "canary": r["numbers"]["canary_intact"], "passed": r["passed"]}


def torch_rows(rows, work):
    """Step 2: the rows marked torch against torch.autograd (an error is reported in the row)."""
    out = []
    for g in [g for g in rows if g.torch]:
        try:
            out.append({"name": g.name} | torch_compare(work / "dumps" / g.name))
        except Exception as e:  # noqa: BLE001 - reported, not fatal to the other checks
            out.append({"name": g.name, "error": repr(e)})
    return out


def sanitizers(gpu, rows, logs):
    """Step 4: memcheck and racecheck on the rows marked sanitize (events off), one process each."""
    out = []
    for g in [g for g in rows if g.sanitize]:
        for tool in ("memcheck", "racecheck"):
            p, _ = common.compute_sanitizer(gpu, g.flags.split() + ["--no-events"], tool,
                                            logs / f"sanitizer-{tool}-{g.name}.log")
            out.append({"row": g.name, "tool": tool, "rc": p.returncode,
                        "summary": (p.stdout + p.stderr).strip().splitlines()[-1:]})
    return out


def grid_table(res):
    md = common.table_head("row", "events (gpu/sim)", "dQ", "dK", "dV", "tol", "result")
    for r in res["grid"]:
        if "error" in r:
            md.append(f"| {r['name']} | {r['error']} | | | | | FAIL |")
            continue
        md.append(f"| {r['name']} | {'agree' if r['events_agree'] else 'DIFFER'} ({r['gpu_events']}/{r['sim_events']}) | "
                  f"{r['worst_dQ']:.2e} | {r['worst_dK']:.2e} | {r['worst_dV']:.2e} | {r['tol']:.1e} | "
                  f"{'ok' if r['passed'] else 'FAIL'} |")
    md += ["", "PyTorch (rel. Frobenius error of flashlab's gradients against torch.autograd on sdpa):", ""]
    md += common.table_head("row", "backend", "dQ", "dK", "dV")
    for r in res["torch"]:
        md.append(f"| {r['name']} | {r.get('backend', r.get('error'))} | {r.get('rel_fro_dq', float('nan')):.2e} | "
                  f"{r.get('rel_fro_dk', float('nan')):.2e} | {r.get('rel_fro_dv', float('nan')):.2e} |")
    return md


def hardware_tables(res):
    md = ["", f"Nsight Compute (bytes; ncu rc {res['ncu_rc']}, {res['ncu_kernels']} kernels profiled):", ""]
    md += common.table_head("row", "kernel", "ld ncu / sim", "st ncu / sim", "red ncu / sim", "atom", "DRAM rd / wr")
    for r in res["ncu"]:
        n, s = r["ncu"], r["sim"]
        md.append(f"| {r['row']} | {r['kernel']} | {n['ld']:,} / {s['ld']:,} | {n['st']:,} / {s['st']:,} | "
                  f"{n['red']:,} / {s['red']:,} | {n['atom']:,} | {n['dram_rd']:,} / {n['dram_wr']:,} |")
    md += ["", "compute-sanitizer:", ""] + [f"- {s['row']} {s['tool']}: rc {s['rc']} {s['summary']}" for s in res["sanitizer"]]
    md += ["", "Time (fp16, batch 4, 16 heads, N = 4096; TFLOP/s of the five backward matmuls, causal halved):", ""]
    md += common.table_head("config", "flashlab V2 ms", "TFLOP/s", "PyTorch flash ms", "TFLOP/s", "V2 / PyTorch")
    for r in res["perf"]:
        md.append(f"| {r['name']} | {r['ms']} | {r['tflops']} | {r['torch_ms']:.4f} | {r['torch_tflops']} | {r['ratio']} |")
    return md


def report(res):
    """The Markdown report of backward_results.json's document."""
    meta = res["meta"]
    md = [f"# Backward kernels on {meta['gpu']}", "", f"torch {meta['torch']}, commit {meta['commit']}", ""]
    return md + grid_table(res) + hardware_tables(res) + ["", f"passed: {res['passed']}"]


def main():
    a = parse_args()
    COMMIT[0] = a.commit
    out = Path(a.out)
    work, logs = out / "work", out / "logs"
    work.mkdir(parents=True, exist_ok=True)
    logs.mkdir(parents=True, exist_ok=True)
    gpu, flashlab = common.binaries(a.build_dir)
    meta = common.metadata(("gpu", "torch", "commit", "command", "cuda", "date"), gpu=common.nvidia_smi(),
                           commit=a.commit, command=" ".join(sys.argv))
    if a.only_perf:
        (out / "perf.json").write_text(json.dumps({"meta": meta, "perf": perf_rows(gpu, work, logs)}, indent=1) + "\n")
        return 0
    rows = grid_mod.BACKWARD_GRID
    results, _ = run_grid(gpu, rows, work, logs)
    grid = [grid_row(g, r) for g, r in common.with_results(rows, results)]
    torch = torch_rows(rows, work)
    ncu_rows, ncu_rc, ncu_kernels = ncu_profile(gpu, flashlab, [g for g in rows if g.ncu], work, logs)
    sanitizer = sanitizers(gpu, rows, logs)
    perf = perf_rows(gpu, work, logs)
    ok = all(r.get("passed", False) for r in grid) and all(s["rc"] == 0 for s in sanitizer)
    res = {"meta": meta, "grid": grid, "torch": torch, "ncu": ncu_rows, "ncu_rc": ncu_rc,
           "ncu_kernels": ncu_kernels, "sanitizer": sanitizer, "perf": perf, "passed": ok}
    (out / "backward_results.json").write_text(json.dumps(res, indent=1))
    common.write_markdown(out / "backward_report.md", report(res))
    common.tar_folder(out / "backward_traces.tar.gz", work / "traces", "traces")
    common.tar_folder(out / "backward_logs.tar.gz", logs)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
