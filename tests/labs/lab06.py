"""Lab 06 (docs/labs/06_why_v2_is_faster.md): the walk's structural figures (bytes, grid, barriers)
by closed forms, and the measured table by the JSON fields it quotes. The predicted times are the
time model's and are not re-derived here (tests/sim/time holds the model to the measurements)."""
import json
import os
import re

from closed_forms import human_bytes, v1_read, v1_write, v2_read, v2_write

SCRIPT = "docs/labs/06_why_v2_is_faster.sh"
N, d, B, e = 4096, 64, 64, 2
T = N // B


# explain's columns, right-aligned: a cell ends under the end of its header
COLUMNS = ["time", "speed-up", "TFLOP/s", "bound", "HBM", "DRAM", "grid", "waves", "non-matmul", "warp SRAM", "barriers"]


def walk_cell(text, step, name):
    """The cell of column `name` in the row starting `step` of explain's table."""
    lines = text.splitlines()
    header = next(line for line in lines if line.startswith("step "))
    row = next(line for line in lines if line.startswith(step))
    ends, at = [], len("step")
    for column in COLUMNS:
        at = header.index(column, at) + len(column)
        ends.append(at)
    k = COLUMNS.index(name)
    return row[ends[k - 1] if k else len(step):ends[k]].strip()


def question_1_2(checks, out):
    """16 heads: HBM of V1 and of V1 with the Q outer loop; DRAM the compulsory Q, K, V; the grid."""
    text = [body for command, body in out.sections if command.startswith("flashlab explain") and "--heads 16" in command
            and "--mask" not in command][0]
    heads = 16
    v1 = heads * (v1_read(N, N, d, B, B, e) + v1_write(N, N, d, B, B, e))
    q_outer = heads * (v2_read(N, N, d, B, B, e) + v2_write(N, N, d, B, B, e))
    checks.equal("Q1 V1's HBM", walk_cell(text, "V1 (FA1", "HBM"), human_bytes(v1))
    checks.equal("Q1 Q outer loop's HBM", walk_cell(text, "+ Q outer loop", "HBM"), human_bytes(q_outer))
    checks.equal("Q1 V1's DRAM (Q, K, V once)", walk_cell(text, "V1 (FA1", "DRAM"), human_bytes(heads * 3 * N * d * e))
    checks.equal("Q2 V1's grid (one block per head)", walk_cell(text, "V1 (FA1", "grid"), "%d" % heads)
    checks.equal("Q2 grid of one block per Q block", walk_cell(text, "+ one block per Q block", "grid"), "{:,}".format(heads * T))
    checks.equal("Q5 split-K barriers (5 per tile)", walk_cell(text, "+ delayed rescaling", "barriers"), "{:,}".format(5 * T * T * heads))
    checks.equal("Q5 split-Q barriers (2 per tile)", walk_cell(text, "+ split-Q warps", "barriers"), "{:,}".format(2 * T * T * heads))


def question_3(checks, out):
    """256 heads: V1's grid is batch x heads, one block per Q block multiplies it by T_r."""
    text = [body for command, body in out.sections if "--batch 8 --heads 32" in command][0]
    checks.equal("Q3 V1's grid at 256 heads", walk_cell(text, "V1 (FA1", "grid"), "256")
    checks.equal("Q3 grid of one block per Q block at 256 heads", walk_cell(text, "+ one block per Q block", "grid"),
                 "{:,}".format(256 * T))


def question_6(checks, out):
    """Causal, top-left: block skip reads K_j, V_j only for the T(T+1)/2 visited tiles."""
    text = [body for command, body in out.sections if "--mask causal" in command][0]
    heads = 16
    visited = T * (T + 1) // 2
    v2_causal = heads * (N * d * e + 2 * visited * B * d * e + N * d * e + N * 4)
    checks.equal("Q6 V2's HBM with block skip", walk_cell(text, "+ block skip", "HBM"), human_bytes(v2_causal))


def question_7(checks, out, source_dir):
    """The measured rows: each printed time and DRAM read is the JSON's median_ms and dram_read."""
    data = json.load(open(os.path.join(source_dir, "tests/data/gpu_timing/h200.json")))
    text = [body for command, body in out.sections if command.startswith("measured on the H200")][0]
    printed = [line.split() for line in text.splitlines() if re.match(r"^v[12] ", line)]
    checks.equal("Q7 measured rows printed (V1 and V2 at 16 and 256 heads, causal at 16)", len(printed), 6)
    for row in printed:
        algo, bh, n, dd, mask, tile = row[0], int(row[1]), int(row[2]), int(row[3]), row[4], row[5]
        runs = [r for r in data["runs"] if r["config"]["algo"] == algo and r["config"]["mask"] == mask
                and r["config"]["batch"] * r["config"]["heads"] == bh and r["config"]["n_q"] == n
                and r["config"]["d"] == dd and "%dx%dx%d" % (r["config"]["b_r"], r["config"]["b_c"], r["config"]["warps"]) == tile]
        checks.equal("Q7 %s runs in the JSON" % " ".join(row[:6]), len(runs), 1)
        if len(runs) == 1:
            checks.equal("Q7 %s median_ms" % " ".join(row[:6]), row[6], "%.3f" % runs[0]["median_ms"])
            checks.equal("Q7 %s dram_read (MB)" % " ".join(row[:6]), row[8], "%.1f" % (runs[0]["dram_read"] / 1e6))


def check(checks, out, source_dir):
    checks.run("questions 1, 2 and 5", question_1_2, out)
    checks.run("question 3", question_3, out)
    checks.run("question 6", question_6, out)
    checks.run("question 7", question_7, out, source_dir)
