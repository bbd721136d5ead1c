"""Plot helpers on matplotlib: the block-skip map (full / partial / skipped tiles).

matplotlib is imported only when a plot is drawn, so `import flashlab` works without it.
"""
import numpy as np

from ._flashlab import TILE_COLOURS, tile_map

# The four kinds of tile the map shows, in the legend's order: (key of TILE_COLOURS, label).
_KINDS = (
    ("full", "full: every element visible"),
    ("partial", "partial: some elements visible"),
    ("skipped", "skipped: none visible, not computed"),
    ("computed_skipped", "skipped but computed (block skip off)"),
)


def tile_map_image(cfg=None, **kwargs):
    """The block-skip map as an RGB image, one pixel per tile.

    Returns a (T_r, T_c, 3) uint8 array: tile (i, j) (query rows i*B_r.., keys j*B_c..) in the
    viewer's colours (TILE_COLOURS, from viz/model/palette.hpp): full, partial, skipped (not
    computed) and skipped-but-computed (block skip off, or standard attention, which computes
    all of S). The classes are tile_map()'s. Raises ValueError (flashlab.ConfigError) for a bad
    config, as Config() does.
    """
    m = tile_map(cfg, **kwargs)
    cls, computed = m["cls"], m["computed"]
    image = np.empty(cls.shape + (3,), dtype=np.uint8)
    image[cls == 0] = TILE_COLOURS["full"]
    image[cls == 1] = TILE_COLOURS["partial"]
    image[(cls == 2) & ~computed] = TILE_COLOURS["skipped"]
    image[(cls == 2) & computed] = TILE_COLOURS["computed_skipped"]
    return image


_METRICS = {"visit": "visit order", "hbm_bytes": "HBM bytes (one head)", "flops": "matmul FLOPs",
            "exp": "exponentials"}


def plot_tile_map(cfg=None, ax=None, legend=True, metric=None, **kwargs):
    """Draws the block-skip map of a configuration on a matplotlib Axes and returns the Axes.

    Rows are Q blocks i (top to bottom), columns K/V blocks j (left to right), one cell per
    B_r x B_c tile, coloured as tile_map_image(). cfg is a flashlab.Config (or None: the keyword
    arguments make one); ax an Axes to draw on (default: a new figure's); legend adds the four
    colours with their meaning (only those present are listed). The title names the algorithm,
    N_q x N_k, the tile and the mask. metric ('visit', 'hbm_bytes', 'flops' or 'exp': tile_map()'s
    per-tile arrays) draws a heat map of it instead, with a colour bar, tiles the schedule does not
    visit left blank (as the viewer's heat map). Raises ValueError (flashlab.ConfigError) for a bad
    config or metric.
    """
    import matplotlib.patches as mpatches
    import matplotlib.pyplot as plt

    from ._flashlab import Config

    if cfg is None or kwargs:
        cfg = Config(**kwargs) if cfg is None else cfg.replace(**kwargs)
    if ax is None:
        _, ax = plt.subplots()
    if metric is not None:
        if metric not in _METRICS:
            from ._flashlab import ConfigError
            e = ConfigError("metric = %r: one of %s" % (metric, ", ".join(_METRICS)))
            e.field, e.value, e.allowed = "metric", repr(metric), "one of " + ", ".join(_METRICS)
            raise e
        m = tile_map(cfg)
        values = np.ma.masked_where(~m["computed"] | (m["visit"] < 0), m[metric].astype(float))
        t_r, t_c = values.shape
        shown = ax.imshow(values, interpolation="nearest", cmap="viridis", extent=(-0.5, t_c - 0.5, t_r - 0.5, -0.5))
        if legend:
            ax.figure.colorbar(shown, ax=ax, label=_METRICS[metric])
    else:
        image = tile_map_image(cfg)
        t_r, t_c = image.shape[:2]
        ax.imshow(image, interpolation="nearest", extent=(-0.5, t_c - 0.5, t_r - 0.5, -0.5))
    ax.set_xlabel("K/V block j (B_c = %d keys)" % cfg.b_c)
    ax.set_ylabel("Q block i (B_r = %d rows)" % cfg.b_r)
    skip = "" if cfg.algo == "standard" else ", block skip %s" % ("on" if cfg.block_skip else "off")
    ax.set_title("%s: N_q = %d, N_k = %d, %d x %d tiles, mask %s%s"
                 % (cfg.algo, cfg.n_q, cfg.n_k, t_r, t_c, cfg.mask, skip), fontsize="medium")
    if legend and metric is None:
        present = {tuple(int(c) for c in px) for px in np.unique(image.reshape(-1, 3), axis=0)}
        handles = [mpatches.Patch(color=np.array(TILE_COLOURS[key]) / 255.0, label=label)
                   for key, label in _KINDS if tuple(TILE_COLOURS[key]) in present]
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="small")
    return ax


def plot_sweep(sweep, metric="hbm_total_bytes", ax=None, log=True):
    """Draws one metric of a sweep() against the swept value, one line per algorithm, on a matplotlib
    Axes (default: a new figure's), and returns the Axes.

    sweep is the dict flashlab.sweep() returns; metric one of its metric columns (docs/output.md
    lists each with its unit, e.g. 'hbm_total_bytes', 'dram_total_bytes', 'predicted_seconds',
    'flops_matmul'); log draws both axes in log scale (base 2 on x). Raises ValueError
    (flashlab.ConfigError) naming a metric the sweep does not hold.
    """
    import matplotlib.pyplot as plt

    if metric not in sweep or metric in ("over", "value", "algo", "mask", "dtype"):
        from ._flashlab import ConfigError
        allowed = "a metric column of the sweep, e.g. hbm_total_bytes (docs/output.md)"
        e = ConfigError("metric = %r: %s" % (metric, allowed))
        e.field, e.value, e.allowed = "metric", repr(metric), allowed
        raise e
    if ax is None:
        _, ax = plt.subplots()
    algos = list(dict.fromkeys(sweep["algo"]))
    for algo in algos:
        rows = [k for k, a in enumerate(sweep["algo"]) if a == algo]
        ax.plot([sweep["value"][k] for k in rows], [sweep[metric][k] for k in rows], marker="o", label=algo)
    if log:
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
    ax.set_xlabel(sweep["over"])
    ax.set_ylabel(metric)
    ax.legend()
    return ax
