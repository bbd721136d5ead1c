#!/usr/bin/env python3
"""The table of docs/validation/v1_profile_h200.md from the two Nsight Compute exports of
scripts/gpu/v1_profile.sh (ncu --set full --page raw --csv): V1 against V2, one launch each.

Usage: profile_table.py V1.csv V2.csv   (prints Markdown on standard output)
"""
import csv
import io
import sys

# (label, metric, how to show it): what separates the two kernels, in the order the doc reads it
ROWS = [
    ("kernel time (ms)", "gpu__time_duration.sum", lambda v: f"{v / 1e6:.2f}"),
    ("instructions executed (G)", "smsp__inst_executed.sum", lambda v: f"{v / 1e9:.2f}"),
    ("issue slots busy (%)", "smsp__issue_active.avg.pct_of_peak_sustained_active", lambda v: f"{v:.1f}"),
    ("tensor pipe active (%)", "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
     lambda v: f"{v:.1f}"),
    ("shared-memory instructions, ldmatrix included (M)", "smsp__sass_inst_executed_op_shared.sum", lambda v: f"{v / 1e6:.0f}"),
    ("ldmatrix instructions (M)", "smsp__inst_executed_op_ldsm.sum", lambda v: f"{v / 1e6:.0f}"),
    ("shared-memory load wavefronts (M)", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", lambda v: f"{v / 1e6:.0f}"),
    ("  of which bank conflicts (M)", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", lambda v: f"{v / 1e6:.0f}"),
    ("shared-memory store wavefronts (M)", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", lambda v: f"{v / 1e6:.0f}"),
    ("  of which bank conflicts (M)", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", lambda v: f"{v / 1e6:.0f}"),
    ("stall short scoreboard (cycles per issue)", "smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio",
     lambda v: f"{v:.2f}"),
    ("stall barrier (cycles per issue)", "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio", lambda v: f"{v:.2f}"),
    ("stall MIO throttle (cycles per issue)", "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio",
     lambda v: f"{v:.2f}"),
    ("stall wait (cycles per issue)", "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio", lambda v: f"{v:.2f}"),
    ("L2 throughput (% of peak)", "lts__throughput.avg.pct_of_peak_sustained_elapsed", lambda v: f"{v:.1f}"),
    ("DRAM read (GB)", "dram__bytes_read.sum", lambda v: f"{v / 1e9:.3f}"),
    ("DRAM written (GB)", "dram__bytes_write.sum", lambda v: f"{v / 1e9:.3f}"),
    ("registers per thread", "launch__registers_per_thread", lambda v: f"{v:.0f}"),
]


def load(path):
    """The one profiled launch of an export: {metric name: text value}."""
    text = open(path).read()
    text = text[text.find('"ID"'):]
    rows = list(csv.reader(io.StringIO(text)))
    if len(rows) < 3:
        sys.exit(f"{path}: no profiled launch in this export (expected a header, a units row and one launch)")
    return dict(zip(rows[0], rows[2]))


def number(row, metric, path):
    if metric not in row or row[metric] == "":
        sys.exit(f"{path}: metric {metric} is missing (was the export made with --set full --page raw?)")
    return float(row[metric].replace(",", ""))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    a, b = load(sys.argv[1]), load(sys.argv[2])
    print(f"| | V1: {a['Grid Size']} blocks of {a['Block Size']} | V2: {b['Grid Size']} blocks of {b['Block Size']} | V1 / V2 |")
    print("|---|---|---|---|")
    for label, metric, show in ROWS:
        x, y = number(a, metric, sys.argv[1]), number(b, metric, sys.argv[2])
        ratio = f"{x / y:.2f}" if y else "-"
        print(f"| {label} | {show(x)} | {show(y)} | {ratio} |")


if __name__ == "__main__":
    main()
