"""flashlab.sweep(): the command's `sweep` CSV as NumPy columns — every metric column equal to the
CSV's at every point, the config columns, several algorithms per point, and the errors."""
import csv
import io
import math

import numpy as np
import pytest

import flashlab
from conftest import cli, cli_error


def csv_rows(args):
    out, _ = cli(args)
    return list(csv.DictReader(io.StringIO(out)))


def test_columns_equal_the_commands_csv():
    got = flashlab.sweep(flashlab.Config(d=64, br=64, bc=64, mask="causal"), over="seq", values=[256, 512, 1024],
                         algos=["v1", "v2"])
    rows = csv_rows("sweep --over n --values 256,512,1024 --algos v1,v2 --d 64 --br 64 --bc 64 --mask causal")
    assert got["over"] == "seq" and got["value"] == [256, 256, 512, 512, 1024, 1024]
    assert got["algo"] == [r["algo"] for r in rows] == ["v1", "v2"] * 3
    assert list(got["n_q"]) == [int(r["n_q"]) for r in rows]
    metrics = [k for k in rows[0] if k not in ("over", "value", "algo", "n_q", "n_k", "d", "b_r", "b_c", "t_r", "t_c",
                                               "mask", "block_skip", "dtype", "batch", "heads", "sram_capacity_bytes",
                                               "pass", "backward_form", "splits", "kernel", "warps", "split", "order",
                                               "grid", "rescale", "warp_specialize", "stages", "pingpong",
                                               "intra_overlap", "scheduler")]
    assert len(metrics) > 50
    for key in metrics:
        col = got[key]
        for k, r in enumerate(rows):
            want = r[key]
            if want == "":
                assert math.isnan(col[k]), key
            elif col.dtype == np.int64:
                assert col[k] == int(want), key
            else:
                assert col[k] == pytest.approx(float(want), rel=1e-12), key


def test_hbm_bytes_closed_form_over_n():
    # V2, no mask, B = 64, fp16, d = 64: Q once, K and V once per Q block, O and L once (FA2 Alg. 1)
    ns = [128, 256, 512]
    got = flashlab.sweep(flashlab.Config(d=64, br=64, bc=64), over="seq", values=ns)
    want = [2 * n * 64 + 2 * (n // 64) * n * 64 * 2 + n * 64 * 2 + n * 4 for n in ns]
    assert list(got["hbm_total_bytes"]) == want
    assert got["hbm_total_bytes"].dtype == np.int64


def test_bad_points_raise_before_any_count():
    with pytest.raises(ValueError) as e:
        flashlab.sweep(over="br", values=[64, 0])
    assert str(e.value) == cli_error("count --br 0")
    with pytest.raises(ValueError, match="values"):
        flashlab.sweep(over="seq", values=[])
    with pytest.raises(TypeError):
        flashlab.sweep(over="seq")


def test_plot_sweep_draws_a_line_per_algorithm():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    s = flashlab.sweep(flashlab.Config(d=64, br=64, bc=64), over="seq", values=[256, 512, 1024], algos=["v1", "v2"])
    ax = flashlab.plot_sweep(s, metric="hbm_total_bytes")
    lines = ax.get_lines()
    assert [l.get_label() for l in lines] == ["v1", "v2"]
    assert list(lines[1].get_ydata()) == list(s["hbm_total_bytes"][1::2])
    assert ax.get_xlabel() == "seq"
    with pytest.raises(ValueError, match="^metric = "):
        flashlab.plot_sweep(s, metric="algo")
    plt.close("all")


def test_over_must_be_a_config_keyword():
    # A new user's report: over="nonsense" raised TypeError "Config() got an unexpected keyword
    # argument 'nonsense'", naming Config() and not `over`; now a ConfigError (a ValueError) on over.
    for over in ("nonsense", "algo", "block-skip", ""):
        with pytest.raises(flashlab.ConfigError) as e:
            flashlab.sweep(over=over, values=[1])
        assert e.value.field == "over" and e.value.value == over
        assert str(e.value).startswith(f"over = {over or chr(34) * 2}: a Config keyword other than algo")
        assert "seq, nq, nk" in str(e.value)
    # every keyword still sweeps: block_skip and model as well as the sizes
    got = flashlab.sweep(flashlab.Config(seq=256, d=64, br=64, bc=64, mask="causal"), over="block_skip",
                         values=[True, False])
    assert list(got["tiles_visited"]) == [10, 16]  # T = 4, causal: 4 * 5 / 2 tiles with skip, 16 without
