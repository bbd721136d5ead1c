"""Split-KV and --kernel fa2 from Python: Config(splits=..., kernel=...), count()'s launches and
partial-result tensors against the command line's JSON and against closed forms, run() against the
float64 softmax of test_run, and the errors."""
import numpy as np
import pytest

import flashlab
from conftest import cli_error, cli_json
from test_run import check_against_reference, random_inputs


def test_splits_and_kernel_keywords_match_the_command_line():
    cfg = flashlab.Config(seq=1000, heads=8, splits="auto")
    assert cfg.splits == 2 and (cfg.b_r, cfg.b_c) == (64, 256) and cfg.kernel == "flashlab"
    assert cfg.to_dict() == cli_json("count --json --seq 1000 --heads 8 --splits auto")["config"]
    got = flashlab.count(cfg)
    want = cli_json("count --json --seq 1000 --heads 8 --splits auto")
    assert [l["name"] for l in got["launches"]] == ["v2_forward_split", "flash_combine"]
    assert got["launches"] == want["launches"]
    assert got["hbm"] == want["hbm"]


def test_partial_results_closed_form():
    # N = 512, d = 32, B = 64 x 128: T_r = 8, T_c = 4, 2 splits of 2 K/V blocks, fp32
    got = flashlab.count(flashlab.Config(seq=512, d=32, br=64, bc=128, dtype="fp32", splits=2))
    n, d, s = 512, 32, 2
    assert got["hbm"]["read_bytes"]["Q"] == s * n * d * 4            # each split loads Q_i
    assert got["hbm"]["read_bytes"]["K"] == 8 * n * d * 4            # T_r passes over K, split two ways
    assert got["hbm"]["write_bytes"]["Oacc"] == s * n * d * 4        # fp32 partial O per split
    assert got["hbm"]["write_bytes"]["Lacc"] == s * n * 4
    assert got["hbm"]["read_bytes"]["Oacc"] == s * n * d * 4         # the combine reads them all
    assert got["hbm"]["write_bytes"]["O"] == n * d * 4


def test_fa2_decode_folds_grouped_heads_into_rows():
    cfg = flashlab.Config(kernel="fa2", nq=1, nk=8192, d=128, heads=32, kv_heads=8, mask="causal-br")
    assert (cfg.heads, cfg.n_q, cfg.mask, cfg.splits) == (8, 4, "none", 32)


@pytest.mark.parametrize("splits", [2, 3, 9])
@pytest.mark.parametrize("mask", ["none", "causal", "causal-br"])
def test_run_with_splits_against_float64(splits, mask):
    cfg = flashlab.Config(nq=100, nk=300, d=32, br=32, bc=32, dtype="fp16", mask=mask, splits=splits)
    O, L = check_against_reference(cfg, *random_inputs(100, 300, 32, "fp16"))
    assert np.all(np.isfinite(O))


def test_bad_splits_raise_value_errors_as_the_command_line():
    for kw, flags in [(dict(splits=0), "--splits 0"), (dict(splits=129), "--splits 129"),
                      (dict(splits=2, algo="v1"), "--splits 2 --algo v1"),
                      (dict(splits=2, pass_="backward"), "--splits 2 --pass backward")]:
        with pytest.raises(ValueError) as e:
            flashlab.Config(**kw)
        assert str(e.value) == cli_error("count " + flags)
    with pytest.raises(ValueError, match="kernel"):
        flashlab.Config(kernel="fa3")
