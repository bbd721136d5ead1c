"""flashlab.v1_to_v2_walk() and v2_to_v3_walk(): the steps of `flashlab explain` (--algo v3), whose switches, given to count(),
give each step's counts and predicted time — held to `explain --json` for the same config."""
import flashlab
from conftest import cli_json

CONFIGS = ["--nq 1024 --nk 1024 --d 64 --br 64 --bc 64 --heads 16",
           "--nq 2048 --nk 2048 --d 128 --br 64 --bc 64 --heads 4 --mask causal --dtype bf16"]


def kwargs_of(args):
    names = args.replace("--", "").split()
    return {k: v for k, v in zip(names[::2], names[1::2])}  # strings, read as the flags' text


def test_walk_names_the_switches_of_v1_then_v2():
    walk = flashlab.v1_to_v2_walk()
    assert [s["key"] for s in walk] == ["v1", "order", "grid", "rescale", "warp_split", "block_skip"]
    v1 = flashlab.Config(algo="v1")
    v2 = flashlab.Config(algo="v2")
    first, last = walk[0]["switches"], walk[-1]["switches"]
    for name in ("order", "grid", "rescale", "warp_split", "block_skip"):
        assert first[name] == getattr(v1, name), name
        assert last[name] == getattr(v2, name), name
    for before, after in zip(walk, walk[1:]):  # one switch at a time
        changed = [k for k in after["switches"] if after["switches"][k] != before["switches"][k]]
        assert changed == [after["key"]]


def test_each_step_counts_as_explain_reports_it():
    for args in CONFIGS:
        explained = cli_json("explain %s --json" % args)["steps"]
        cfg = flashlab.Config(**kwargs_of(args))
        walk = flashlab.v1_to_v2_walk()
        assert [s["key"] for s in walk] == [s["step"] for s in explained]
        assert [s["what"] for s in walk] == [s["what"] for s in explained]
        for step, want in zip(walk, explained):
            c = flashlab.count(cfg, **step["switches"])
            assert c["predicted"] == want["predicted"], (args, step["key"])
            assert c["hbm"]["total_bytes"] == want["figures"]["hbm_total_bytes"], (args, step["key"])


V3_CONFIGS = ["--seq 4096 --d 128 --heads 4", "--seq 2048 --d 64 --heads 8 --mask causal --dtype bf16",
              "--seq 1024 --d 256 --heads 2"]  # d = 256: FA3 leaves ping-pong off, so it is not a step


def test_v2_to_v3_walk_one_switch_at_a_time_to_fa3():
    walk = flashlab.v2_to_v3_walk(algo="v3", seq=4096, d=128)
    assert [s["key"] for s in walk] == ["v2", "v3_off", "stages", "warp_specialize", "pingpong", "intra_overlap",
                                        "scheduler"]
    assert walk[0]["switches"] == {"algo": "v2"}
    assert walk[1]["switches"] == {"algo": "v3", "stages": 1, "warp_specialize": False, "pingpong": False,
                                   "intra_overlap": False, "scheduler": "grid"}
    # FA3's defaults at d = 128 (hopper/: 2 stages, warp specialization, ping-pong, overlap, persistent)
    assert walk[-1]["switches"] == {"algo": "v3", "stages": 2, "warp_specialize": True, "pingpong": True,
                                    "intra_overlap": True, "scheduler": "persistent"}
    for before, after in zip(walk[1:], walk[2:]):  # one switch at a time
        changed = [k for k in after["switches"] if after["switches"][k] != before["switches"][k]]
        assert changed == [after["key"]]
    try:
        flashlab.v2_to_v3_walk(algo="v2")
        assert False, "a V2 config was walked"
    except flashlab.ConfigError as e:
        assert e.field == "algo" and e.value == "v2"


def test_v2_to_v3_steps_count_as_explain_reports_them():
    for args in V3_CONFIGS:
        explained = cli_json("explain --algo v3 %s --json" % args)["steps"]
        cfg = flashlab.Config(algo="v3", **kwargs_of(args))
        walk = flashlab.v2_to_v3_walk(cfg)
        assert [s["key"] for s in walk] == [s["step"] for s in explained], args
        assert [s["what"] for s in walk] == [s["what"] for s in explained], args
        for step, want in zip(walk, explained):
            c = flashlab.count(cfg, **step["switches"])
            assert c["predicted"] == want["predicted"], (args, step["key"])
            assert c["hbm"]["total_bytes"] == want["figures"]["hbm_total_bytes"], (args, step["key"])
