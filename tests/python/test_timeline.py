"""flashlab.timeline(): one SM's timeline as a dict, the object `flashlab timeline --json FILE` writes
(the library's report/timeline_json.hpp, one copy), and its bad input refused as the command refuses it."""
import json

import pytest

import flashlab
from conftest import cli

CONFIGS = [("--algo v3 --seq 2048 --d 128 --heads 8", dict(algo="v3", seq=2048, d=128, heads=8)),
           ("--algo v3 --seq 1024 --d 64 --heads 4 --mask causal --warp-specialize off",
            dict(algo="v3", seq=1024, d=64, heads=4, mask="causal", warp_specialize=False)),
           ("--algo v2 --seq 1024 --d 64 --heads 4", dict(algo="v2", seq=1024, d=64, heads=4))]


def test_timeline_is_the_commands_json(tmp_path):
    for args, kwargs in CONFIGS:
        path = tmp_path / "t.json"
        cli("timeline %s --json %s" % (args, path))
        assert flashlab.timeline(**kwargs) == json.loads(path.read_text()), args


def test_timeline_units_busy_and_idle_sum_to_one():
    t = flashlab.timeline(algo="v3", seq=2048, d=128, heads=8)
    assert t["v3"] and [l["name"] for l in t["lanes"]][:3] == ["producer", "consumer 0", "consumer 1"]
    for u in t["units"]:
        assert abs(u["busy"] + sum(c["fraction"] for c in u["idle"]) - 1) < 1e-9, u["unit"]


def test_timeline_bad_input():
    with pytest.raises(flashlab.ConfigError) as e:
        flashlab.timeline(algo="v3", sm=132)  # the H200 has SMs 0 .. 131
    assert e.value.field == "sm" and e.value.value == "132"
    with pytest.raises(flashlab.ConfigError) as e:
        flashlab.timeline(algo="v3", max_intervals=-1)
    assert e.value.field == "max_intervals"
