"""flashlab.tile_map() and the plot helpers: tile classes against docs/model.md's rule written
here per tile, against count()'s tile counts, and the picture's colours (the viewer's)."""
import os

import numpy as np
import pytest

import flashlab


def classes_by_rule(n_q, n_k, b_r, b_c, lo, hi):
    """docs/model.md "Tiles and masks": over tile (i, j), c - r covers
    [j B_c - (i B_r + rows(i) - 1), j B_c + cols(j) - 1 - i B_r]: full inside [lo, hi], skipped
    when disjoint, partial otherwise (0, 1, 2)."""
    t_r, t_c = -(-n_q // b_r), -(-n_k // b_c)
    out = np.empty((t_r, t_c), np.uint8)
    for i in range(t_r):
        rows = min(b_r, n_q - i * b_r)
        for j in range(t_c):
            cols = min(b_c, n_k - j * b_c)
            dmin, dmax = j * b_c - (i * b_r + rows - 1), j * b_c + cols - 1 - i * b_r
            out[i, j] = 0 if lo <= dmin and dmax <= hi else 2 if dmax < lo or dmin > hi else 1
    return out


@pytest.mark.parametrize("algo", ["v1", "v2", "standard"])
@pytest.mark.parametrize("n_q, n_k, b_r, b_c, mask, lo, hi", [
    (1024, 1024, 64, 64, "causal", -10 ** 9, 0),
    (1000, 700, 64, 32, "causal-br", -10 ** 9, -300),
    (500, 600, 48, 80, "window:100,20", 100 - 100, 100 + 20),
    (256, 256, 64, 64, "none", -10 ** 9, 10 ** 9),
])
def test_classes_follow_the_rule_and_counts(algo, n_q, n_k, b_r, b_c, mask, lo, hi):
    kw = dict(algo=algo, nq=n_q, nk=n_k, br=b_r, bc=b_c, mask=mask, dtype="fp32")
    m = flashlab.tile_map(**kw)
    want = classes_by_rule(n_q, n_k, b_r, b_c, lo, hi)
    assert m["cls"].dtype == np.uint8 and np.array_equal(m["cls"], want)
    c = flashlab.count(**kw)
    for k, name in enumerate(flashlab.TILE_CLASSES):
        assert (m["cls"] == k).sum() == c["tiles"][name]
    assert m["computed"].sum() == c["tiles"]["visited"]
    if algo == "standard":  # no tile loop: all of S computed, no visit order
        assert m["computed"].all() and (m["visit"] == -1).all()
    else:  # visit order: a permutation of the visited tiles, -1 elsewhere
        assert np.array_equal(np.sort(m["visit"][m["computed"]]), np.arange(m["computed"].sum()))
        assert (m["visit"][~m["computed"]] == -1).all()
    if algo == "v2":  # block skip on: exactly the skipped tiles are not computed
        assert np.array_equal(~m["computed"], m["cls"] == 2)
    if algo == "v1":  # the V1 paper's dense loop: every tile computed, row of tiles j outer
        assert m["computed"].all() and m["visit"][0, 1] == m["visit"].shape[0]


def test_image_colours_are_the_viewers():
    # viz/model/palette.hpp
    assert flashlab.TILE_COLOURS == {"full": (66, 133, 244), "partial": (251, 188, 5), "skipped": (52, 52, 60),
                                     "computed_skipped": (170, 62, 62)}
    img = flashlab.tile_map_image(algo="v2", seq=256, br=64, bc=64, mask="causal")
    assert img.shape == (4, 4, 3) and img.dtype == np.uint8
    assert tuple(img[1, 0]) == (66, 133, 244) and tuple(img[1, 1]) == (251, 188, 5) and tuple(img[1, 2]) == (52, 52, 60)
    dense = flashlab.tile_map_image(algo="v1", seq=256, br=64, bc=64, mask="causal")
    assert tuple(dense[1, 2]) == (170, 62, 62)  # skipped but computed: V1 has block skip off


def test_plot_draws_on_matplotlib(tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cfg = flashlab.Config(algo="v1", seq=1024, br=64, bc=64, mask="causal")
    ax = flashlab.plot_tile_map(cfg)
    image = ax.get_images()[0].get_array()
    assert np.array_equal(np.asarray(image), flashlab.tile_map_image(cfg))
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["full: every element visible", "partial: some elements visible",
                      "skipped but computed (block skip off)"]
    assert ax.get_title() == "v1: N_q = 1024, N_k = 1024, 16 x 16 tiles, mask causal, block skip off"
    path = os.path.join(tmp_path, "map.png")
    ax.figure.savefig(path)
    assert os.path.getsize(path) > 1000
    fig, axes = plt.subplots(1, 2)
    assert flashlab.plot_tile_map(cfg, ax=axes[1], algo="v2", legend=False) is axes[1]
    assert axes[1].get_legend() is None
    plt.close("all")


def test_bad_config_raises():
    with pytest.raises(ValueError, match="^mask = "):
        flashlab.tile_map(mask="upper")


def test_per_tile_costs_and_heat_map():
    # V2, causal, N = 256, B = 64, fp16, d = 64 (shared/cases R4): a visited tile loads K_j and V_j
    # (2 x 64 x 64 x 2 bytes) and runs 4 r c d FLOPs and r c + r exponentials (softmax_v2 line 9)
    m = flashlab.tile_map(seq=256, d=64, br=64, bc=64, mask="causal")
    assert m["hbm_bytes"][2, 1] == 2 * 64 * 64 * 2
    assert m["flops"][2, 1] == 4 * 64 * 64 * 64
    assert m["exp"][2, 1] == 64 * 64 + 64
    assert m["hbm_bytes"][0, 3] == 0 and m["flops"][0, 3] == 0  # skipped
    # V1 (block skip off: every tile computed): the tiles' FLOPs sum to count()'s
    v1 = flashlab.tile_map(algo="v1", seq=256, d=64, br=64, bc=64, mask="causal")
    c = flashlab.count(algo="v1", seq=256, d=64, br=64, bc=64, mask="causal")
    assert v1["flops"].sum() == c["flops"]["matmul"]
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ax = flashlab.plot_tile_map(seq=256, d=64, br=64, bc=64, mask="causal", metric="visit")
    shown = ax.get_images()[0].get_array()
    assert shown[0, 0] == 0 and shown[3, 3] == 9 and np.ma.is_masked(shown[0, 3])
    with pytest.raises(ValueError, match="^metric = "):
        flashlab.plot_tile_map(seq=256, metric="bytes")
    plt.close("all")
