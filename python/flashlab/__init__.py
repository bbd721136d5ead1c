"""flashlab from Python: the FlashAttention simulator's library, with NumPy arrays and plots.

    import flashlab
    cfg = flashlab.Config(seq=1024, d=64, br=64, bc=64, mask="causal")
    flashlab.count(cfg)["hbm"]["total_bytes"]        # what `flashlab count --json` prints
    O, L = flashlab.run(cfg, q, k, v)                 # numpy in, numpy out
    flashlab.plot_tile_map(cfg)                       # the block-skip map on matplotlib

The functions wrap the C++ library (the extension flashlab._flashlab; no subprocess): Config,
ConfigError, CONFIG_FIELDS, count, compare, sweep, trace, tile_map, run, schedule, timeline, v1_to_v2_walk, v2_to_v3_walk. python/README.md documents each with its shapes
and units; docs/model.md gives every counting rule with its algorithm line.
"""
import sys as _sys

try:  # the extension imports NumPy as it starts; without it pybind11 says only "initialization failed"
    import numpy as _numpy  # noqa: F401
except ImportError as _e:
    raise ImportError(
        "flashlab needs NumPy, which %s cannot import (%s): install it for this interpreter "
        "(Debian: apt-get install python3-numpy; or python3 -m pip install numpy), or run the "
        "interpreter the module was built for (CMake's Python3_EXECUTABLE, /usr/bin/python3 after "
        "scripts/setup.sh)" % (_sys.executable, _e)) from None

from ._flashlab import (
    CONFIG_FIELDS,
    EQS,
    EVENT_DTYPE,
    OPS,
    TENSORS,
    TILE_CLASSES,
    TILE_COLOURS,
    Config,
    ConfigError,
    compare,
    count,
    schedule,
    sweep,
    tile_map,
    trace,
    timeline,
    v1_to_v2_walk,
    v2_to_v3_walk,
)
from .batched import run
from .plot import plot_sweep, plot_tile_map, tile_map_image

__all__ = [
    "Config",
    "ConfigError",
    "count",
    "compare",
    "trace",
    "tile_map",
    "run",
    "schedule",
    "sweep",
    "plot_tile_map",
    "plot_sweep",
    "tile_map_image",
    "timeline",
    "v1_to_v2_walk",
    "v2_to_v3_walk",
    "CONFIG_FIELDS",
    "EVENT_DTYPE",
    "OPS",
    "TENSORS",
    "EQS",
    "TILE_CLASSES",
    "TILE_COLOURS",
]

# The classes live in the extension; they are shown (repr, tracebacks) as the package's.
Config.__module__ = "flashlab"
ConfigError.__module__ = "flashlab"
