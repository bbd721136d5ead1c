"""flashlab.run(): O and L of the caller's NumPy arrays, held to a float64 NumPy softmax written
here from the definition (docs/model.md "Tiles and masks", "Numerics: errors and tolerances"), to
closed forms, and bit for bit to what `flashlab run --q q.npy --k k.npy --v v.npy --out DIR` writes."""
import math
import os

import numpy as np
import pytest

import flashlab
from conftest import cli

U = {"fp16": 2.0 ** -11, "bf16": 2.0 ** -8, "fp32": 2.0 ** -24}  # unit roundoff
TOL_O = {"fp16": 2e-3, "bf16": 1.6e-2, "fp32": 1e-5}             # 4 u; fp32: its accumulation
NUMPY_TYPE = {"fp16": np.float16, "bf16": np.uint16, "fp32": np.float32}


def to_bf16_bits(x):
    """float32 -> bf16 bits (uint16), round to nearest even."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def values(x, dtype):
    """An input array's values as float64 (bf16: its bits are the top half of a float32)."""
    if dtype == "bf16":
        return (x.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return x.astype(np.float64)


def random_inputs(n_q, n_k, d, dtype, seed=1):
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal((n, d)).astype(np.float32) for n in (n_q, n_k, n_k))
    if dtype == "bf16":
        return to_bf16_bits(q), to_bf16_bits(k), to_bf16_bits(v)
    return q.astype(NUMPY_TYPE[dtype]), k.astype(NUMPY_TYPE[dtype]), v.astype(NUMPY_TYPE[dtype])


def band(mask, n_q, n_k):
    """visible(r, c) <=> lo <= c - r <= hi (docs/model.md "Tiles and masks")."""
    off = n_k - n_q
    if mask == "none":
        return -math.inf, math.inf
    if mask == "causal":
        return -math.inf, 0
    if mask == "causal-br":
        return -math.inf, off
    left, right = (int(x) for x in mask.split(":")[1].split(","))
    return off - left, off + right


def reference(q, k, v, scale, mask):
    """O = softmax(scale Q K^T + mask) V and L = logsumexp per row, float64; a row with no
    visible key: O = 0, L = +inf. Also B_r = |scale| ||q_r|| max_j ||k_j|| per row."""
    n_q, n_k = q.shape[0], k.shape[0]
    lo, hi = band(mask, n_q, n_k)
    diff = np.arange(n_k)[None, :] - np.arange(n_q)[:, None]
    visible = (diff >= lo) & (diff <= hi)
    s = np.where(visible, scale * q @ k.T, -np.inf)
    m = s.max(axis=1, keepdims=True)
    empty = ~visible.any(axis=1)
    m[empty] = 0
    p = np.exp(s - m)
    l = p.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        o = np.where(empty[:, None], 0.0, (p @ v) / l)
        big_l = np.where(empty, np.inf, (m + np.log(l))[:, 0])
    bound = abs(scale) * np.linalg.norm(q, axis=1) * np.linalg.norm(k, axis=1).max()
    return o, big_l, bound


def check_against_reference(cfg, q, k, v):
    O, L = flashlab.run(cfg, q, k, v)
    assert O.dtype == q.dtype and O.shape == (cfg.n_q, cfg.d)
    assert L.dtype == np.float32 and L.shape == (cfg.n_q,)
    o_ref, l_ref, bound = reference(values(q, cfg.dtype), values(k, cfg.dtype), values(v, cfg.dtype), cfg.scale, cfg.mask)
    o = values(O, cfg.dtype)
    tol_o = TOL_O[cfg.dtype]
    if cfg.algo == "v1":  # V1 rounds O_i at each of its T_c steps per Q block: u sqrt(n) more
        tol_o += U[cfg.dtype] * math.sqrt(cfg.t_c)
    norm = np.linalg.norm(o_ref)
    assert np.linalg.norm(o - o_ref) / (norm if norm else 1.0) <= tol_o
    empty = np.isinf(l_ref)
    assert np.array_equal(np.isinf(L), empty) and np.all(o[empty] == 0)
    tol_l = 1e-4 + 2.0 ** -22 * np.abs(l_ref) + ((cfg.d + 2) * 2.0 ** -24 + (U[cfg.dtype] if cfg.algo == "standard" else 0)) * bound
    assert np.all(np.abs(L[~empty] - l_ref[~empty]) <= tol_l[~empty])
    return O, L


@pytest.mark.parametrize("algo", ["standard", "v1", "v2"])
@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("mask", ["none", "causal", "causal-br", "window:40,8"])
def test_o_and_l_against_a_float64_softmax(algo, dtype, mask):
    cfg = flashlab.Config(algo=algo, nq=200, nk=150, d=32, br=64, bc=32, dtype=dtype, mask=mask)
    check_against_reference(cfg, *random_inputs(200, 150, 32, dtype))


def test_closed_form_zero_logits_give_the_mean_of_v():
    # tests/cli/npy_test.cpp: Q = K = 0, V[j] = (j, j): every logit 0, O[r] = mean(0..7) = 3.5, L = ln 8
    z = np.zeros((8, 2), np.float32)
    v = np.repeat(np.arange(8, dtype=np.float32)[:, None], 2, axis=1)
    O, L = flashlab.run(flashlab.Config(seq=8, d=2, br=4, bc=4, dtype="fp32"), z, z, v)
    assert np.all(O == 3.5)
    assert np.allclose(L, math.log(8), rtol=1e-6)
    O16, _ = flashlab.run(None, z.astype(np.float16), z.astype(np.float16), v.astype(np.float16), seq=8, d=2, br=4, bc=4)
    assert O16.dtype == np.float16 and np.all(O16.view(np.uint16) == 0x4300)  # 3.5 in fp16


def test_rows_without_a_visible_key():
    # causal-br with N_q = 12 > N_k = 8: row r sees keys c <= r - 4, rows 0..3 none: O = 0, L = +inf
    q, k, v = random_inputs(12, 8, 2, "fp32")
    O, L = flashlab.run(flashlab.Config(nq=12, nk=8, d=2, br=4, bc=4, mask="causal-br", dtype="fp32"), q, k, v)
    assert np.all(O[:4] == 0) and np.all(np.isposinf(L[:4])) and np.all(np.isfinite(L[4:]))


@pytest.mark.parametrize("flags", [
    "--algo v2 --nq 300 --nk 500 --d 64 --br 64 --bc 64 --mask causal-br --dtype fp16",
    "--algo v1 --seq 256 --d 32 --br 32 --bc 64 --dtype fp16 --mask causal",
    "--algo standard --seq 128 --d 16 --dtype fp32",
    "--algo v2 --nq 12 --nk 8 --d 2 --br 4 --bc 4 --mask causal-br --dtype fp32",
    "--algo v2 --nq 100 --nk 90 --d 64 --br 32 --bc 32 --dtype bf16 --mask window:10,3",
])
def test_run_equals_the_commands_npy_outputs(tmp_path, flags):
    args = flags.split()
    kwargs = {name[2:].replace("-", "_"): value for name, value in zip(args[::2], args[1::2])}
    cfg = flashlab.Config(**kwargs)
    q, k, v = random_inputs(cfg.n_q, cfg.n_k, cfg.d, cfg.dtype, seed=7)
    for name, x in (("q", q), ("k", k), ("v", v)):
        np.save(os.path.join(tmp_path, name + ".npy"), x)
    files = " ".join("--%s %s" % (n, os.path.join(tmp_path, n + ".npy")) for n in "qkv")
    cli("run %s %s --out %s" % (flags, files, os.path.join(tmp_path, "out")))
    O, L = flashlab.run(cfg, q, k, v)
    O_cli, L_cli = (np.load(os.path.join(tmp_path, "out", n + ".npy")) for n in ("O", "L"))
    assert O.dtype == O_cli.dtype and O.shape == O_cli.shape and O.tobytes() == O_cli.tobytes()
    assert L.dtype == L_cli.dtype and L.tobytes() == L_cli.tobytes()


def test_any_memory_order():
    q, k, v = random_inputs(64, 96, 16, "fp16")
    cfg = flashlab.Config(nq=64, nk=96, d=16, br=32, bc=32)
    O, L = flashlab.run(cfg, q, k, v)
    qf, kf = np.asfortranarray(q), np.asfortranarray(k)
    wide = np.zeros((96, 32), np.float16)
    wide[:, ::2] = v  # a strided view
    O2, L2 = flashlab.run(cfg, qf, kf, wide[:, ::2])
    assert np.array_equal(O, O2) and np.array_equal(L, L2)


def test_wrong_inputs_raise_value_errors_naming_them():
    cfg = flashlab.Config(nq=8, nk=6, d=2, br=4, bc=4)  # fp16
    q, k, v = (np.zeros((n, 2), np.float16) for n in (8, 6, 6))
    cases = [
        ((q.astype(np.float64), k, v),
         "q = an array of '<f8' and shape (8, 2): a numpy.ndarray of float16 ('<f2') and shape (8, 2) = (N_q, d), for dtype fp16"),
        ((q, np.zeros((8, 2), np.float16), v),
         "k = an array of '<f2' and shape (8, 2): a numpy.ndarray of float16 ('<f2') and shape (6, 2) = (N_k, d), for dtype fp16"),
        ((q, k, np.zeros((6, 2, 1), np.float16)),
         "v = an array of '<f2' and shape (6, 2, 1): a numpy.ndarray of float16 ('<f2') and shape (6, 2) = (N_k, d), for dtype fp16"),
        ((q.tolist(), k, v),
         "q = a list: a numpy.ndarray of float16 ('<f2') and shape (8, 2) = (N_q, d), for dtype fp16"),
        ((q, k, np.array([[0, 0], [0, np.nan]] + [[0, 0]] * 4, np.float16)),
         "v = element (1, 1) = nan: finite values only"),
        ((q, k, np.zeros((6, 2), np.float16).byteswap().newbyteorder()),
         "v = an array of '>f2' and shape (6, 2): a numpy.ndarray of float16 ('<f2') and shape (6, 2) = (N_k, d), for dtype fp16"),
    ]
    for args, message in cases:
        with pytest.raises(ValueError) as info:
            flashlab.run(cfg, *args)
        assert str(info.value) == message
    with pytest.raises(ValueError) as info:  # bf16 is its bits, as uint16
        flashlab.run(cfg.replace(dtype="bf16"), q, k, v)
    assert info.value.field == "q" and "uint16 (bf16 bits) ('<u2')" in info.value.allowed


def test_numerics_size_limit():
    # numerics/limits.hpp: N_q N_k <= 2^28 (the float64 reference's scores)
    z = np.zeros((1, 64), np.float16)
    with pytest.raises(ValueError) as info:
        flashlab.run(flashlab.Config(seq=20000), z, z, z)
    assert info.value.field == "nq*nk"


@pytest.mark.parametrize("algo, block", [("v2", 2), ("v1", 1), ("standard", 0), ("v2", 0)])
def test_steps_equal_run_steps_json(tmp_path, algo, block):
    # `flashlab run --steps I --json` on the same .npy inputs: m and l of Q block I after each step
    flags = "--algo %s --nq 200 --nk 150 --d 32 --br 64 --bc 32 --mask causal-br --dtype fp16" % algo
    cfg = flashlab.Config(algo=algo, nq=200, nk=150, d=32, br=64, bc=32, mask="causal-br")
    q, k, v = random_inputs(200, 150, 32, "fp16", seed=3)
    for name, x in (("q", q), ("k", k), ("v", v)):
        np.save(os.path.join(tmp_path, name + ".npy"), x)
    files = " ".join("--%s %s" % (n, os.path.join(tmp_path, n + ".npy")) for n in "qkv")
    import json
    out, _ = cli("run %s %s --steps %d --json" % (flags, files, block))
    want = json.loads(out)["steps"][algo]
    O, L, steps = flashlab.run(cfg, q, k, v, steps=block)
    assert np.array_equal(O, flashlab.run(cfg, q, k, v)[0])
    rows = min(64, 200 - 64 * block)
    assert steps["m"].shape == steps["l"].shape == (len(want), rows) and steps["m"].dtype == np.float32
    assert steps["step"].tolist() == [s["step"] for s in want]
    assert steps["j"].tolist() == [s["j"] for s in want]
    assert steps["skip"].tolist() == [s["skip"] for s in want]
    for got_m, got_l, s in zip(steps["m"], steps["l"], want):  # JSON writes -inf as null
        assert got_m.tolist() == [-math.inf if x is None else x for x in s["m"]]
        assert got_l.tolist() == s["l"]


def test_steps_end_at_the_row_max_and_sum():
    # V2 (FA2 Alg. 1 lines 9-13): after the block's last tile, m is the row max of the scaled
    # scores and L = m + ln l; against the float64 reference, within fp32's error
    cfg = flashlab.Config(nq=128, nk=256, d=16, br=64, bc=64, dtype="fp32")
    q, k, v = random_inputs(128, 256, 16, "fp32", seed=5)
    _, L, steps = flashlab.run(cfg, q, k, v, steps=1)
    assert steps["j"].tolist() == [-1, 0, 1, 2, 3, -1]  # Q_i step, one per K/V block, the last
    s = cfg.scale * q[64:].astype(np.float64) @ k.astype(np.float64).T
    assert np.allclose(steps["m"][-1], s.max(axis=1), rtol=1e-5, atol=1e-5)
    assert np.allclose(steps["m"][-1] + np.log(steps["l"][-1]), L[64:], rtol=1e-6, atol=1e-6)
    assert np.all(np.isneginf(steps["m"][0])) and np.all(steps["l"][0] == 0)  # before any key


def test_bad_steps_raise_the_commands_error():
    cfg = flashlab.Config(seq=256, br=64, bc=64)
    z = np.zeros((256, 64), np.float16)
    with pytest.raises(ValueError) as info:
        flashlab.run(cfg, z, z, z, steps=4)
    assert str(info.value) == "steps = 4: a Q block index from 0 to 3 (T_r - 1)"
    with pytest.raises(ValueError, match=r"^steps = 'last': "):
        flashlab.run(cfg, z, z, z, steps="last")
    # past int64: out of range like any other index, not a failed conversion
    with pytest.raises(ValueError) as info:
        flashlab.run(cfg, z, z, z, steps=2**70)
    assert str(info.value) == f"steps = {2**70}: a Q block index from 0 to 3 (T_r - 1)"


def test_batched_inputs_run_every_head_on_its_kv_head():
    # (batch, heads, N, d) with grouped heads: head h reads K/V head h // 2; each (b, h) equals
    # the 2-D run on its own slices, and the float64 reference
    cfg = flashlab.Config(nq=96, nk=80, d=16, br=32, bc=32, dtype="fp16", mask="causal-br", batch=2, heads=4,
                          kv_heads=2)
    rng = np.random.default_rng(7)
    q = rng.standard_normal((2, 4, 96, 16)).astype(np.float16)
    k = rng.standard_normal((2, 2, 80, 16)).astype(np.float16)
    v = rng.standard_normal((2, 2, 80, 16)).astype(np.float16)
    O, L = flashlab.run(cfg, q, k, v)
    assert O.shape == (2, 4, 96, 16) and O.dtype == np.float16 and L.shape == (2, 4, 96)
    for b in range(2):
        for h in range(4):
            o, l = flashlab.run(cfg, q[b, h], k[b, h // 2], v[b, h // 2])
            assert np.array_equal(O[b, h], o) and np.array_equal(L[b, h], l)
            check_against_reference(cfg, q[b, h], k[b, h // 2], v[b, h // 2])
    with pytest.raises(ValueError) as e:
        flashlab.run(cfg, q, k[:, :1], v)
    assert e.value.field == "k" and "(2, 2, 80, 16)" in e.value.allowed
    with pytest.raises(ValueError, match="steps"):
        flashlab.run(cfg, q, k, v, steps=0)
