"""Schedules written in Python: flashlab.schedule() hands out the one a config runs, and count(),
run() and trace() walk one given back. Built-in schedules round-trip to the same figures; V2 written
from scratch here (FA2 Alg. 1, line by line) gives V2's bytes, events and output; bad schedules are
refused by place."""
import json

import numpy as np
import pytest

import flashlab
from test_run import random_inputs


def load(t, region, if_visited=False):
    return {"op": "load", "tensor": t, "region": region, "if_visited": if_visited}


def store(t, region, if_visited=False):
    return {"op": "store", "tensor": t, "region": region, "if_visited": if_visited}


def compute(eq, if_visited=False):
    return {"op": "compute", "eq": eq, "if_visited": if_visited}


# FA2 Algorithm 1, written here from the paper: one thread block per (batch, head, Q block), the
# K/V blocks walked inside; Q_i loaded once (line 4), O_i, l_i, m_i on chip (line 5), K_j, V_j per
# step (line 7), lines 8-10, then O_i / l_i and L_i written once (lines 12-15).
V2_BY_HAND = {"launches": [{
    "name": "v2_by_hand",
    "loops": [{"dim": "batch", "grid": True}, {"dim": "head", "grid": True},
              {"dim": "q_block", "grid": True}, {"dim": "kv_block", "grid": False}],
    "prologue": [],
    "outer_begin": [load("Q", "q_block", True), compute("init_stats", True)],
    "body": [load("K", "kv_block"), load("V", "kv_block"), compute("scores"), compute("softmax_v2"),
             compute("output_v2")],
    "outer_end": [compute("finalize_v2", True), store("O", "q_block"), store("L", "q_block")],
    "placement": {"Q": "sram", "K": "sram", "V": "sram", "S": "registers", "P": "registers",
                  "O": "registers", "l": "registers", "m": "registers", "L": "registers"},
}]}


@pytest.mark.parametrize("kw", [dict(algo="standard"), dict(algo="v1"), dict(algo="v2"), dict(algo="v2", splits=3),
                                dict(algo="v1", pass_="backward"), dict(algo="v2", pass_="both"),
                                dict(algo="v1", order="q-outer", grid="qblock")])
def test_builtin_schedules_round_trip(kw):
    cfg = flashlab.Config(nq=200, nk=150, d=16, br=64, bc=32, mask="causal-br", **kw)
    s = flashlab.schedule(cfg)
    assert json.loads(json.dumps(s)) == s  # plain JSON
    assert flashlab.count(cfg, schedule=s) == flashlab.count(cfg)
    assert np.array_equal(flashlab.trace(cfg, schedule=s), flashlab.trace(cfg))


def test_v2_written_by_hand_is_v2():
    cfg = flashlab.Config(nq=200, nk=150, d=16, br=64, bc=32, mask="causal", dtype="fp32")
    mine, v2 = flashlab.count(cfg, schedule=V2_BY_HAND), flashlab.count(cfg)
    assert mine["hbm"] == v2["hbm"] and mine["flops"] == v2["flops"] and mine["ops"] == v2["ops"]
    assert [l["name"] for l in mine["launches"]] == ["v2_by_hand"]
    q, k, v = random_inputs(200, 150, 16, "fp32")
    O_mine, L_mine = flashlab.run(cfg, q, k, v, schedule=V2_BY_HAND)
    O, L = flashlab.run(cfg, q, k, v)
    assert np.array_equal(O_mine, O) and np.array_equal(L_mine, L)
    # V1's order of the same lines (K/V blocks outside, O_i, l_i, m_i through HBM) reads more
    v1 = flashlab.count(cfg, schedule=flashlab.schedule(cfg, algo="v1"))
    assert v1["hbm"]["total_bytes"] > v2["hbm"]["total_bytes"]


def test_a_schedule_that_forgets_a_store_leaves_nan():
    cfg = flashlab.Config(nq=128, nk=128, d=16, br=64, bc=64, dtype="fp32")
    s = json.loads(json.dumps(V2_BY_HAND))
    s["launches"][0]["outer_end"] = [compute("finalize_v2", True), store("L", "q_block")]
    O, L = flashlab.run(cfg, *random_inputs(128, 128, 16, "fp32"), schedule=s)
    assert np.isnan(O).all() and np.isfinite(L).all()
    assert flashlab.count(cfg, schedule=s)["hbm"]["write_bytes"]["O"] == 0


def test_bad_schedules_are_refused_by_place():
    cfg = flashlab.Config(nq=128, nk=128, d=16, br=64, bc=64, dtype="fp32")
    s = json.loads(json.dumps(V2_BY_HAND))
    s["launches"][0]["body"][0]["tensor"] = "Kv"
    with pytest.raises(ValueError) as e:
        flashlab.count(cfg, schedule=s)
    assert e.value.field == "schedule.launches[0].body[0].tensor" and "one of Q K V" in e.value.allowed
    s = json.loads(json.dumps(V2_BY_HAND))
    del s["launches"][0]["placement"]["V"]
    with pytest.raises(ValueError, match="tensor V is moved but has no placement"):
        flashlab.trace(cfg, schedule=s)
    s = json.loads(json.dumps(V2_BY_HAND))
    s["launches"][0]["body"] = [compute("scores")] + s["launches"][0]["body"]
    with pytest.raises(ValueError, match="scores needs Q_i and K_j"):
        flashlab.run(cfg, *random_inputs(128, 128, 16, "fp32"), schedule=s)
    with pytest.raises(TypeError):
        flashlab.count(cfg, schedule={"launches": [object()]})


def test_schedule_refuses_v3_whose_dict_would_lose_its_warp_roles():
    # the JSON form has no warp roles, stage ring or deferred actions: handing V3's back would walk V2's
    with pytest.raises(ValueError, match=r"^algo = v3: standard, v1 or v2: schedule\(\)'s dict does not hold"):
        flashlab.schedule(algo="v3", seq=1024, d=128)
