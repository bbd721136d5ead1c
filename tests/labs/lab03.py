"""Lab 03 (docs/labs/03_sram_size.md): HBM bytes as M doubles, and the SRAM capacity error."""
import re

from closed_forms import auto_blocks, largest_square_tile, v1_read, v1_write, v2_read, v2_write
from lab_output import line_with

SCRIPT = "docs/labs/03_sram_size.sh"
N, d, e = 8192, 64, 4  # --seq 8192 --d 64 --dtype fp32


def question_1_2(checks, out):
    """Each M: the tile of FA1 Alg. 1 line 1 and V1's, V2's read + written bytes by their rules."""
    rows = out.csv_rows("sweep --over sram")
    ms = [16384 * 2 ** k for k in range(6)]
    checks.equal("Q1 values of M printed", sorted({int(r["value"]) for r in rows}), ms)
    totals = {"v1": lambda *a: v1_read(*a) + v1_write(*a), "v2": lambda *a: v2_read(*a) + v2_write(*a)}
    for r in rows:
        M = int(r["value"])
        B_r, B_c = auto_blocks(M, d, e)
        where = "%s M = %d" % (r["algo"], M)
        checks.equal("Q1 %s (b_r, b_c)" % where, (int(r["b_r"]), int(r["b_c"])), (B_r, B_c))
        checks.equal("Q1 %s hbm_total_bytes" % where, int(r["hbm_total_bytes"]), totals[r["algo"]](N, N, d, B_r, B_c, e))


def question_3(checks, out):
    """M = 60000 B, fp16, d = 64: the largest B with (B d + 2 B d + B^2) e <= M."""
    text = out.section("count --algo v1 --sram 60000")
    line = line_with(text, "flashlab: error:")
    got = re.search(r"largest B_r = B_c that fits is (\d+)", line)
    checks.equal("Q3 largest B_r = B_c that fits", int(got.group(1)) if got else line, largest_square_tile(60000, 64, 2))


def check(checks, out, source_dir):
    checks.run("questions 1 and 2", question_1_2, out)
    checks.run("question 3", question_3, out)
