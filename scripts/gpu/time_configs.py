"""The time model's data set: which runs scripts/gpu/time_dataset.py measures (issue 23).

Every row is one flashlab-gpu configuration (flags) or one call of PyTorch's FlashAttention-2. The
list is fixed (no randomness): the CI test and the fitting script find each row by its flags, and
`split_of(flags)` puts it in the training or the test set by a hash of those flags, so that no
fitting script can choose which rows it sees.

Coverage (docs/validation/time_model_h200.md prints the counts): V2 on every compiled tile
(kernels/src/tiles.hpp, both warp counts), V1, standard attention, the 32 combinations of the five
switches, the backward (released, deterministic, V1), split-KV with its combine, GQA, d 32/64/128,
N from 128 to 65536 with ragged lengths, batch x heads 1 to 512, fp16 and bf16, every mask kind;
and PyTorch's FA2 forward, backward and split-KV kernels.
"""

import hashlib

# Compiled tiles per algorithm and d (kernels/src/tiles.hpp: listed tiles filtered by `fits`).
V2_TILES = {32: ["64x64x4", "64x128x4", "128x64x8", "128x128x8", "128x64x4", "128x128x4"],
            64: ["64x64x4", "64x128x4", "128x64x8", "128x128x8", "128x64x4", "128x128x4"],
            128: ["64x64x4", "64x128x4", "128x64x8", "128x128x8", "128x64x4"]}
V1_TILES = {32: ["32x64x4", "64x64x4"], 64: ["32x64x4", "64x64x4"], 128: ["32x64x4"]}
STANDARD_TILES = ["64x64x4", "128x64x8"]
BACKWARD_TILES = {"v2": {32: ["64x64x4", "128x128x8"], 64: ["64x64x4", "128x128x8"], 128: ["64x64x4", "64x128x8"]},
                  "v1": {32: ["64x64x4"], 64: ["64x64x4"]}}
SPLIT_TILES = {64: ["64x64x4", "64x128x4", "64x256x4"], 128: ["64x64x4", "64x128x4"]}
MASKS = ["none", "causal", "causal-br", "window:256,0", "window:128,128"]
SWITCHES = {"order": ("kv-outer", "q-outer"), "grid": ("head", "qblock"), "rescale": ("step", "delayed"),
            "split": ("split-k", "split-q"), "block-skip": ("off", "on")}


def tile_flags(shape):
    br, bc, w = shape.split("x")
    return f"--br {br} --bc {bc} --warps {w}"


def problem_flags(nq, nk, d, batch, heads, mask="none", dtype="fp16", kv_heads=None):
    kv = f" --kv-heads {kv_heads}" if kv_heads else ""
    return f"--nq {nq} --nk {nk} --d {d} --batch {batch} --heads {heads}{kv} --mask {mask} --dtype {dtype}"


def matmul_flops(nq, nk, d, bh, causal):
    return 4.0 * nq * nk * d * bh * (0.5 if causal else 1.0)


def _v2_forward():
    rows = []
    # (N, batch, heads) per d: short to long sequences, a grid below one wave to many waves.
    sizes = [(128, 4, 16), (384, 2, 8), (1000, 8, 16), (1024, 1, 1), (2048, 2, 16), (2048, 16, 32),
             (3000, 1, 12), (4096, 1, 16), (4096, 4, 16), (8192, 1, 8), (8192, 2, 32), (16384, 1, 16),
             (32768, 1, 4), (65536, 1, 2), (512, 64, 8), (1536, 32, 16)]
    k = 0
    for d, tiles in V2_TILES.items():
        for t, shape in enumerate(tiles):
            for s, (n, b, h) in enumerate(sizes):
                if (s + t + d // 32) % 3:  # a third of the (tile, size) pairs, staggered per tile and d
                    continue
                mask = MASKS[k % len(MASKS)]
                dtype = "bf16" if k % 4 == 3 else "fp16"
                k += 1
                rows.append(f"--algo v2 {tile_flags(shape)} {problem_flags(n, n, d, b, h, mask, dtype)}")
    # the default tiles (FA2's) on more shapes: the configurations users run most
    default = {32: "128x128x4", 64: "128x128x4", 128: "128x64x4"}
    extra = [(4096, 4, 16, "none"), (8192, 2, 32, "causal"), (16384, 1, 32, "causal"), (32768, 1, 8, "causal"),
             (2048, 8, 32, "none"), (1024, 16, 16, "causal"), (777, 3, 5, "causal-br"), (5000, 2, 7, "none")]
    for d in (64, 128):
        for n, b, h, mask in extra:
            dtype = "bf16" if (n // 1000) % 2 else "fp16"
            rows.append(f"--algo v2 {tile_flags(default[d])} {problem_flags(n, n, d, b, h, mask, dtype)}")
    # N_q != N_k (a prefill chunk over a cache; bottom-right causal)
    for d in (64, 128):
        rows.append(f"--algo v2 {tile_flags(default[d])} {problem_flags(512, 8192, d, 2, 16, 'causal-br')}")
        rows.append(f"--algo v2 {tile_flags('64x64x4')} {problem_flags(4096, 1024, d, 1, 32, 'causal-br', 'bf16')}")
    return rows


def _v1_forward():
    rows = []
    sizes = [(256, 1, 16), (1000, 1, 8), (1024, 4, 16), (2048, 1, 16), (2048, 8, 32), (4096, 1, 4),
             (4096, 2, 32), (3333, 1, 16), (8192, 1, 2), (512, 32, 16), (1536, 1, 132), (4096, 1, 64)]
    k = 0
    for d, tiles in V1_TILES.items():
        for shape in tiles:
            for s, (n, b, h) in enumerate(sizes):
                if (s + len(shape) + d // 32) % 2:
                    continue
                mask = ["none", "causal", "causal-br", "window:128,0"][k % 4]
                dtype = "bf16" if k % 3 == 2 else "fp16"
                k += 1
                rows.append(f"--algo v1 {tile_flags(shape)} {problem_flags(n, n, d, b, h, mask, dtype)}")
    return rows


def _standard():
    rows = []
    sizes = [(256, 1, 16), (1024, 1, 16), (1024, 16, 16), (2000, 2, 8), (4096, 1, 16), (4096, 2, 32),
             (8192, 1, 8), (16384, 1, 4), (3000, 4, 4), (512, 32, 32)]
    k = 0
    for d in (32, 64, 128):
        for t, shape in enumerate(STANDARD_TILES):
            for s, (n, b, h) in enumerate(sizes):
                if (s + t + d // 32) % 3:
                    continue
                mask = ["none", "causal", "window:256,0"][k % 3]
                dtype = "bf16" if k % 4 == 1 else "fp16"
                k += 1
                rows.append(f"--algo standard {tile_flags(shape)} {problem_flags(n, n, d, b, h, mask, dtype)}")
    return rows


def _variants():
    """The 32 combinations of the switches on one shape at d = 64, and the ones compiled at d = 128
    (split-K warps: all; split-Q warps: the Q outer order) on a second shape."""
    rows = []
    for order in SWITCHES["order"]:
        for grid in SWITCHES["grid"]:
            for rescale in SWITCHES["rescale"]:
                for split in SWITCHES["split"]:
                    for skip in SWITCHES["block-skip"]:
                        sw = f"--order {order} --grid {grid} --rescale {rescale} --split {split} --block-skip {skip}"
                        t64 = "64x64x4"
                        rows.append(f"--algo v1 {sw} {tile_flags(t64)} {problem_flags(2048, 2048, 64, 1, 16, 'causal')}")
                        if split == "split-q" and order == "kv-outer":
                            continue
                        if skip == "off" and grid == "head":
                            continue  # keep the d = 128 half of the grid short: head-grid runs are slow
                        t128 = "32x64x4" if split == "split-k" else "64x64x4"
                        rows.append(f"--algo v1 {sw} {tile_flags(t128)} {problem_flags(1024, 1024, 128, 4, 32, 'none', 'bf16')}")
    return rows


def _backward():
    rows = []
    sizes = [(1024, 4, 16, "none"), (2048, 2, 16, "causal"), (4096, 1, 16, "none"), (4096, 4, 16, "causal"),
             (1000, 8, 8, "causal-br"), (8192, 1, 16, "causal"), (3000, 2, 8, "window:256,0")]
    k = 0
    for algo, per_d in BACKWARD_TILES.items():
        for d, tiles in per_d.items():
            for shape in tiles:
                for s, (n, b, h, mask) in enumerate(sizes):
                    if (s + d // 32 + len(shape)) % 3 and not (algo == "v2" and d != 32 and s < 2):
                        continue
                    if algo == "v1" and n > 4096:
                        continue
                    dtype = "bf16" if k % 3 == 1 else "fp16"
                    k += 1
                    rows.append(f"--pass backward --algo {algo} {tile_flags(shape)} {problem_flags(n, n, d, b, h, mask, dtype)}")
    # FA2's deterministic=True form on the released form's tiles
    for d, shape, n, b, h, mask in [(64, "128x128x8", 4096, 1, 16, "none"), (64, "64x64x4", 2048, 4, 16, "causal"),
                                    (128, "64x64x4", 4096, 2, 16, "causal"), (128, "64x64x4", 1000, 4, 8, "none"),
                                    (32, "128x128x8", 8192, 1, 8, "causal")]:
        rows.append(f"--pass backward --backward-form deterministic --algo v2 {tile_flags(shape)} "
                    f"{problem_flags(n, n, d, b, h, mask)}")
    return rows


def _split_and_gqa():
    rows = []
    cases = [(64, 1000, 1000, 1, 8, None, "none", 2), (64, 1000, 1000, 1, 8, None, "causal", 3),
             (128, 1024, 1024, 1, 4, None, "none", 4), (64, 512, 512, 1, 8, 2, "none", 2),
             (64, 16, 4096, 1, 8, None, "causal-br", 8), (128, 1, 8192, 1, 32, 8, "causal-br", 16),
             (128, 1, 8192, 1, 32, None, "causal-br", 8), (64, 1, 16384, 1, 8, 1, "none", 32),
             (128, 256, 16384, 2, 8, 2, "causal-br", 4), (64, 300, 4096, 1, 4, None, "window:512,0", 5),
             (128, 64, 32768, 4, 8, None, "none", 7), (64, 2048, 2048, 1, 2, None, "causal", 3)]
    for k, (d, nq, nk, b, h, hk, mask, splits) in enumerate(cases):
        for shape in SPLIT_TILES[d]:
            if (k + len(shape)) % 2 and shape != SPLIT_TILES[d][-1]:
                continue
            dtype = "bf16" if k % 3 == 2 else "fp16"
            rows.append(f"--algo v2 --splits {splits} {tile_flags(shape)} {problem_flags(nq, nk, d, b, h, mask, dtype, hk)}")
    # FA2's own choice (--kernel fa2): its tile, its split count, a decode step's heads folded into rows
    for d, nq, nk, b, h, hk, mask in [(128, 1, 8192, 1, 32, 8, "causal-br"), (128, 1, 4096, 4, 32, 8, "causal-br"),
                                      (64, 1, 16384, 1, 8, 1, "none"), (128, 1, 32768, 8, 32, 8, "causal-br"),
                                      (64, 1000, 1000, 1, 8, None, "causal-br"), (128, 4096, 4096, 2, 32, 8, "causal-br"),
                                      (64, 4096, 4096, 4, 16, None, "none")]:
        rows.append(f"--kernel fa2 --algo v2 {problem_flags(nq, nk, d, b, h, mask, 'fp16', hk)}")
    # GQA without splits on V2's default tiles
    for d, n, b, h, hk, mask in [(128, 4096, 2, 32, 8, "causal-br"), (64, 2048, 4, 16, 4, "none"),
                                 (128, 8192, 1, 32, 8, "causal"), (64, 1000, 8, 8, 1, "causal-br")]:
        shape = "128x128x4" if d <= 64 else "128x64x4"
        rows.append(f"--algo v2 {tile_flags(shape)} {problem_flags(n, n, d, b, h, mask, 'bf16', hk)}")
    return rows


def ours():
    """Every flashlab-gpu configuration of the data set, in order, without duplicates."""
    rows = _v2_forward() + _v1_forward() + _standard() + _variants() + _backward() + _split_and_gqa()
    seen, out = set(), []
    for r in rows:
        if r not in seen:
            seen.add(r)
            out.append(r)
    return out


# PyTorch's FA2 (the flash backend): (pass, batch, heads, kv_heads, n_q, n_k, d, causal, dtype).
# causal is FA2's bottom-right mask (the same as top-left when N_q = N_k).
def torch_rows():
    rows = []
    for d in (64, 128):
        for b, h, n, causal in [(4, 16, 4096, False), (4, 16, 4096, True), (1, 16, 16384, True), (2, 32, 8192, True),
                                (8, 32, 2048, False), (1, 8, 1000, False), (16, 16, 1024, True), (1, 4, 32768, False),
                                (2, 8, 3000, True)]:
            rows.append(("forward", b, h, h, n, n, d, causal, "bf16" if n == 2048 else "fp16"))
    for b, h, hk, nq, nk, d, causal in [(1, 16, 16, 4096, 4096, 32, False), (2, 32, 8, 2048, 2048, 128, True),
                                        (1, 8, 2, 512, 512, 64, False), (1, 32, 8, 1, 8192, 128, True),
                                        (4, 32, 8, 1, 4096, 128, True), (1, 8, 1, 1, 16384, 64, False),
                                        (8, 32, 8, 1, 32768, 128, True), (1, 8, 8, 16, 4096, 64, True),
                                        (1, 3, 3, 200, 3000, 64, False), (1, 4, 4, 1024, 1024, 128, False)]:
        rows.append(("forward", b, h, hk, nq, nk, d, causal, "fp16"))
    for d in (64, 128):
        for b, h, n, causal in [(4, 16, 4096, False), (2, 32, 8192, True), (1, 16, 16384, True), (8, 16, 1024, False),
                                (2, 8, 2048, True), (1, 32, 4096, False)]:
            rows.append(("backward", b, h, h, n, n, d, causal, "bf16" if n == 1024 else "fp16"))
    return rows


# Issue 23's "new shapes, never measured by the project, predicted within the same bounds": a second,
# separate set (scripts/gpu/time_dataset.py --set new -> tests/data/gpu_time/h200_new_shapes.json),
# chosen after the model's constants were fitted and never read by a fitting script. Sequence lengths,
# batch and head counts the main set does not use (N 640 to 24,576, heads 10 to 40), on the kernels
# users run most (V2's default tile per d: 128 x 128 x 4 at d <= 64, 128 x 64 x 4 at d = 128), and a
# few rows of every other kind.
def new_shapes():
    """flashlab-gpu configurations of the new-shapes set, in order."""
    rows = []
    v2_default = {32: "128x128x4", 64: "128x128x4", 128: "128x64x4"}
    for d, n, b, h, mask, dtype in [(64, 2560, 6, 20, "none", "bf16"), (64, 6144, 2, 24, "causal", "fp16"),
                                    (64, 12288, 1, 40, "causal-br", "fp16"), (64, 640, 48, 12, "none", "fp16"),
                                    (64, 4500, 3, 16, "causal", "bf16"), (64, 20480, 1, 12, "window:256,0", "fp16"),
                                    (128, 2560, 4, 24, "causal", "fp16"), (128, 5120, 2, 28, "none", "bf16"),
                                    (128, 10240, 1, 32, "causal-br", "fp16"), (128, 1280, 12, 40, "none", "fp16"),
                                    (128, 7000, 1, 20, "causal", "fp16"), (128, 24576, 1, 10, "causal", "bf16"),
                                    (32, 3500, 4, 10, "none", "fp16"), (32, 12288, 1, 24, "causal", "bf16")]:
        rows.append(f"--algo v2 {tile_flags(v2_default[d])} {problem_flags(n, n, d, b, h, mask, dtype)}")
    for algo, shape, d, n, b, h, mask, dtype in [
            ("v2", "64x64x4", 128, 6144, 2, 12, "causal", "fp16"), ("v2", "128x128x8", 64, 5120, 4, 12, "none", "fp16"),
            ("v2", "64x128x4", 64, 2560, 8, 10, "causal-br", "bf16"), ("v1", "64x64x4", 64, 2560, 2, 20, "none", "fp16"),
            ("v1", "32x64x4", 128, 1280, 4, 24, "causal", "fp16"), ("v1", "32x64x4", 32, 6144, 1, 10, "none", "bf16"),
            ("standard", "64x64x4", 64, 2560, 2, 12, "causal", "fp16"),
            ("standard", "128x64x8", 128, 1280, 4, 10, "none", "fp16")]:
        rows.append(f"--algo {algo} {tile_flags(shape)} {problem_flags(n, n, d, b, h, mask, dtype)}")
    rows.append(f"--algo v1 --order q-outer --grid qblock --rescale delayed --split split-q --block-skip on "
                f"{tile_flags('64x64x4')} {problem_flags(2560, 2560, 64, 4, 12, 'causal')}")
    rows.append(f"--algo v1 --order kv-outer --grid qblock --rescale step --split split-k --block-skip off "
                f"{tile_flags('32x64x4')} {problem_flags(1280, 1280, 128, 2, 20, 'none', 'bf16')}")
    for form, algo, shape, d, n, b, h, mask, dtype in [
            ("", "v2", "128x128x8", 64, 2560, 4, 12, "causal", "fp16"), ("", "v2", "64x128x8", 128, 5120, 1, 20, "none", "bf16"),
            ("--backward-form deterministic ", "v2", "128x128x8", 64, 6144, 1, 8, "none", "fp16"),
            ("", "v1", "64x64x4", 64, 1280, 2, 12, "none", "fp16")]:
        rows.append(f"--pass backward {form}--algo {algo} {tile_flags(shape)} {problem_flags(n, n, d, b, h, mask, dtype)}")
    rows.append(f"--algo v2 --splits 6 {tile_flags('64x128x4')} {problem_flags(128, 20480, 128, 2, 16, 'causal-br', 'fp16', 4)}")
    for d, nq, nk, b, h, hk, mask in [(128, 1, 12288, 6, 40, 8, "causal-br"), (128, 1, 6144, 16, 32, 8, "causal-br"),
                                      (64, 2560, 2560, 6, 20, None, "none")]:
        rows.append(f"--kernel fa2 --algo v2 {problem_flags(nq, nk, d, b, h, mask, 'fp16', hk)}")
    return rows


def torch_new_shapes():
    """PyTorch's FA2 calls of the new-shapes set (torch_rows' tuples)."""
    return [("forward", 6, 20, 20, 2560, 2560, 64, False, "bf16"), ("forward", 2, 24, 24, 6144, 6144, 128, True, "fp16"),
            ("forward", 1, 40, 40, 12288, 12288, 64, True, "fp16"), ("forward", 12, 40, 40, 1280, 1280, 128, False, "fp16"),
            ("forward", 6, 40, 8, 1, 12288, 128, True, "fp16"), ("forward", 16, 32, 8, 1, 6144, 128, True, "fp16"),
            ("backward", 4, 12, 12, 2560, 2560, 64, True, "fp16"), ("backward", 1, 20, 20, 5120, 5120, 128, False, "bf16")]


# Issue 23's "flashlab compare ... every time within 10% of the H200 on the committed data for that
# config": the configurations `flashlab compare` prints for its model presets (its default,
# --model llama3-8b, and --model gpt2-small, --model mistral-7b), each algorithm on the tile of its
# reference kernel (sim/src/config/reference_tile.cpp: standard 128 x 64 x 8, V1 32 x 64 x 4 at
# d = 128 and 64 x 64 x 4 at d = 64, V2 FA2's tile), as `flashlab compare --json` gives them
# (tests/sim/time/compare_times_test.cpp checks that the rows are those configurations):
# scripts/gpu/time_dataset.py --set compare -> tests/data/gpu_time/h200_compare.json.
def compare_shapes():
    """flashlab-gpu configurations of compare's model presets, in order."""
    rows = []
    for n, d, heads, kv, mask, tiles in [
            (8192, 128, 32, 8, "causal-br", {"standard": "128x64x8", "v1": "32x64x4", "v2": "128x64x4"}),
            (1024, 64, 12, None, "causal-br", {"standard": "128x64x8", "v1": "64x64x4", "v2": "128x128x4"}),
            (8192, 128, 32, 8, "window:4095,0", {"standard": "128x64x8", "v1": "32x64x4", "v2": "128x64x4"})]:
        for algo, shape in tiles.items():
            rows.append(f"--algo {algo} {tile_flags(shape)} {problem_flags(n, n, d, 1, heads, mask, 'fp16', kv)}")
    return rows


def torch_compare_shapes():
    """PyTorch's FA2 forward at compare's causal presets (torch_rows' tuples; SDPA has no window)."""
    return [("forward", 1, 32, 8, 8192, 8192, 128, True, "fp16"), ("forward", 1, 12, 12, 1024, 1024, 64, True, "fp16")]


def torch_key(row):
    p, b, h, hk, nq, nk, d, causal, dtype = row
    return (f"torch --pass {p} --batch {b} --heads {h} --kv-heads {hk} --nq {nq} --nk {nk} --d {d} "
            f"--mask {'causal-br' if causal else 'none'} --dtype {dtype}")


def split_of(key):
    """'test' for about a third of the rows (by the SHA-256 of the row's flags), else 'train'."""
    return "test" if hashlib.sha256(key.encode()).digest()[0] % 3 == 0 else "train"


def check_flags(flags):
    """The validation run of a timed configuration: the same kernel instance (algorithm, switches,
    tile, d, dtype, mask, splits, kv heads, pass) on a problem small enough for the float64
    reference: N_q and N_k at most 1024 + their remainder modulo 128 (ragged tiles kept), batch 1,
    heads at most 4 (and a divisor of heads kept for kv heads)."""
    w = flags.split()
    pairs = dict(zip(w[0::2], w[1::2]))  # every flag of a row takes one value
    heads = int(pairs["--heads"])
    group = heads // int(pairs.get("--kv-heads", heads))
    new_group = min(group, 4)
    new_kv = max(1, 4 // new_group) if group > 1 else min(heads, 4)
    for f in ("--nq", "--nk"):
        n = int(pairs[f])
        pairs[f] = str(n if n <= 1024 else 1024 + n % 128)
    pairs["--batch"] = "1"
    if "--kv-heads" in pairs:
        pairs["--kv-heads"] = str(new_kv)
        pairs["--heads"] = str(new_kv * new_group)
    else:
        pairs["--heads"] = str(min(heads, 4))
    return " ".join(f"{k} {v}" for k, v in pairs.items())
