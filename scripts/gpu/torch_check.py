"""PyTorch's scaled_dot_product_attention on the inputs flashlab-gpu ran (its --dump folders).

Outputs are compared row by row where the mask leaves at least one visible key (PyTorch gives NaN
or 0 for a row with none; flashlab gives O = 0 there, checked against float64 separately).
"""

import json
import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cuda_events  # noqa: E402

TORCH_DTYPE = {"fp16": torch.float16, "bf16": torch.bfloat16}


def dumped(folder):
    """A flashlab-gpu --dump folder: (its meta.json, tensor(file, rows) -> that file's (batch, heads,
    rows, d) tensor on the GPU, in the dump's dtype)."""
    meta = json.loads((folder / "meta.json").read_text())
    b, h, d = meta["batch"], meta["heads"], meta["d"]
    dt = TORCH_DTYPE[meta["dtype"]]

    def tensor(name, n):
        raw = np.fromfile(folder / name, dtype=np.int16)
        return torch.from_numpy(raw).view(dt).reshape(b, h, n, d).cuda()

    return meta, tensor


def load(folder):
    meta, tensor = dumped(folder)
    nq, nk = meta["n_q"], meta["n_k"]
    return meta, tensor("q.bin", nq), tensor("k.bin", nk), tensor("v.bin", nk), tensor("o.bin", nq)


def band_mask(meta):
    """Boolean (N_q, N_k) mask, True = visible: lo <= c - r <= hi (flashlab's band)."""
    r = torch.arange(meta["n_q"], device="cuda").unsqueeze(1)
    c = torch.arange(meta["n_k"], device="cuda").unsqueeze(0)
    diff = c - r
    return (diff >= max(meta["band_lo"], -(1 << 40))) & (diff <= min(meta["band_hi"], 1 << 40))


def compare(folder):
    """Relative Frobenius error of flashlab's O against sdpa's, over rows with a visible key."""
    meta, q, k, v, o = load(folder)
    mask = band_mask(meta)
    if meta["mask"] == "none":
        ref = F.scaled_dot_product_attention(q, k, v, scale=meta["scale"])
    elif meta["mask"] == "causal":
        ref = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=meta["scale"])
    else:
        ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=meta["scale"])
    rows = mask.any(dim=1)
    a, b = o[:, :, rows].float(), ref[:, :, rows].float()
    err = (a - b).norm().item() / max(b.norm().item(), 1e-30)
    return {"rel_fro": err, "rows_compared": int(rows.sum().item()) * meta["batch"] * meta["heads"],
            "rows_without_key": int((~rows).sum().item()) * meta["batch"] * meta["heads"],
            "torch_finite": bool(torch.isfinite(b).all().item()), "dtype": meta["dtype"]}


def time_flash(d, causal, batch=4, heads=16, n=4096, warmup=5, reps=20):
    """Median milliseconds of the flash backend on random fp16 inputs of the performance size."""
    q, k, v = (torch.randn(batch, heads, n, d, device="cuda", dtype=torch.float16) for _ in range(3))

    def call():
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    return cuda_events.median_ms(call, warmup=warmup, reps=reps)


def compare_perf_dump(folder):
    """flashlab's O at the performance size against the flash backend on the same inputs."""
    meta, q, k, v, o = load(folder)
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        ref = F.scaled_dot_product_attention(q, k, v, is_causal=meta["mask"] == "causal", scale=meta["scale"])
    err = (o.float() - ref.float()).norm().item() / ref.float().norm().item()
    return {"rel_fro": err}
