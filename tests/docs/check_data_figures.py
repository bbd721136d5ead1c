#!/usr/bin/env python3
"""The figures README.md and docs/model.md quote from committed GPU data, recomputed from that data
(issue 26: docs that cannot go stale). check_validation_figures.py does the same for the H200
validation's counts (docs/validation/h200.md); the pages under docs/validation/ are generated, or
checked by the C++ tests that read the same data.

Usage: check_data_figures.py SOURCE_DIR

FIGURES lists each quoted sentence as a template with `{}` fields and the function that fills them
from tests/data/ (or from a page generated from it: docs/validation/time_model_h200.md). The
filled sentence must occur in its doc, whitespace runs taken as one space (a sentence may wrap).
A re-measured data set that moves a figure fails here until the doc follows. Prints each sentence
missing from its doc, with the figures it should quote, and a summary; exit 1 when one is missing.
"""
import json
import os
import re
import sys

SOURCE = sys.argv[1] if len(sys.argv) == 2 else sys.exit(__doc__)


def data(path):
    return json.load(open(os.path.join(SOURCE, "tests/data", path), encoding="utf-8"))


def page(path):
    return open(os.path.join(SOURCE, path), encoding="utf-8").read()


def time_rows():
    """The time data set's rows: this project's runs, then PyTorch's (tests/data/gpu_time/h200.json)."""
    d = data("gpu_time/h200.json")
    return d["ours"], d["torch"]


def torch_backward_calls():
    return sum("--pass backward" in r["flags"] for r in time_rows()[1])


def fa2_launch_kinds():
    """PyTorch's forward calls (tests/data/pytorch_fa2/fa2_launches.json) by kind: the standard kernel,
    split-KV with more than one query row, decode (one query row)."""
    rows = data("pytorch_fa2/fa2_launches.json")["rows"]
    split = [r for r in rows if any("splitkv" in x["kernel"] for x in r["launches"])]
    return len(rows) - len(split), sum(r["n_q"] > 1 for r in split), sum(r["n_q"] == 1 for r in split)


def backward_configs():
    """Configurations of the backward validation whose events equal the simulator's (all of them)."""
    grid = data("gpu_backward/results.json")["grid"]
    if not all(r["events_agree"] for r in grid):
        sys.exit("tests/data/gpu_backward/results.json: a configuration's events differ; the docs say all agree")
    return len(grid)


def deterministic_times():
    """Deterministic over released backward time (tests/data/gpu_deterministic/timing.json): per
    (d, mask) in the file's order, the ratio and both medians."""
    rows = data("gpu_deterministic/timing.json")["rows"]
    pairs = [(r, d) for r, d in zip(rows[0::2], rows[1::2])]
    for r, d in pairs:
        if "released" not in r["flags"] or "deterministic" not in d["flags"]:
            sys.exit("tests/data/gpu_deterministic/timing.json: rows are not (released, deterministic) pairs")
    return [(d["median_ms"] / r["median_ms"], d["median_ms"], r["median_ms"]) for r, d in pairs]


def determinism_sentence():
    (a, a_det, a_rel), (ac, _, _), (b, b_det, b_rel), (bc, _, _) = deterministic_times()
    return (f"{a:.2f}x", f"{a_det:.2f}", f"{a_rel:.2f}", f"{ac:.2f}x",
            f"{b:.2f}x", f"{b_det:.2f}", f"{b_rel:.2f}", f"{bc:.2f}x")


def short_e(x):
    """6.1e-5 (no padded exponent)."""
    mantissa, exponent = f"{x:.1e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def released_repeats():
    r = data("gpu_deterministic/deterministic_results.json")["repeats"]["released"]
    diff = r["elements_differing_from_run_0"]
    return (f"{min(diff)}–{max(diff)}", f"{r['elements']:,}", short_e(r["max_abs_diff"]), f"{r['max_abs_dQ']:.2f}")


def deterministic_ncu(kernel, metric):
    """The det-causal row's figure of one kernel (tests/data/gpu_deterministic/ncu_results.json)."""
    rows = data("gpu_deterministic/ncu_results.json")["rows"]
    return f"{next(r for r in rows if r['row'] == 'det-causal' and r['kernel'] == kernel)['ncu'][metric]:,}"


def ceilings(*keys):
    c = data("gpu_ceilings/h200.json")
    return tuple(c[k] for k in keys)


def implied_dram_write():
    """The DRAM write bandwidth the read and copy ceilings imply: a copy reads and writes the same
    bytes, so 2 / copy = 1 / read + 1 / write (GB/s)."""
    read, copy = ceilings("dram_read_gbps", "dram_copy_gbps")
    return f"{1 / (2 / copy - 1 / read):,.0f}"


def dram_write():
    """The mean of dram_write.cu's runs (tests/data/gpu_ceilings/h200_dram_write.json), GB/s."""
    runs = data("gpu_ceilings/h200_dram_write.json")["runs"]
    return (f"{sum(r['dram_write_gbps'] for r in runs) / len(runs):,.0f}",)


def latency():
    runs = data("gpu_latency/h200.json")["runs"]
    l2, dram = {r["l2_hit_ns"] for r in runs}, {round(r["dram_ns"]) for r in runs}
    if len(l2) != 1 or len(dram) != 1:
        sys.exit("tests/data/gpu_latency/h200.json: the runs disagree; the docs quote one figure")
    return l2.pop(), dram.pop()


def wgmma():
    """tests/data/gpu_ceilings/h200_wgmma.json: the slowest and fastest m64n128k16 SS rate over 1-3
    warpgroups (TFLOP/s), mma.sync's fp16 rate beside it, one wgmma's latency (cycles) for N = 128, 256."""
    w = data("gpu_ceilings/h200_wgmma.json")
    ss = [w["wgmma_f16_f32acc"][f"ss_n128_{k}wg"]["tflops"] for k in (1, 2, 3)]
    lat = w["wgmma_latency_cycles"]
    return min(ss), max(ss), ceilings("mma_sync_f16_tflops")[0], lat["ss_n128"], lat["ss_n256"]


def smem_latency():
    """tests/data/gpu_latency/h200_smem.json: a shared-memory load's latency, cycles to 0.1."""
    cycles = {f"{r['smem_cycles']:.1f}" for r in data("gpu_latency/h200_smem.json")["runs"]}
    if len(cycles) != 1:
        sys.exit("tests/data/gpu_latency/h200_smem.json: the runs disagree; the docs quote one figure")
    return (cycles.pop(),)


# (doc, sentence with {} fields, the fields)
FIGURES = [
    ("README.md", "checked against Nsight Compute on {} of PyTorch's calls",
     lambda: (len(data("pytorch_fa2/fa2_launches.json")["rows"]),)),
    ("README.md", "checked against {} of PyTorch's backward calls", lambda: (torch_backward_calls(),)),
    ("README.md", "fitted on a training split of {} kernel-only timings on the H200",
     lambda: (sum(map(len, time_rows())),)),
    ("README.md", "the time model against {} kernel-only timings on the H200", lambda: (sum(map(len, time_rows())),)),
    ("README.md", "agree with the simulator's events on {} configurations", lambda: (backward_configs(),)),
    ("docs/model.md", "their event streams equal the simulator's in {} configurations", lambda: (backward_configs(),)),
    ("docs/model.md", "ran {} calls of PyTorch {}'s flash backend under Nsight Compute",
     lambda: (len(data("pytorch_fa2/fa2_launches.json")["rows"]),
              data("pytorch_fa2/fa2_launches.json")["metadata"]["torch"].split("+")[0].rsplit(".", 1)[0])),
    ("docs/model.md", "standard kernel ({}), split-KV ({}, with GQA", lambda: fa2_launch_kinds()[:2]),
    ("docs/model.md", "and decode ({}: 32 heads without grouping", lambda: fa2_launch_kinds()[2:]),
    ("docs/model.md", "the {} PyTorch backward calls of the time data set", lambda: (torch_backward_calls(),)),
    ("docs/model.md", "(the {} PyTorch rows of the time data set)", lambda: (torch_backward_calls(),)),
    ("docs/model.md", "({} runs of this project's kernels and {} of PyTorch's FA2",
     lambda: tuple(map(len, time_rows()))),
    ("docs/model.md", "{} the released form's at d = 64 ({} ms against {}, 128 × 128 × 8; causal {}) and {} at "
                      "d = 128 ({} ms against {}, 64 × 64 × 4; causal {})", determinism_sentence),
    ("docs/model.md", "differed from the first run in {} of its {} fp16 elements each time (at most {}, against "
                      "max |dQ| = {})", released_repeats),
    ("docs/model.md", "dot_do_o's stores {} B = D + 6 slices, the main kernel's reductions {} B",
     lambda: (deterministic_ncu("fl_v2_bwd_dot_do_o", "st"), deterministic_ncu("fl_v2_bwd_dq_dk_dv", "red"))),
    ("docs/model.md", "the {} calls of tests/data/gpu_fa2_backward/fa2_backward_bytes.json",
     lambda: (len(data("gpu_fa2_backward/fa2_backward_bytes.json")["rows"]),)),
    ("docs/model.md", "({} launches: ", lambda: (sum("flash_bwd" in x["name"] for r in
                                                    data("gpu_fa2_backward/fa2_backward_bytes.json")["rows"]
                                                    for x in r["launches"]),)),
    ("docs/model.md", "mma.sync m16n8k16: {} TFLOP/s fp16, {} bf16",
     lambda: ceilings("mma_sync_f16_tflops", "mma_sync_bf16_tflops")),
    ("docs/model.md", "| {:,.0f} GB/s |", lambda: ceilings("smem_read_gbps")),
    ("docs/model.md", "| the step's loads and stores | {:,.0f} GB/s |", lambda: ceilings("l2_read_gbps")),
    ("docs/model.md", "(reads at {:,.0f} GB/s, writes at the {} GB/s that the read and copy figures imply)",
     lambda: ceilings("dram_read_gbps") + (implied_dram_write(),)),
    ("docs/model.md", "plus the launch overhead ({} µs)", lambda: ceilings("launch_us")),
    ("docs/model.md", "streaming stores alone reach {} GB/s (`scripts/gpu/dram_write.cu`", dram_write),
    ("docs/model.md", "an L2 hit takes {} ns and a DRAM access {} ns (`scripts/gpu/latency.cu`", latency),
    ("docs/model.md", "wgmma m64n128k16 with both operands in shared memory, reaches {}–{} TFLOP/s with one to three "
                      "warpgroups per SM, against mma.sync's {}, and one wgmma issued, committed and waited for alone "
                      "takes {} cycles (m64n256k16: {})", wgmma),
    ("docs/model.md", "a dependent shared-memory load takes {} cycles", smem_latency),
    ("docs/model.md", "runs the model on each of the {} configs measured on the H200",
     lambda: (len(data("gpu_timing/h200.json")["runs"]),)),
    ("docs/model.md", "(tests/data/gpu_ablation/ablation.json, {} runs",
     lambda: (len(data("gpu_ablation/ablation.json")["ablation"]),)),
]


def flat(text):
    return " ".join(text.split())


def main():
    docs, missing = {}, 0
    for doc, template, fields in FIGURES:
        if doc not in docs:
            docs[doc] = flat(page(doc))
        sentence = flat(template.format(*fields()))
        if sentence not in docs[doc]:
            missing += 1
            print(f"FAIL  {doc} does not say: {sentence}")
    print(f"check_data_figures: {len(FIGURES) - missing} of {len(FIGURES)} quoted sentences match tests/data")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
