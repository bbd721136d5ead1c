"""Lab 01 (docs/labs/01_where_v1_traffic_goes.md): the figures its four questions ask about."""
from closed_forms import human_bytes, v1_o_l_m_reads, v1_read, v1_write, v2_read, v2_write
from lab_output import cells, field

SCRIPT = "docs/labs/01_where_v1_traffic_goes.sh"
# compare --model gpt2-small: 12 heads, d = 64, N = 1024, fp16; V1 on its kernel's tile at d = 64, 64 x 64
# (kernels/src/tiles.hpp; the header names it)
GPT2 = dict(heads=12, N=1024, d=64, e=2, v1_B_c=64)


def question_1(checks, out):
    """compare's "of which O, l, m re-reads": V1's T_c (N d e + 2 N 4) per head, V2 none."""
    standard, v1, v2 = cells(out.section("compare --model gpt2-small"), "of which O, l, m re-reads")[:3]
    g = GPT2
    want = human_bytes(g["heads"] * v1_o_l_m_reads(g["N"], g["N"], g["d"], g["v1_B_c"], g["e"]))
    checks.equal("Q1 V1's O, l, m re-reads (gpt2-small)", v1, want)
    checks.equal("Q1 standard's O, l, m re-reads (gpt2-small)", standard, "0 B")
    checks.equal("Q1 V2's O, l, m re-reads (gpt2-small)", v2, "0 B")


def question_2_3(checks, out):
    """V1's O reads T_c N d 4; V2's K reads T_r N d 4 (N = 1024, d = 64, 64 x 64 tiles, fp32)."""
    N, d, B = 1024, 64, 64
    v1 = out.json("count --algo v1 --nq 1024")
    v2 = out.json("count --algo v2 --nq 1024")
    checks.equal("Q2 V1 hbm.read_bytes.O", field(v1, "hbm.read_bytes.O"), (N // B) * N * d * 4)
    checks.equal("Q3 V2 hbm.read_bytes.K", field(v2, "hbm.read_bytes.K"), (N // B) * N * d * 4)


def question_4(checks, out):
    """The sweep's read and written bytes per N, by the two rules (fp16, 64 x 64 tiles)."""
    rows = out.csv_rows("sweep --over n")
    rules = {"v1": (v1_read, v1_write), "v2": (v2_read, v2_write)}
    checks.equal("Q4 rows printed (N = 1024 .. 8192, v1 and v2)", len(rows), 8)
    for r in rows:
        N = int(r["value"])
        read, write = rules[r["algo"]]
        checks.equal("Q4 %s N = %d hbm_read_bytes" % (r["algo"], N), int(r["hbm_read_bytes"]), read(N, N, 64, 64, 64, 2))
        checks.equal("Q4 %s N = %d hbm_write_bytes" % (r["algo"], N), int(r["hbm_write_bytes"]), write(N, N, 64, 64, 64, 2))


def check(checks, out, source_dir):
    checks.run("question 1", question_1, out)
    checks.run("questions 2 and 3", question_2_3, out)
    checks.run("question 4", question_4, out)
