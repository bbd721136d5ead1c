"""Lab 02 (docs/labs/02_causal_block_skip.md): tile counts of a causal mask and the keys each row sees."""
import math
import re

from lab_output import field, line_with

SCRIPT = "docs/labs/02_causal_block_skip.sh"


def tiles_line(text):
    """(total, visited, full, partial, skipped) from count's "Tiles (i, j): ..." line."""
    line = line_with(text, "Tiles (i, j):")
    return tuple(int(re.search(r"\b%s (\d+)" % k, line).group(1)) for k in ("total", "visited", "full", "partial", "skipped"))


def question_1(checks, out):
    """N = 1024, 64 x 64, top-left causal: T(T+1)/2 visited, T partial, T(T-1)/2 skipped, T = 16."""
    T = 16
    tiles = out.json("count --algo v2 --seq 1024")["tiles"]
    for name, want in (("visited", T * (T + 1) // 2), ("partial", T), ("skipped", T * (T - 1) // 2)):
        checks.equal("Q1 tiles.%s" % name, field(tiles, name), want)


def question_2(checks, out):
    """V1 with block skip off visits all T^2 tiles, on only T(T+1)/2; the classes do not move."""
    T = 16
    off = tiles_line(out.section("count --algo v1", "--block-skip off"))
    on = tiles_line(out.section("count --algo v1", "--block-skip on"))
    classes = (T * (T - 1) // 2, T, T * (T - 1) // 2)
    checks.equal("Q2 block skip off: total, visited, full, partial, skipped", off, (T * T, T * T) + classes)
    checks.equal("Q2 block skip on: total, visited, full, partial, skipped", on, (T * T, T * (T + 1) // 2) + classes)


def rows_of(text):
    """{row r: (L[r], O[r][0])} from run's "O[r][0..1) and L[r]" table."""
    table = {}
    for line in text.split("O[r][0..1) and L[r]", 1)[1].splitlines()[2:]:
        m = re.match(r"^\s+(\d+)\s+(\S+) \| (\S+)\s*$", line)
        if not m:
            break
        table[int(m.group(1))] = (float(m.group(2)), float(m.group(3)))
    return table


def equal_rows(checks, what, got, want):
    """Row by row, L and O within 1e-6 (the script prints 8 significant digits)."""
    for r, (L, O) in want.items():
        g = got.get(r)
        ok = g is not None and (g[0] == L if math.isinf(L) else abs(g[0] - L) < 1e-6) and abs(g[1] - O) < 1e-6
        checks.holds("%s row %d: (L, O)" % (what, r), ok, "the lab prints %s, the mask gives %s" % (g, (L, O)))


def question_3(checks, out):
    """Equal scores, V = key index: a row that sees keys 0..k has l = k + 1, L = ln(k + 1), O = k / 2."""
    def sees(last):  # keys 0 .. last
        return math.log(last + 1), last / 2
    top_left = rows_of(out.section("--nq 2 --nk 5", "--mask causal ", "run"))
    bottom_right = rows_of(out.section("--nq 2 --nk 5", "--mask causal-br", "run"))
    equal_rows(checks, "Q3 top-left (row r sees keys 0..r)", top_left, {0: sees(0), 1: sees(1)})
    equal_rows(checks, "Q3 bottom-right (row r sees keys 0..r+3)", bottom_right, {0: sees(3), 1: sees(4)})


def question_4(checks, out):
    """N_q = 4 > N_k = 2, bottom-right: rows 0, 1 see no key (O = 0, L = +inf); Q block 0 visits nothing."""
    rows = rows_of(out.section("run", "--nq 4 --nk 2"))
    equal_rows(checks, "Q4", rows, {0: (math.inf, 0.0), 1: (math.inf, 0.0), 2: (0.0, 0.0), 3: (math.log(2), 0.5)})
    tiles = tiles_line(out.section("count", "--nq 4 --nk 2"))
    checks.equal("Q4 tiles: total, visited, full, partial, skipped", tiles, (2, 1, 0, 1, 1))


def check(checks, out, source_dir):
    for name, question in (("question 1", question_1), ("question 2", question_2), ("question 3", question_3),
                           ("question 4", question_4)):
        checks.run(name, question, out)
