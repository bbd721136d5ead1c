"""Lab 04 (docs/labs/04_v1_round_trips.md): V1's error against the unit roundoff u of each dtype."""
import re

from closed_forms import unit_roundoff
from lab_output import cells, line_with

SCRIPT = "docs/labs/04_v1_round_trips.sh"
# (N_k, B_c, dtype) of each run, N_q = 64, d = 64, B_r = 64, seed 1
RUNS = [(128, 64, "bf16"), (512, 64, "bf16"), (2048, 64, "bf16"), (8192, 64, "bf16"), (8192, 64, "fp32"),
        (1024, 1, "fp16")]


def errors(text):
    """{algo: (relative error of O, max error of L)} from run's table."""
    out = {}
    for algo in ("standard", "v1", "v2"):
        row = cells(text, algo)
        out[algo] = (float(row[1]), float(row[2]))
    return out


def question_1_2_4(checks, out):
    """T_c = N_k / B_c; V2 within 4u in 16-bit types; V1 within 4u in bf16 (T_c <= 128), past it at
    T_c = 1024 in fp16, within 4u + u sqrt(T_c) (its expected u sqrt(T_c) / 3, three times over)."""
    for N_k, B_c, dtype in RUNS:
        text = out.section("run --algo all", "--nk %d " % N_k, "--bc %d " % B_c, "--dtype %s" % dtype)
        T_c = N_k // B_c
        where = "%s, T_c = %d" % (dtype, T_c)
        header = re.search(r"T_c = (\d+)", line_with(text, "N_q ="))
        checks.equal("%s: T_c in the header" % where, int(header.group(1)) if header else None, T_c)
        u, e = unit_roundoff(dtype), errors(text)
        if dtype == "fp32":  # no round trip rounds: V1's error is V2's (within 2x), far below bf16's u
            checks.holds("fp32: V1's error within 2x of V2's", e["v1"][0] <= 2 * e["v2"][0] + 4 * u,
                         "V1 %.3e, V2 %.3e" % (e["v1"][0], e["v2"][0]))
            continue
        checks.holds("%s: V2's |O-O_ref|/|O_ref| <= 4u = %.2e" % (where, 4 * u), e["v2"][0] <= 4 * u, "%.3e" % e["v2"][0])
        bound = 4 * u + u * T_c ** 0.5
        checks.holds("%s: V1's |O-O_ref|/|O_ref| <= 4u + u sqrt(T_c) = %.2e" % (where, bound), e["v1"][0] <= bound,
                     "%.3e" % e["v1"][0])
        past = dtype == "fp16"  # lab 04 question 4: only the fine-tile fp16 run passes 4u
        checks.holds("%s: V1's error %s 4u" % (where, "passes" if past else "stays within"),
                     (e["v1"][0] > 4 * u) == past, "%.3e against 4u = %.2e" % (e["v1"][0], 4 * u))


def question_3(checks, out):
    """Standard attention rounds S and P to the input type: its L error is above V2's in 16-bit runs."""
    for N_k, B_c, dtype in RUNS:
        if dtype == "fp32":
            continue
        e = errors(out.section("run --algo all", "--nk %d " % N_k, "--bc %d " % B_c, "--dtype %s" % dtype))
        checks.holds("%s, N_k = %d: standard's max|L-L_ref| above V2's" % (dtype, N_k), e["standard"][1] > e["v2"][1],
                     "standard %.3e, V2 %.3e" % (e["standard"][1], e["v2"][1]))


def check(checks, out, source_dir):
    checks.run("questions 1, 2 and 4", question_1_2_4, out)
    checks.run("question 3", question_3, out)
