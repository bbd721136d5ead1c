#!/usr/bin/env python3
"""The time model's data set on the GPU (issue 23): every configuration of time_configs.py, this
project's kernels and PyTorch's FA2, timed kernel-only and the same way on both sides.

    python3 scripts/gpu/time_dataset.py --bin build-gpu/kernels/flashlab-gpu --out DIR --commit SHA

1. Validation (the kernels that are timed are the kernels that are checked, in the same run): each
   configuration's kernel instance (algorithm, switches, tile, d, dtype, mask, pass, splits, K/V
   heads) runs through flashlab-gpu's full check on a problem the float64 reference can afford
   (time_configs.check_flags: N at most 1024 plus its remainder mod 128, batch 1, at most 4 heads):
   the instrumented kernel's events against the simulator's, m and l, O and L (and dQ, dK, dV)
   against float64. The raw figures are kept (event counts, errors, tolerances): CI recomputes the
   verdict.
2. Time: every configuration at full size, each kernel launched once per pass (flashlab-gpu
   --profile), `--passes` passes, under Nsight Compute: gpu__time_duration.sum per launch (kernel
   only: nothing but the kernel lies between its start and end), dram__bytes_read.sum and
   dram__bytes_write.sum; --clock-control none (the card as it is), --cache-control all (the L2
   flushed before each kernel: a cold L2, as the simulator's L2 model starts). PyTorch's FA2 (the
   flash backend: scaled_dot_product_attention, or aten._flash_attention_forward for grouped heads
   and N_q != N_k; forward and backward) under the same ncu flags, its flash kernels only.
3. SASS: cuobjdump -sass of the binary that ran, per kernel (scripts/gpu/sass_digest.py reads it).
With --metrics smem, step 2 measures the shared-memory pipe instead of the time, under the same ncu
flags: wavefronts of loads and stores, their bank conflicts and the warp-instructions executed
(SMEM_METRICS; the time model's shared-memory unit against the hardware).
Writes DIR/time_dataset.json (meta, "ours", "torch", "checks", "errors") and DIR/time_logs.tar.gz.
"""

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import common  # noqa: E402
import ncu  # noqa: E402
from common import sh  # noqa: E402
import time_configs  # noqa: E402

METRICS = {k: ncu.NAMES[k] for k in ("time_ns", "dram_rd", "dram_wr")}
# --metrics smem: the shared-memory pipe instead of the time (a separate run: more metrics would
# replay each kernel): all its wavefronts (cp.async's writes included), those of loads (ldmatrix
# included) and stores, the bank conflicts among them, and the warp-instructions executed
SMEM_METRICS = {k: ncu.NAMES[k] for k in ("smem_wavefronts", "smem_ld_wavefronts", "smem_st_wavefronts", "smem_ld_conflicts",
                                          "smem_st_conflicts", "inst_executed")}
NCU = ncu.command(METRICS, cache_control="all")


def metadata(commit, argv):
    """The data set's record: the device, PyTorch's and Nsight Compute's versions, the commit, the kernel
    sources' hash, this command and its Nsight Compute flags, the date (common.metadata)."""
    return common.metadata(("gpu", "driver", "memory", "max_sm_clock", "torch", "ncu", "commit",
                            "kernel_sources_sha256", "command", "ncu_flags", "date"), commit=commit,
                           command="python3 scripts/gpu/time_dataset.py " + " ".join(argv), ncu_flags=" ".join(NCU[1:]))


def checks(binary, rows, work, logs):
    """Step 1: flashlab-gpu's full check on each row's check_flags; returns one raw record per row."""
    lines = [time_configs.check_flags(r) for r in rows]
    t0 = time.monotonic()
    results, proc = common.run_configs(binary, lines, work / "check_configs.txt", work / "checks.json",
                                       ["--check-heads", "4"], logs / "checks.log", must=True)
    print(f"checked {len(lines)} kernel instances in {time.monotonic() - t0:.0f} s (exit {proc.returncode})", flush=True)
    out = []
    for row, line, r in zip(rows, lines, results):
        out.append({"flags": row, "checked_as": line, "events": {k: r["events"][k] for k in ("run", "gpu", "sim")},
                    "numbers": r["numbers"], "grads": r["grads"], "passed_as_reported": r["passed"]})
    return out


def profile(cmd, log):
    proc = ncu.run(cmd, log)
    if proc.returncode != 0:
        raise RuntimeError(f"ncu exited with {proc.returncode}: {proc.stderr[-1500:]}")
    return ncu.launches(proc.stdout, METRICS), proc.stdout


CHUNK = 40  # rows per ncu process: a run cut by a time limit keeps every finished chunk


def ours(binary, rows, work, logs, passes, out, save):
    """Step 2 for flashlab's kernels: per pass, one ncu process per CHUNK rows (--profile lines),
    appending to `out` (one record per row, in order) and calling save() after each chunk."""
    counts = launch_counts(binary, rows, work)
    for p in range(passes):
        for c in range(0, len(rows), CHUNK):
            part = rows[c:c + CHUNK]
            cfg = work / "profile_configs.txt"
            cfg.write_text("".join(f"{r} --no-events --no-check --profile\n" for r in part))
            t0 = time.monotonic()
            launches, _ = profile(NCU + ["--kernel-name", "regex:^fl_", str(binary), "--configs", str(cfg)],
                                  logs / f"ncu_ours_{p}_{c:03d}.csv")
            print(f"pass {p}, rows {c}-{c + len(part) - 1}: ncu profiled {len(launches)} kernels in "
                  f"{time.monotonic() - t0:.0f} s", flush=True)
            if p == 0:
                out.extend({"flags": r, "split": time_configs.split_of(r), "launches": []} for r in part)
            for row, group in zip(out[c:c + CHUNK], group_ours(launches, counts[c:c + CHUNK], part)):
                add_samples(row, group)
            save()


def add_samples(row, group):
    """Appends one pass's launches (ncu.launches dicts, in order) to row["launches"]: name, grid and
    block once, then one sample per pass of each metric."""
    if not row["launches"]:
        row["launches"] = [{"name": k["name"][:200], "grid": k["grid"], "block": k["block"]} | {key: [] for key in METRICS}
                           for k in group]
    for dst, k in zip(row["launches"], group):
        for key in METRICS:
            dst[key].append(k.get(key, 0.0))


_counts_cache = {}


def group_ours(launches, counts, rows):
    """Splits ncu's launches (in order) into the rows': `counts` launches each (the simulator's
    launch list), after the forward that a --pass backward run launches first to write O and L
    (recorded apart, as "forward_first", not timed as part of the backward)."""
    groups, pos = [], 0
    for row, n in zip(rows, counts):
        first = 1 if "--pass backward" in row else 0
        groups.append(launches[pos + first:pos + first + n])
        pos += first + n
    if pos != len(launches):
        raise RuntimeError(f"ncu profiled {len(launches)} kernels, the rows launch {pos}")
    return groups


def launch_counts(binary, rows, work):
    """Kernels each row launches (the plain build, once): flashlab-gpu --profile prints nothing of
    it, so count them with the simulator's launch list through `flashlab count --json`, which the
    kernels follow launch for launch (the event check of step 1)."""
    if tuple(rows) in _counts_cache:
        return _counts_cache[tuple(rows)]
    flashlab = binary.parent.parent / "sim" / "cli" / "flashlab"
    counts = []
    for r in rows:
        argv = [w for w in r.split()]
        proc = sh([str(flashlab), "count"] + argv + ["--json"])
        if proc.returncode != 0:
            raise RuntimeError(f"flashlab count {r}: {proc.stderr[-500:]}")
        launches = json.loads(proc.stdout)["launches"]
        counts.append(len(launches))
    _counts_cache[tuple(rows)] = counts
    return counts


TORCH_CHILD = r'''
import json, sys, torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
rows = json.loads(open(sys.argv[1]).read())
torch.manual_seed(0)
for (p, b, h, hk, nq, nk, d, causal, dtype) in rows:
    dt = torch.bfloat16 if dtype == "bf16" else torch.float16
    grad = p.startswith("backward")
    q = torch.randn(b, h, nq, d, device="cuda", dtype=dt, requires_grad=grad)
    k = torch.randn(b, hk, nk, d, device="cuda", dtype=dt, requires_grad=grad)
    v = torch.randn(b, hk, nk, d, device="cuda", dtype=dt, requires_grad=grad)
    torch.cuda.synchronize()
    if nq == nk and hk == h:
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    else:
        o = torch.ops.aten._flash_attention_forward(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                                     None, None, nq, nk, 0.0, causal, False)[0]
    if grad:
        do = torch.randn_like(o)
        # "backward-deterministic": FA2's deterministic backward (mha_bwd with deterministic = true:
        # nsplits dQ accumulators, PyTorch's flash backward under use_deterministic_algorithms)
        torch.use_deterministic_algorithms(p == "backward-deterministic")
        o.backward(do)
        torch.use_deterministic_algorithms(False)
    torch.cuda.synchronize()
'''


def pytorch(work, logs, passes, rows=None):
    """Step 2 for PyTorch's FA2: `rows` (time_configs.torch_rows() by default; tuples (pass, batch,
    heads, kv heads, N_q, N_k, d, causal, dtype), pass "forward", "backward" or
    "backward-deterministic"), one ncu process per pass over all of them."""
    rows = time_configs.torch_rows() if rows is None else rows
    (work / "torch_rows.json").write_text(json.dumps(rows))
    child = work / "torch_child.py"
    child.write_text(TORCH_CHILD)
    out = [{"flags": time_configs.torch_key(r), "split": time_configs.split_of(time_configs.torch_key(r)),
            "launches": []} for r in rows]
    for p in range(passes):
        t0 = time.monotonic()
        launches, _ = profile(NCU + ["--kernel-name", "regex:flash", sys.executable, str(child),
                                     str(work / "torch_rows.json")], logs / f"ncu_torch_{p}.csv")
        groups = ncu.flash_calls([r[0] for r in rows], launches)
        print(f"pass {p}: ncu profiled {len(launches)} PyTorch kernels in {time.monotonic() - t0:.0f} s", flush=True)
        for row, group in zip(out, groups):
            add_samples(row, group)
    return out


def sass(binary, out_dir):
    proc = sh(["cuobjdump", "-sass", str(binary)])
    if proc.returncode != 0:
        raise RuntimeError(f"cuobjdump: {proc.stderr[-500:]}")
    (out_dir / "flashlab-gpu.sass").write_text(proc.stdout)
    res = sh(["cuobjdump", "--dump-resource-usage", str(binary)])
    (out_dir / "flashlab-gpu.resources.txt").write_text(res.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--passes", type=int, default=2, help="ncu passes over every row (one sample each)")
    ap.add_argument("--work", type=Path, default=Path("/tmp/flashlab-time-dataset"))
    ap.add_argument("--only", default="checks,ours,torch,sass", help="comma-separated steps to run")
    ap.add_argument("--limit", type=int, default=0, help="only the first N rows (a quick try)")
    ap.add_argument("--metrics", choices=("time", "smem"), default="time",
                    help="what the ours step measures: the time and DRAM bytes, or the shared-memory pipe (SMEM_METRICS)")
    ap.add_argument("--set", choices=("main", "new", "compare"), default="main",
                    help="which rows: the data set's (time_configs.ours, torch_rows), the new shapes "
                    "(time_configs.new_shapes, torch_new_shapes: tests/data/gpu_time/h200_new_shapes.json) or "
                    "compare's presets (time_configs.compare_shapes, torch_compare_shapes: tests/data/gpu_time/h200_compare.json)")
    ap.add_argument("--rows", default=":", help="START:STOP, the rows the ours step times (a run split over "
                    "device calls; time_dataset_merge.py joins them)")
    args = ap.parse_args()
    if args.metrics == "smem":
        global METRICS, NCU
        METRICS, NCU = SMEM_METRICS, ncu.command(SMEM_METRICS, cache_control="all")
    steps = set(args.only.split(","))
    logs = args.work / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    args.out.mkdir(parents=True, exist_ok=True)
    sets = {"main": (time_configs.ours, lambda: None), "new": (time_configs.new_shapes, time_configs.torch_new_shapes),
            "compare": (time_configs.compare_shapes, time_configs.torch_compare_shapes)}
    rows = sets[args.set][0]()[: args.limit or None]
    torch_rows = sets[args.set][1]()
    doc = {"meta": metadata(args.commit, sys.argv[1:]), "ours": [], "torch": [], "checks": [], "errors": {}}

    def save():
        (args.out / "time_dataset.json").write_text(json.dumps(doc, indent=1) + "\n")
        common.tar_folder(args.out / "time_logs.tar.gz", logs)

    for step, fn in [("sass", lambda: sass(args.bin, logs)),
                     ("checks", lambda: doc.__setitem__("checks", checks(args.bin, rows, args.work, logs))),
                     ("ours", lambda: ours(args.bin, rows[slice(*(int(x) if x else None for x in args.rows.split(":")))],
                                           args.work, logs, args.passes, doc["ours"], save)),
                     ("torch", lambda: doc.__setitem__("torch", pytorch(args.work, logs, args.passes, torch_rows)))]:
        if step not in steps:
            continue
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - recorded; the other steps still run
            doc["errors"][step] = str(e)
            print(f"{step}: {e}", flush=True)
        save()
    failed = [c["flags"] for c in doc["checks"] if not c["passed_as_reported"]]
    print(f"rows: ours {len(doc['ours'])}, torch {len(doc['torch'])}; checks failed: {len(failed)}; errors: {doc['errors']}")
    for f in failed[:20]:
        print("  check failed:", f)
    return 0 if not doc["errors"] and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
