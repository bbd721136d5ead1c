"""run() on (batch, heads, N, d) arrays: one (batch, head) at a time through the extension's run().

Query head h of batch b reads K/V head h // (heads / kv_heads) (grouped-query attention), as the
simulator and the kernels index them (docs/model.md "Split-KV": grouped heads).
"""
import numpy as np

from ._flashlab import Config, ConfigError
from ._flashlab import run as _run_one


def _error(field, value, allowed):
    """flashlab.ConfigError as the library raises it: '<field> = <value>: <allowed>', with the parts."""
    e = ConfigError("%s = %s: %s" % (field, value, allowed))
    e.field, e.value, e.allowed = field, str(value), allowed
    return e


def _config(cfg, kwargs):
    if cfg is None:
        return Config(**kwargs)
    return cfg.replace(**kwargs) if kwargs else cfg


def _shape(name, x, want, rows_name):
    if getattr(x, "shape", None) != want:
        got = "an array of shape %s" % (x.shape,) if hasattr(x, "shape") else "a " + type(x).__name__
        raise _error(name, got, "an array of shape %s = (batch, %s, %s, d)"
                     % (want, "kv_heads" if name in ("k", "v") else "heads", rows_name))


def run(cfg, q, k, v, *, steps=None, do=None, schedule=None, **kwargs):
    if getattr(q, "ndim", 2) != 4:
        return _run_one(cfg, q, k, v, steps=steps, do=do, schedule=schedule, **kwargs)
    c = _config(cfg, kwargs)
    b, h, hk = c.batch, c.heads, c.kv_heads
    _shape("q", q, (b, h, c.n_q, c.d), "N_q")
    _shape("k", k, (b, hk, c.n_k, c.d), "N_k")
    _shape("v", v, (b, hk, c.n_k, c.d), "N_k")
    if steps is not None:
        raise _error("steps", repr(steps), "None with (batch, heads, N, d) inputs (steps follow one head: pass "
                     "its (N, d) arrays)")
    if do is not None:
        _shape("do", do, (b, h, c.n_q, c.d), "N_q")
        if hk != h:
            raise _error("kv_heads", hk, "heads (%d) with (batch, heads, N, d) inputs and a backward pass (dK, dV "
                         "of a shared K/V head sum over its query heads: run each head)" % h)
    group = h // hk
    outs = [[_run_one(c, q[i, j], k[i, j // group], v[i, j // group], do=None if do is None else do[i, j],
                      schedule=schedule) for j in range(h)] for i in range(b)]
    O = np.stack([np.stack([r[0] for r in row]) for row in outs])
    L = np.stack([np.stack([r[1] for r in row]) for row in outs])
    if do is None:
        return O, L
    grads = {key: np.stack([np.stack([r[2][key] for r in row]) for row in outs]) for key in ("dQ", "dK", "dV", "D")}
    return O, L, grads


run.__doc__ = _run_one.__doc__ + """
Batched: q of shape (batch, heads, N_q, d) and k, v of (batch, kv_heads, N_k, d) (cfg's batch, heads
and kv_heads) run every (batch, head), query head h on K/V head h // (heads / kv_heads), and return
O (batch, heads, N_q, d) and L (batch, heads, N_q); do (batch, heads, N_q, d) gives grads of the same
leading shape (dK, dV per query head; grouped heads refused with a backward). steps needs 2-D inputs.
A wrong shape raises ValueError (flashlab.ConfigError) naming the argument and the shape expected.
"""
