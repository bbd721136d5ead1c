"""The validation grid: every configuration validate.py runs, as flashlab-gpu flag lines.

Each row names what it covers. Together they span the three algorithms, every mask (none,
causal top-left, causal bottom-right, windows, the diagonal alone), ragged tiles on both axes,
N_q > N_k with rows that see no key, N = 1, every compiled tile shape (B_r x B_c x warps), head
dims 32/64/128, fp16 and bf16, block skip on and off, and batch * heads > 1.
"""

from dataclasses import dataclass

from common import text_table


@dataclass
class GridConfig:
    name: str      # short unique name (file names of traces and dumps)
    flags: str     # flashlab-gpu configuration flags
    covers: str    # what the row is there for
    trace: bool = False  # commit its GPU trace to tests/data/gpu/
    torch: bool = False  # compare its O with PyTorch's scaled_dot_product_attention
    ncu: bool = False    # backward rows: profile its kernels with Nsight Compute
    sanitize: bool = False  # backward rows: compute-sanitizer memcheck and racecheck


def _table(text, marks, prefix="", **fixed):
    """GridConfigs from a text table (common.text_table), one row a line: name | marks | flags | covers.
    marks: the words of `marks` (GridConfig's flags: trace, torch, ncu, sanitize) the row sets, or "-"
    for none; flags: flashlab-gpu's, after `prefix`; `fixed`: the flags every row of the table sets.
    ValueError, naming the row, for a mark the table does not take."""
    rows = []
    for name, words, flags, covers in text_table(text, str, str, str, str):
        given = [] if words == "-" else words.split()
        for w in given:
            if w not in marks:
                raise ValueError(f"grid row {name}: mark {w!r}; allowed: {', '.join(marks)}, or - for none")
        rows.append(GridConfig(name, prefix + flags, covers, **fixed, **{w: True for w in given}))
    return rows


GRID = _table("""
# --- V2 (FA2 Algorithm 1): block skip on by default
v2-none                      | trace torch | --algo v2 --nq 1000 --nk 1000 --d 64 --br 64 --bc 64 --warps 4 | dense, ragged last tile
v2-causal                    | trace torch | --algo v2 --nq 1000 --nk 1000 --d 64 --br 64 --bc 64 --warps 4 --mask causal | top-left causal, skipped tiles
v2-causalbr-short-q          | torch       | --algo v2 --nq 700 --nk 1000 --d 64 --br 64 --bc 64 --warps 4 --mask causal-br | bottom-right causal, N_q < N_k
v2-causalbr-nokey            | trace torch | --algo v2 --nq 1000 --nk 700 --d 64 --br 64 --bc 64 --warps 4 --mask causal-br --stats-blocks 0 | N_q > N_k: rows and a Q block with no key (O = 0, L = +inf)
v2-window-left               | -           | --algo v2 --nq 1000 --nk 1000 --d 64 --br 64 --bc 64 --warps 4 --mask window:128,0 | sliding window (left only)
v2-window-both               | torch       | --algo v2 --nq 513 --nk 1031 --d 64 --br 64 --bc 64 --warps 4 --mask window:50,70 | window on both sides, ragged both axes
v2-bf16-none                 | -           | --algo v2 --nq 777 --nk 1500 --d 64 --br 64 --bc 128 --warps 4 --dtype bf16 | bf16, B_c = 128
v2-bf16-causal               | torch       | --algo v2 --nq 1024 --nk 1024 --d 64 --br 64 --bc 128 --warps 4 --dtype bf16 --mask causal | bf16 causal, exact tiles
v2-d32-causalbr              | trace       | --algo v2 --nq 257 --nk 511 --d 32 --br 64 --bc 128 --warps 4 --mask causal-br | d = 32
v2-diagonal                  | -           | --algo v2 --nq 300 --nk 300 --d 32 --br 128 --bc 64 --warps 8 --mask window:0,0 | the diagonal alone (window 0,0), 8 warps
v2-n1                        | trace       | --algo v2 --nq 1 --nk 1 --d 32 --br 128 --bc 128 --warps 8 --dtype bf16 | N_q = N_k = 1
v2-d128-causalbr             | trace       | --algo v2 --nq 300 --nk 200 --d 128 --br 128 --bc 128 --warps 8 --mask causal-br --stats-blocks 0 | d = 128, 128 x 128 tile, rows with no key
v2-d128-causal-bf16          | -           | --algo v2 --nq 1000 --nk 1000 --d 128 --br 128 --bc 64 --warps 8 --mask causal --dtype bf16 | d = 128 bf16 causal
v2-d128-window-heads         | -           | --algo v2 --nq 2048 --nk 2048 --d 128 --br 64 --bc 64 --warps 4 --mask window:256,256 --batch 2 --heads 2 | batch * heads = 4, wide window
v2-short-q                   | -           | --algo v2 --nq 33 --nk 4000 --d 128 --br 64 --bc 128 --warps 4 | a short Q (one ragged Q block)
v2-short-k                   | -           | --algo v2 --nq 4000 --nk 33 --d 64 --br 128 --bc 128 --warps 8 | a short K (one ragged K/V block)
v2-dense-causal              | -           | --algo v2 --nq 500 --nk 500 --d 64 --br 64 --bc 64 --warps 4 --mask causal --block-skip off | block skip off: masked tiles visited
v2-dense-window-bf16         | -           | --algo v2 --nq 300 --nk 400 --d 64 --br 128 --bc 64 --warps 8 --mask window:10,10 --block-skip off --dtype bf16 | block skip off, window, bf16
v2-nq1                       | -           | --algo v2 --nq 1 --nk 100 --d 32 --br 64 --bc 64 --warps 4 --mask causal-br | one query row (sees every key under bottom-right causal)
v2-nk1                       | trace torch | --algo v2 --nq 100 --nk 1 --d 64 --br 64 --bc 64 --warps 4 --mask causal-br --stats-blocks 0 | one key: 99 rows with no key
v2-bf16-window-heads         | -           | --algo v2 --nq 1200 --nk 900 --d 32 --br 64 --bc 128 --warps 4 --mask window:100,0 --dtype bf16 --batch 3 --heads 2 | bf16 window, batch * heads = 6
v2-causalbr-heads            | -           | --algo v2 --nq 900 --nk 1300 --d 64 --br 64 --bc 128 --warps 4 --mask causal-br --batch 2 --heads 4 | batch * heads = 8 (statistics rows off sector boundaries)
v2-d128-nokey-bf16           | -           | --algo v2 --nq 1000 --nk 700 --d 128 --br 64 --bc 64 --warps 4 --mask causal-br --dtype bf16 | d = 128 bf16, rows with no key
v2-d128-128x64               | -           | --algo v2 --nq 2000 --nk 2000 --d 128 --br 128 --bc 64 --warps 8 | d = 128, 128 x 64 x 8
v2-d32-128x128               | -           | --algo v2 --nq 1500 --nk 1500 --d 32 --br 128 --bc 128 --warps 8 --mask causal | d = 32, 128 x 128 x 8 causal
v2-d64-128x64x4-causal       | torch       | --algo v2 --nq 1000 --nk 1000 --d 64 --br 128 --bc 64 --warps 4 --mask causal | 128 x 64 x 4: 32 rows per warp (FA2's warp count)
v2-d128-128x64x4-bf16        | -           | --algo v2 --nq 1000 --nk 1000 --d 128 --br 128 --bc 64 --warps 4 --mask causal --dtype bf16 | 128 x 64 x 4 at d = 128 (FA2's d = 128 tile)
v2-d32-128x64x4-bf16         | -           | --algo v2 --nq 700 --nk 900 --d 32 --br 128 --bc 64 --warps 4 --mask causal-br --dtype bf16 --stats-blocks 0 | 128 x 64 x 4 at d = 32, bf16
v2-d64-128x64-bf16           | -           | --algo v2 --nq 640 --nk 640 --d 64 --br 128 --bc 64 --warps 8 --dtype bf16 --mask window:200,0 | 128 x 64 x 8 bf16 window
v2-d64-128x128x4-causalbr    | torch       | --algo v2 --nq 1000 --nk 1300 --d 64 --br 128 --bc 128 --warps 4 --mask causal-br --batch 2 --heads 3 | 128 x 128 x 4 (FA2's d = 64 tile), ragged both axes
v2-d32-128x128x4-window-bf16 | -           | --algo v2 --nq 700 --nk 900 --d 32 --br 128 --bc 128 --warps 4 --mask window:100,30 --dtype bf16 | 128 x 128 x 4 at d = 32, bf16 window
# --- V1 (FA1 Algorithm 1, literal): block skip off by default
v1-none                      | trace torch | --algo v1 --nq 1000 --nk 1000 --d 64 --br 64 --bc 64 --warps 4 | dense, O/l/m through HBM every step
v1-causal                    | torch       | --algo v1 --nq 1000 --nk 1000 --d 64 --br 64 --bc 64 --warps 4 --mask causal | causal, dense loop (the paper's kernel)
v1-causalbr-bf16             | -           | --algo v1 --nq 700 --nk 900 --d 64 --br 32 --bc 64 --warps 4 --mask causal-br --dtype bf16 | bf16, B_r = 32
v1-d128-window               | trace torch | --algo v1 --nq 500 --nk 600 --d 128 --br 32 --bc 64 --warps 4 --mask window:64,64 | d = 128, window
v1-d32-nokey                 | trace       | --algo v1 --nq 600 --nk 400 --d 32 --br 64 --bc 64 --warps 4 --mask causal-br --stats-blocks 0 | rows with no key (O = 0 from l = 0)
v1-n1                        | -           | --algo v1 --nq 1 --nk 1 --d 32 --br 32 --bc 64 --warps 4 | N_q = N_k = 1
v1-skip-causal-bf16          | -           | --algo v1 --nq 1000 --nk 1000 --d 128 --br 32 --bc 64 --warps 4 --mask causal --block-skip on --dtype bf16 | block skip on (skipped tiles, unloaded K/V blocks)
v1-skip-window               | trace       | --algo v1 --nq 257 --nk 700 --d 64 --br 64 --bc 64 --warps 4 --mask window:30,10 --block-skip on | block skip on, window, ragged
v1-skip-causalbr             | -           | --algo v1 --nq 800 --nk 300 --d 64 --br 32 --bc 64 --warps 4 --mask causal-br --block-skip on --stats-blocks 0 | block skip on, a Q block that never sees a key
v1-heads-bf16                | -           | --algo v1 --nq 333 --nk 444 --d 32 --br 64 --bc 64 --warps 4 --dtype bf16 --batch 2 --heads 2 | batch * heads = 4 (one thread block each)
v1-long                      | -           | --algo v1 --nq 2048 --nk 2048 --d 64 --br 64 --bc 64 --warps 4 --mask causal-br | 32 x 32 tiles
v1-short-k                   | -           | --algo v1 --nq 1000 --nk 17 --d 128 --br 32 --bc 64 --warps 4 | one ragged K/V block of 17 keys
v1-d32-window-diag           | -           | --algo v1 --nq 300 --nk 300 --d 32 --br 32 --bc 64 --warps 4 --mask window:0,0 | the diagonal alone
v1-d64-causal-heads          | -           | --algo v1 --nq 500 --nk 500 --d 64 --br 32 --bc 64 --warps 4 --mask causal --batch 3 --heads 1 | batch = 3
# --- standard attention (FA1 Algorithm 0): S and P in HBM
std-none                     | trace torch | --algo standard --nq 1000 --nk 1000 --d 64 --br 64 --bc 64 --warps 4 | dense
std-causal                   | torch       | --algo standard --nq 1000 --nk 1000 --d 64 --br 64 --bc 64 --warps 4 --mask causal | causal applied element-wise
std-causalbr-bf16            | -           | --algo standard --nq 700 --nk 1000 --d 128 --br 128 --bc 64 --warps 8 --mask causal-br --dtype bf16 | bf16, d = 128, 128 x 64 x 8
std-nokey                    | trace       | --algo standard --nq 1000 --nk 700 --d 32 --br 128 --bc 64 --warps 8 --mask causal-br --stats-blocks 0 | rows with no key (P = 0)
std-window-ragged            | torch       | --algo standard --nq 500 --nk 517 --d 64 --br 64 --bc 64 --warps 4 --mask window:64,32 | N_k not a multiple of 16 (padded S, P rows)
std-n1                       | -           | --algo standard --nq 1 --nk 1 --d 64 --br 128 --bc 64 --warps 8 --dtype bf16 | N_q = N_k = 1
std-heads                    | trace       | --algo standard --nq 300 --nk 250 --d 128 --br 64 --bc 64 --warps 4 --batch 2 --heads 2 | batch * heads = 4
std-window-bf16              | -           | --algo standard --nq 128 --nk 100 --d 128 --br 128 --bc 64 --warps 8 --mask window:10,5 --dtype bf16 | window, bf16
std-long                     | -           | --algo standard --nq 2048 --nk 2048 --d 32 --br 64 --bc 64 --warps 4 --mask causal | N = 2048, d = 32
std-short-q                  | -           | --algo standard --nq 17 --nk 3000 --d 64 --br 64 --bc 64 --warps 4 | a short Q
std-d128-diag                | -           | --algo standard --nq 256 --nk 256 --d 128 --br 64 --bc 64 --warps 4 --mask window:0,0 | the diagonal alone
std-bf16-causal              | -           | --algo standard --nq 640 --nk 640 --d 64 --br 128 --bc 64 --warps 8 --mask causal --dtype bf16 | bf16 causal
""", ("trace", "torch"))

# Run under compute-sanitizer (memcheck: every config of this list; racecheck: the first five).
SANITIZER = ["v2-n1", "v2-nq1", "v2-nk1", "v2-d32-causalbr", "v1-n1", "v1-short-k", "v1-skip-window",
             "std-n1", "std-window-ragged", "v2-dense-window-bf16", "v1-d32-nokey"]

# Performance (fp16, batch 4, 16 heads, N = 4096): every V2 shape compiled at d (kernels/src/tiles.hpp) is
# timed, the fastest reported (ablation.py's FA2 comparison times the same list).
PERF_CASES = [(64, "none"), (64, "causal"), (128, "none"), (128, "causal")]
PERF_COMMON = "--batch 4 --heads 16 --seq 4096 --dtype fp16 --no-events --check-heads 1 --time"
PERF_V2_REPS = "--warmup 5 --reps 20"
PERF_OTHER_REPS = "--warmup 2 --reps 5"  # V1 and standard are 10-50x slower
PERF_V2_SHAPES = {64: ["64x64x4", "64x128x4", "128x64x8", "128x128x8", "128x64x4", "128x128x4"],
                  128: ["64x64x4", "64x128x4", "128x64x8", "128x128x8", "128x64x4"]}
PERF_V1_SHAPE = {64: "64x64x4", 128: "32x64x4"}
PERF_STANDARD_SHAPE = "128x64x8"


def shape_flags(shape):
    br, bc, w = shape.split("x")
    return f"--br {br} --bc {bc} --warps {w}"


def by_name():
    names = [g.name for g in GRID]
    assert len(names) == len(set(names)), "grid names must be unique"
    return {g.name: g for g in GRID}


# The backward (scripts/gpu/backward_validate.py): V2 as FA2 releases it (three launches, dQ added
# into an fp32 accumulator with atomics) and V1 (FA1 Alg. 4, dQ_i through HBM at every step). Each
# row runs the forward first, then the backward; every mask, ragged tiles on both axes, rows with no
# key, d = 32/64/128, fp16/bf16, both compiled tiles, batch * heads > 1, block skip on and off.
BACKWARD_GRID = _table("""
bwd-v2-none                 | trace torch ncu sanitize | --algo v2 --nq 1000 --nk 1000 --d 64 --br 64 --bc 64 --warps 4 | dense, ragged last tile
bwd-v2-causal               | trace torch ncu          | --algo v2 --nq 1024 --nk 1024 --d 64 --br 128 --bc 128 --warps 8 --mask causal | causal, FA2's d = 64 tile, Q blocks walked down from the diagonal
bwd-v2-causalbr-nokey       | trace torch              | --algo v2 --nq 700 --nk 500 --d 64 --br 64 --bc 64 --warps 4 --mask causal-br | N_q > N_k: rows with no key (dQ = 0)
bwd-v2-causalbr-short-q     | torch                    | --algo v2 --nq 300 --nk 1000 --d 64 --br 64 --bc 64 --warps 4 --mask causal-br --dtype bf16 | N_q < N_k, bf16: K/V blocks no query sees (dK = dV = 0)
bwd-v2-window               | torch ncu                | --algo v2 --nq 513 --nk 1031 --d 64 --br 64 --bc 64 --warps 4 --mask window:50,70 | window on both sides, ragged both axes
bwd-v2-d32                  | trace                    | --algo v2 --nq 257 --nk 511 --d 32 --br 128 --bc 128 --warps 8 --mask causal-br --dtype bf16 | d = 32, 128 x 128 x 8, bf16
bwd-v2-d128                 | torch ncu                | --algo v2 --nq 1000 --nk 1000 --d 128 --br 64 --bc 64 --warps 4 --mask causal | d = 128 causal
bwd-v2-d128-bf16-heads      | -                        | --algo v2 --nq 600 --nk 400 --d 128 --br 64 --bc 64 --warps 4 --dtype bf16 --batch 2 --heads 3 | d = 128 bf16, batch * heads = 6
bwd-v2-d128-fa2             | trace torch ncu          | --algo v2 --nq 1000 --nk 1000 --d 128 --br 64 --bc 128 --warps 8 --mask causal | FA2's d = 128 tile (64 x 128 x 8: dQ on a 2 x 4 warp grid), causal, ragged
bwd-v2-d128-fa2-window-bf16 | torch ncu                | --algo v2 --nq 513 --nk 1031 --d 128 --br 64 --bc 128 --warps 8 --mask window:50,70 --dtype bf16 --batch 2 --heads 3 | FA2's d = 128 tile, bf16, window on both sides, ragged both axes, batch * heads = 6
bwd-v2-heads                | ncu                      | --algo v2 --nq 900 --nk 1300 --d 64 --br 128 --bc 128 --warps 8 --mask causal-br --batch 2 --heads 4 | batch * heads = 8
bwd-v2-n1                   | -                        | --algo v2 --nq 1 --nk 1 --d 32 --br 64 --bc 64 --warps 4 | N_q = N_k = 1
bwd-v2-nk1                  | -                        | --algo v2 --nq 100 --nk 1 --d 64 --br 64 --bc 64 --warps 4 --mask causal-br | one key: 99 rows with no key
bwd-v2-dense                | -                        | --algo v2 --nq 500 --nk 500 --d 64 --br 64 --bc 64 --warps 4 --mask causal --block-skip off | block skip off: masked tiles visited
bwd-v1-none                 | trace torch ncu sanitize | --algo v1 --nq 1000 --nk 1000 --d 64 --br 64 --bc 64 --warps 4 | V1: dQ_i through HBM at every step, one thread block per head
bwd-v1-causal-bf16          | torch                    | --algo v1 --nq 700 --nk 900 --d 64 --br 64 --bc 64 --warps 4 --mask causal --dtype bf16 | V1 causal bf16, dense loop
bwd-v1-skip-window          | trace                    | --algo v1 --nq 257 --nk 700 --d 32 --br 64 --bc 64 --warps 4 --mask window:30,10 --block-skip on | V1 block skip on, window, ragged
bwd-v1-nokey-heads          | ncu                      | --algo v1 --nq 600 --nk 400 --d 64 --br 64 --bc 64 --warps 4 --mask causal-br --batch 2 --heads 2 | V1 rows with no key, batch * heads = 4
""", ("trace", "torch", "ncu", "sanitize"), prefix="--pass backward ")


# Split-KV (scripts/gpu/split_validate.py): V2's K/V loop cut into splits (fl_v2_forward_split, each
# split's partial O and L in fp32) and merged by fl_v2_combine, with grouped-query attention's K/V
# heads (query head h reads K/V head h / (heads / H_k)) with and without splits. Splits 2, 3, 4, 7,
# 32 and auto; splits with no visible tile and past the last K/V block; every mask; ragged N; rows
# no split sees (O = 0, L = +inf); block skip off; d = 64 and 128, every split tile; fp16 and bf16;
# a decode step (N_q = 1, 32 query heads over 8 K/V heads, the split count FA2's heuristic picks).
SPLIT_GRID = _table("""
split-none-s2         | trace sanitize | --algo v2 --splits 2 --nq 1000 --nk 1000 --d 64 --br 64 --bc 64 --warps 4 | 2 splits, dense, ragged last tiles
split-causal-s3       | -              | --algo v2 --splits 3 --nq 777 --nk 777 --d 64 --br 64 --bc 128 --warps 4 --mask causal | top-left causal: later splits of early Q blocks see no key
split-causalbr-s3     | trace          | --algo v2 --splits 3 --nq 300 --nk 700 --d 64 --br 64 --bc 128 --warps 4 --mask causal-br --stats-blocks 1 | bottom-right causal, N_q < N_k, a split with a skipped tile
split-nokey-s4        | trace sanitize | --algo v2 --splits 4 --nq 1000 --nk 700 --d 64 --br 64 --bc 128 --warps 4 --mask causal-br --stats-blocks 0 | N_q > N_k: rows no split sees (L = +inf); split 3 past the last K/V block
split-window-s7-bf16  | -              | --algo v2 --splits 7 --nq 1000 --nk 1000 --d 64 --br 64 --bc 64 --warps 4 --mask window:128,0 --dtype bf16 | 7 splits of 16 K/V blocks (the last one empty), sliding window, bf16
split-d128-dense-bf16 | -              | --algo v2 --splits 2 --nq 513 --nk 1031 --d 128 --br 64 --bc 128 --warps 4 --mask window:50,70 --dtype bf16 --block-skip off | d = 128, window both sides, block skip off (masked tiles visited)
split-d128-auto       | -              | --algo v2 --splits auto --nq 300 --nk 4096 --d 128 --heads 4 | auto: FA2's heuristic and split tile (64 x 128 at d = 128)
split-d64-auto-bf16   | -              | --algo v2 --splits auto --nq 128 --nk 8192 --d 64 --dtype bf16 --batch 2 --heads 2 | auto: 32 splits of one K/V block each, FA2's 64 x 256 tile
gqa-v2-kv2            | -              | --algo v2 --nq 500 --nk 700 --d 64 --br 64 --bc 64 --warps 4 --heads 8 --kv-heads 2 --mask causal-br | GQA without splits: 8 query heads over 2 K/V heads
gqa-split-kv1         | -              | --algo v2 --splits 3 --nq 200 --nk 2000 --d 128 --br 64 --bc 64 --warps 4 --heads 8 --kv-heads 1 --batch 2 | MQA (one K/V head) with 3 splits, batch 2
gqa-split-kv2-bf16    | -              | --algo v2 --splits 4 --nq 64 --nk 3000 --d 64 --br 64 --bc 256 --warps 4 --heads 8 --kv-heads 2 --dtype bf16 --mask causal-br | GQA with 4 splits, 64 x 256 tile, bf16
decode-gqa-auto       | trace          | --algo v2 --splits auto --nq 1 --nk 4096 --d 128 --heads 32 --kv-heads 8 --mask causal-br | decode step: N_q = 1, 32 query heads over 8 K/V heads, FA2's split count
gqa-v1-kv2            | -              | --algo v1 --nq 300 --nk 400 --d 64 --br 64 --bc 64 --warps 4 --heads 4 --kv-heads 2 | GQA on V1
gqa-std-kv1           | -              | --algo standard --nq 200 --nk 300 --d 64 --br 64 --bc 64 --warps 4 --heads 4 --kv-heads 1 --mask causal | MQA on standard attention
""", ("trace", "sanitize"), ncu=True)


# The variants between V1 and V2 (scripts/gpu/split_validate.py --grid variant): every combination
# of the forward's five switches (docs/model.md "Variants") on one ragged, masked configuration, the
# sixteen with block skip on again on a second one (bf16, d = 32, batch x heads = 4, a window that
# leaves Q blocks with no visible tile), and d = 128 for the kernels compiled there (split-K warps
# on 32 x 64 x 4; split-Q warps with the Q outer order on 64 x 64 x 4). V1's row-update family
# (v1.cu) runs every combination but split-Q with the Q outer order, which is V2's kernel (v2.cu:
# fl_v2_forward, or fl_v2_variant for --grid head and --rescale step).
SWITCHES = {"order": ("kv-outer", "q-outer"), "grid": ("head", "qblock"), "rescale": ("step", "delayed"),
            "split": ("split-k", "split-q"), "block-skip": ("off", "on")}


def switch_flags(order, grid, rescale, split, skip):
    return f"--order {order} --grid {grid} --rescale {rescale} --split {split} --block-skip {skip}"


def _short(order, grid, rescale, split, skip):
    return f"{order[:2]}-{grid[:2]}-{rescale[:2]}-{split[-1]}-{skip}"


def _variants(base, tag, skips, splits=("split-k", "split-q"), orders=("kv-outer", "q-outer"), trace=False, sanitize=()):
    rows = []
    for order in orders:
        for grid_kind in SWITCHES["grid"]:
            for rescale in SWITCHES["rescale"]:
                for split in splits:
                    for skip in skips:
                        name = f"var-{tag}-{_short(order, grid_kind, rescale, split, skip)}"
                        flags = f"--algo v1 {switch_flags(order, grid_kind, rescale, split, skip)} {base(split)}"
                        rows.append(GridConfig(name, flags, f"{tag}: {order}, {grid_kind}, {rescale}, {split}, block skip {skip}",
                                               trace and split == "split-q" and skip == "on", False, True,
                                               name in sanitize))
    return rows


_A = "--nq 300 --nk 429 --d 64 --br 64 --bc 64 --warps 4 --mask causal-br --stats-blocks 2"
_B = "--nq 500 --nk 300 --d 32 --br 64 --bc 64 --warps 4 --mask window:40,20 --dtype bf16 --batch 2 --heads 2 --stats-blocks 0"
VARIANT_GRID = (
    _variants(lambda split: _A, "a", ("off", "on"), trace=True,
              sanitize=("var-a-kv-he-de-k-on", "var-a-q--he-st-q-on", "var-a-kv-qb-de-q-on", "var-a-q--qb-st-k-off"))
    + _variants(lambda split: _B, "b", ("on",), sanitize=("var-b-kv-he-de-q-on", "var-b-q--he-de-k-on"))
    + _variants(lambda split: "--nq 257 --nk 520 --d 128 --mask causal --warps 4 --bc 64 "
                + ("--br 32" if split == "split-k" else "--br 64"), "c", ("on",), splits=("split-k",))
    + _variants(lambda split: "--nq 257 --nk 520 --d 128 --br 64 --bc 64 --warps 4 --mask causal", "c", ("on",),
                splits=("split-q",), orders=("q-outer",))
)
