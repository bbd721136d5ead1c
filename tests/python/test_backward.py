"""The backward pass from Python: Config(pass_=...), run(..., do=dO) -> (O, L, grads), and count()'s
backward tensors. Gradients are held to a float64 chain rule written here from its definition
(FA1 Appendix B.2; docs/model.md "Numerics of the backward"), bytes to docs/model.md's backward tables."""
import numpy as np
import pytest

import flashlab
from conftest import cli_error, cli_json
from test_run import band, random_inputs


def chain_rule(q, k, v, do, scale, mask):
    """float64: P = softmax(scale Q K^T + mask), dV = P^T dO, dP = dO V^T, D = rowsum(P o dP),
    dS = P o (dP - D), dQ = scale dS K, dK = scale dS^T Q. A row with no visible key has P = 0."""
    q, k, v, do = (x.astype(np.float64) for x in (q, k, v, do))
    n_q, n_k = q.shape[0], k.shape[0]
    lo, hi = band(mask, n_q, n_k)
    diff = np.arange(n_k)[None, :] - np.arange(n_q)[:, None]
    visible = (diff >= lo) & (diff <= hi)
    s = np.where(visible, scale * q @ k.T, -np.inf)
    m = s.max(axis=1, keepdims=True)
    m[~visible.any(axis=1)] = 0
    p = np.exp(s - m)
    sums = p.sum(axis=1, keepdims=True)
    p = p / np.where(sums > 0, sums, 1.0)
    dv = p.T @ do
    dp = do @ v.T
    big_d = (p * dp).sum(axis=1)
    ds = p * (dp - big_d[:, None])
    return dict(dQ=scale * ds @ k, dK=scale * ds.T @ q, dV=dv, D=big_d, O=p @ v)


def rel_fro(x, ref):
    norm = np.linalg.norm(ref)
    return np.linalg.norm(x.astype(np.float64) - ref) / (norm if norm else 1.0)


def test_pass_keyword_is_pass_underscore():
    cfg = flashlab.Config(seq=256, d=32, br=64, bc=64, pass_="backward")
    assert cfg.to_dict() == cli_json("count --json --seq 256 --d 32 --br 64 --bc 64 --pass backward")["config"]
    assert cfg.to_dict()["pass"] == "backward" and cfg.to_dict()["backward_form"] == "released"
    assert flashlab.Config(pass_="both", backward_form="paper").to_dict()["backward_form"] == "paper"
    assert flashlab.Config().to_dict()["pass"] == "forward"
    assert repr(cfg) == "flashlab.Config(seq=256, d=32, br=64, bc=64, pass_='backward')"
    assert eval(repr(cfg), {"flashlab": flashlab}) == cfg
    assert cfg.replace(pass_="forward").to_dict()["pass"] == "forward"
    # `pass` itself (only through **, being a Python keyword) names the same flag: the same config
    for p in ("forward", "backward", "both"):
        assert flashlab.Config(**{"pass": p}) == flashlab.Config(pass_=p)
        assert flashlab.Config(**{"pass": p}).to_dict() == flashlab.Config(pass_=p).to_dict()
    # the keywords the error lists name pass_, the Python spelling
    with pytest.raises(TypeError, match="pass_, backward_form"):
        flashlab.Config(passes="backward")


@pytest.mark.parametrize("kwargs, flags", [
    (dict(pass_="sideways"), "--pass sideways"),
    (dict(backward_form="x"), "--backward-form x"),
    (dict(**{"pass": "sideways"}), "--pass sideways"),
])
def test_bad_pass_values_raise_the_commands_error(kwargs, flags):
    with pytest.raises(ValueError) as info:
        flashlab.Config(**kwargs)
    assert str(info.value) == cli_error("count " + flags)


@pytest.mark.parametrize("algo, form", [("standard", "released"), ("v1", "released"), ("v2", "released"),
                                        ("v2", "paper"), ("v2", "deterministic")])
@pytest.mark.parametrize("mask", ["none", "causal", "causal-br", "window:40,8"])
def test_grads_match_a_float64_chain_rule_fp32(algo, form, mask):
    # N_q = 200 > N_k = 150: causal-br leaves rows 0..49 without a key (P = 0: dQ = 0, nothing to dK, dV)
    cfg = flashlab.Config(algo=algo, nq=200, nk=150, d=32, br=64, bc=32, dtype="fp32", mask=mask,
                          pass_="backward", backward_form=form)
    q, k, v = random_inputs(200, 150, 32, "fp32", seed=4)
    do = np.random.default_rng(5).standard_normal((200, 32)).astype(np.float32)
    O, L, grads = flashlab.run(cfg, q, k, v, do=do)
    assert sorted(grads) == ["D", "dK", "dQ", "dV"]
    for name, rows in (("dQ", 200), ("dK", 150), ("dV", 150)):
        assert grads[name].dtype == np.float32 and grads[name].shape == (rows, 32)
    assert grads["D"].dtype == np.float32 and grads["D"].shape == (200,)
    ref = chain_rule(q, k, v, do, cfg.scale, mask)
    for name in ("dQ", "dK", "dV"):
        assert rel_fro(grads[name], ref[name]) <= 1e-4, name
    assert np.max(np.abs(grads["D"] - ref["D"])) <= 1e-4 * max(1.0, np.max(np.abs(ref["D"])))
    assert rel_fro(O, ref["O"]) <= 1e-5
    if mask == "causal-br":
        assert np.all(grads["dQ"][:50] == 0) and np.all(grads["D"][:50] == 0)


def test_both_passes_return_the_same_grads_as_the_backward_alone():
    q, k, v = random_inputs(96, 64, 16, "fp16", seed=2)
    do = np.random.default_rng(3).standard_normal((96, 16)).astype(np.float16)
    cfg = flashlab.Config(nq=96, nk=64, d=16, br=32, bc=32, mask="causal-br")
    _, _, back = flashlab.run(cfg, q, k, v, do=do, pass_="backward")
    O, L, both = flashlab.run(cfg, q, k, v, do=do, pass_="both")
    O_fwd, L_fwd = flashlab.run(cfg, q, k, v)
    assert np.array_equal(O, O_fwd) and np.array_equal(L, L_fwd)
    for name in ("dQ", "dK", "dV", "D"):
        assert back[name].dtype == both[name].dtype and np.array_equal(back[name], both[name]), name
    assert back["dQ"].dtype == np.float16
    # with steps=I, the steps come before the grads
    out = flashlab.run(cfg, q, k, v, do=do, pass_="backward", steps=0)
    assert len(out) == 4 and isinstance(out[2], dict) and "m" in out[2] and sorted(out[3]) == ["D", "dK", "dQ", "dV"]


def test_do_is_required_by_a_backward_config_and_refused_by_a_forward_one():
    q = np.zeros((8, 4), np.float32)
    back = flashlab.Config(seq=8, d=4, br=4, bc=4, dtype="fp32", pass_="backward")
    with pytest.raises(ValueError) as info:
        flashlab.run(back, q, q, q)
    assert isinstance(info.value, flashlab.ConfigError) and info.value.field == "do"
    assert str(info.value).startswith("do = None: ") and "backward" in info.value.allowed
    with pytest.raises(ValueError) as info:
        flashlab.run(back.replace(pass_="both"), q, q, q)
    assert info.value.field == "do"
    for fwd in (back.replace(pass_="forward"), back.replace(pass_=None)):  # explicit, and the default
        with pytest.raises(ValueError) as info:
            flashlab.run(fwd, q, q, q, do=q)
        assert info.value.field == "do" and "forward" in info.value.allowed
    # dO is checked as q is: its dtype and (N_q, d) shape
    with pytest.raises(ValueError, match=r"^do = an array of '<f4' and shape \(8, 3\)"):
        flashlab.run(back, q, q, q, do=np.zeros((8, 3), np.float32))
    with pytest.raises(ValueError, match=r"^do = an array of '<f8'"):
        flashlab.run(back, q, q, q, do=np.zeros((8, 4)))


def test_n2_closed_form_dv_is_half():
    # Q = 0: P = 1/2 everywhere, dV = P^T dO = [[0.5], [0.5]] for dO = [[1], [0]] (tests/cli/backward_test.cpp)
    q = np.zeros((2, 1), np.float32)
    kv = np.array([[0.0], [1.0]], np.float32)
    do = np.array([[1.0], [0.0]], np.float32)
    for algo in ("standard", "v1", "v2"):
        _, _, g = flashlab.run(None, q, kv, kv, do=do, algo=algo, seq=2, d=1, br=2, bc=2, dtype="fp32",
                               pass_="backward")
        assert g["dV"].tolist() == [[0.5], [0.5]]
        assert g["dQ"].tolist() == [[0.25], [0.0]] and g["dK"].tolist() == [[0.0], [0.0]]
        assert g["D"].tolist() == [0.5, 0.0]


@pytest.mark.parametrize("kwargs, visited", [
    (dict(), 8 * 8),                                            # N = 1024, d = 64: FA2's 128 x 128 tile, T = 8
    (dict(mask="causal"), 8 * 9 // 2),                          # Q block i sees K/V blocks 0..i
    (dict(seq=512, d=64, br=64, bc=64, mask="causal"), 8 * 9 // 2),
])
def test_v2_released_atomics_are_rows_d_4_per_visited_tile(kwargs, visited):
    cfg = flashlab.Config(pass_="backward", **kwargs)
    c = flashlab.count(cfg)
    assert c["tiles"]["visited"] == visited
    # FA2's flash_bwd_dq_dk_dv: every visited tile (i, j) adds dS_ij K_j, rows(i) x d fp32, to dQacc_i
    assert c["hbm"]["total_atomic_bytes"] == visited * cfg.b_r * cfg.d * 4
    assert c["hbm"]["atomic_bytes"]["dQacc"] == c["hbm"]["total_atomic_bytes"]
    # and reads the accumulator back once (flash_bwd_convert_dq), after clearing it once (flash_bwd_dot_do_o)
    assert c["hbm"]["read_bytes"]["dQacc"] == c["hbm"]["write_bytes"]["dQacc"] == cfg.n_q * cfg.d * 4
    # the paper's form and V1 have none: dQ_i goes through HBM at every tile instead
    assert flashlab.count(cfg, backward_form="paper")["hbm"]["total_atomic_bytes"] == 0
    assert flashlab.count(cfg, algo="v1")["hbm"]["total_atomic_bytes"] == 0
    assert flashlab.count(cfg) == cli_json("count --json --pass backward " + " ".join(
        "--%s %s" % (key.replace("_", "-"), value) for key, value in kwargs.items()))


def test_deterministic_form_counts_nsplits_slices_of_dqacc():
    """FA2's deterministic=True: nsplits = ceil(132 SMs / (2 x 12)) = 6 slices of dQacc per (batch,
    head), each N d fp32 elements, zeroed once and read once (docs/model.md, deterministic form)."""
    kw = dict(pass_="backward", batch=2, heads=12, nq=1024, nk=1024, d=64, br=64, bc=64, dtype="fp32")
    det = flashlab.count(flashlab.Config(backward_form="deterministic", **kw))
    rel = flashlab.count(flashlab.Config(**kw))
    assert det["hbm"]["read_bytes"]["dQacc"] == 24 * 6 * 1024 * 64 * 4
    assert det["hbm"]["write_bytes"]["dQacc"] == 24 * 6 * 1024 * 64 * 4
    assert rel["hbm"]["read_bytes"]["dQacc"] == 24 * 1024 * 64 * 4
    assert det["hbm"]["atomic_bytes"] == rel["hbm"]["atomic_bytes"]
    assert det == cli_json("count --json --pass backward --batch 2 --heads 12 --nq 1024 --nk 1024 --d 64 "
                           "--br 64 --bc 64 --dtype fp32 --backward-form deterministic")
