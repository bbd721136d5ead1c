#!/usr/bin/env python3
"""What PyTorch's FlashAttention-2 backward requests, measured: Nsight Compute on its three backward
kernels (flash_bwd_dot_do_o_kernel, flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel,
flash_bwd_convert_dq_kernel) at the levels `flashlab count --kernel fa2 --pass backward` counts:
global loads, stores, reductions and atomics at L1 (l1tex__t_bytes_pipe_lsu_mem_global_op_*: the
requests, the papers' HBM bytes), the same at the L2 (lts__t_bytes_...: what reaches the L2 after
L1 hits), and DRAM. The configurations are the 12 backward calls of the time data set
(time_configs.torch_rows, the shapes of tests/data/gpu_time/h200.json), then calls the data set does
not hold: ragged sizes, a window, d = 32 and 96, and grouped K/V heads (whose at::sum launches are
not flash kernels and are not profiled: their grids are recorded from the profiler's kernel list).

    python3 scripts/gpu/fa2_backward_bytes.py --out DIR --commit HASH     # on the GPU machine
    python3 scripts/gpu/fa2_backward_bytes.py --out DIR --commit HASH --from-log DIR/ncu.log   # its log, again
writes DIR/fa2_backward_bytes.json (metadata + one row per call) and DIR/ncu.log; nothing is
compared here: tests/sim/executor/fa2_backward_test.cpp does that from the raw figures.
"""

import argparse
import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import common  # noqa: E402
import ncu  # noqa: E402
import time_configs  # noqa: E402
import time_dataset  # noqa: E402

METRICS = {k: ncu.NAMES[k] for k in ("ld", "st", "red", "atom", "ldgsts")} | {
    "lts_ld": "lts__t_bytes_srcunit_tex_op_read.sum",
    "lts_st": "lts__t_bytes_srcunit_tex_op_write.sum",
    "lts_red": "lts__t_bytes_srcunit_tex_op_red.sum",
    "lts_atom": "lts__t_bytes_srcunit_tex_op_atom.sum",
} | {k: ncu.NAMES[k] for k in ("dram_rd", "dram_wr", "time_ns")}

# (batch, heads, kv_heads, n_q, n_k, d, mask, dtype): mask none, causal (bottom-right) or window:L,R
EXTRA = [
    (2, 8, 8, 1000, 1000, 64, "none", "fp16"),        # ragged: N not a multiple of the tile
    (2, 8, 8, 700, 1100, 128, "causal", "fp16"),      # ragged, N_q != N_k, bottom-right causal
    (1, 16, 16, 4096, 4096, 64, "window:256,0", "fp16"),
    (2, 16, 16, 2048, 2048, 32, "none", "fp16"),
    (2, 16, 16, 2048, 2048, 96, "causal", "bf16"),
    (2, 32, 8, 2048, 2048, 128, "causal", "fp16"),    # GQA: dK, dV per query head, then at::sum
]


def calls():
    rows = [(b, h, hk, nq, nk, d, "causal" if causal else "none", dtype)
            for (p, b, h, hk, nq, nk, d, causal, dtype) in time_configs.torch_rows() if p == "backward"]
    return rows + EXTRA


CHILD = r'''
import json, sys, torch
rows = json.loads(sys.argv[1])
torch.manual_seed(0)
for (b, h, hk, nq, nk, d, mask, dtype) in rows:
    dt = torch.bfloat16 if dtype == "bf16" else torch.float16
    q = torch.randn(b, nq, h, d, device="cuda", dtype=dt, requires_grad=True)
    k = torch.randn(b, nk, hk, d, device="cuda", dtype=dt, requires_grad=True)
    v = torch.randn(b, nk, hk, d, device="cuda", dtype=dt, requires_grad=True)
    left, right = -1, -1
    if mask.startswith("window:"):
        left, right = (int(x) for x in mask[7:].split(","))
    out = torch.ops.aten._flash_attention_forward(q, k, v, None, None, nq, nk, 0.0, mask == "causal", False,
                                                  window_size_left=left, window_size_right=right)
    out[0].backward(torch.randn_like(out[0]))
    torch.cuda.synchronize()
'''


def metadata(commit, cmd):
    """The run's device, driver, PyTorch, Nsight Compute, commit and date (time_dataset.metadata), with
    this script's command and Nsight Compute flags."""
    return time_dataset.metadata(commit, []) | {"command": cmd, "ncu_flags": "--clock-control none --cache-control all"}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=pathlib.Path, required=True)
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--from-log", type=pathlib.Path, help="a kept ncu.log of this script to read instead of running ncu")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rows = calls()
    if args.from_log:
        stdout = args.from_log.read_text()
    else:
        child = args.out / "child.py"
        child.write_text(CHILD)
        proc = ncu.run(ncu.command(METRICS, cache_control="all") + ["--kernel-name", "regex:flash", sys.executable,
                                                                    str(child), json.dumps(rows)], args.out / "ncu.log")
        stdout = proc.stdout
        if proc.returncode != 0:
            raise SystemExit(f"ncu exited with {proc.returncode}; see {args.out / 'ncu.log'}")
    # A metric a kernel does not have (ncu prints "n/a": no LDGSTS in the convert kernel, say) is left out.
    found = [{k: v for k, v in x.items() if k in ("name", "grid", "block") or not isinstance(v, str)}
             for x in ncu.launches(stdout, METRICS, strict=False)]
    try:  # each call: its forward (O and L), then the backward's launches up to convert_dq
        groups = ncu.flash_calls(["backward"] * len(rows), found)
    except RuntimeError as e:
        raise SystemExit(f"ncu's flash launches do not match the calls: {e}")
    out = []
    for (b, h, hk, nq, nk, d, mask, dtype), group in zip(rows, groups):
        launches = [{"name": x["name"][:300], "grid": x["grid"], "block": x["block"]} | {k: x[k] for k in METRICS if k in x}
                    for x in group]
        out.append({"batch": b, "heads": h, "kv_heads": hk, "n_q": nq, "n_k": nk, "d": d, "mask": mask, "dtype": dtype,
                    "launches": launches})
    common.write_launch_rows(
        args.out / "fa2_backward_bytes.json",
        metadata(args.commit, "python3 scripts/gpu/fa2_backward_bytes.py --out DIR --commit HASH"), METRICS, out,
        ("batch", "heads", "kv_heads", "n_q", "n_k", "d", "mask", "dtype"),
        lambda x: (x["name"][:70], x["grid"], {k: x.get(k) for k in ("ld", "st", "red", "lts_ld", "dram_rd")}))


if __name__ == "__main__":
    main()
