#!/usr/bin/env python3
"""The table of docs/validation/v1_profile_h200.md from the two Nsight Compute exports of
scripts/gpu/v1_profile.sh (ncu --set full --page raw --csv): V1 against V2, one launch each.

Usage: profile_table.py V1.csv V2.csv   (prints Markdown on standard output)
"""
import csv
import io
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import text_table  # noqa: E402

# label | metric | divisor | decimals: what separates the two kernels, in the order the doc reads it,
# each value shown as value / divisor to `decimals` places (an indented label: a share of the row above)
ROWS = text_table("""
kernel time (ms)                                  | gpu__time_duration.sum                                                    | 1e6 | 2
instructions executed (G)                         | smsp__inst_executed.sum                                                   | 1e9 | 2
issue slots busy (%)                              | smsp__issue_active.avg.pct_of_peak_sustained_active                       | 1   | 1
tensor pipe active (%)                            | sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active    | 1   | 1
shared-memory instructions, ldmatrix included (M) | smsp__sass_inst_executed_op_shared.sum                                    | 1e6 | 0
ldmatrix instructions (M)                         | smsp__inst_executed_op_ldsm.sum                                           | 1e6 | 0
shared-memory load wavefronts (M)                 | l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum                      | 1e6 | 0
  of which bank conflicts (M)                     | l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum                  | 1e6 | 0
shared-memory store wavefronts (M)                | l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum                      | 1e6 | 0
  of which bank conflicts (M)                     | l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum                  | 1e6 | 0
stall short scoreboard (cycles per issue)         | smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio | 1   | 2
stall barrier (cycles per issue)                  | smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio          | 1   | 2
stall MIO throttle (cycles per issue)             | smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio     | 1   | 2
stall wait (cycles per issue)                     | smsp__average_warps_issue_stalled_wait_per_issue_active.ratio             | 1   | 2
L2 throughput (% of peak)                         | lts__throughput.avg.pct_of_peak_sustained_elapsed                         | 1   | 1
DRAM read (GB)                                    | dram__bytes_read.sum                                                      | 1e9 | 3
DRAM written (GB)                                 | dram__bytes_write.sum                                                     | 1e9 | 3
registers per thread                              | launch__registers_per_thread                                              | 1   | 0
""", str, str, float, int)


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
    for label, metric, divisor, decimals in ROWS:
        x, y = number(a, metric, sys.argv[1]), number(b, metric, sys.argv[2])
        ratio = f"{x / y:.2f}" if y else "-"
        print(f"| {label} | {x / divisor:.{decimals}f} | {y / divisor:.{decimals}f} | {ratio} |")


if __name__ == "__main__":
    main()
