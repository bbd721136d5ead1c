#!/usr/bin/env python3
"""Runs `flashlab count --json` over a fixed grid of configurations and writes one JSON line per
config: {"args": [...], "hbm": {...}, "tiles": {...}, "flops": ..., "ops": {...}}.

Used to show that a refactor changes no count: run it before and after, then `diff` the two files.
Usage: count_snapshot.py BUILD/sim/cli/flashlab OUT.jsonl
"""
import itertools
import json
import subprocess
import sys


def grid():
    shapes = [(1024, 1024, 64), (1000, 700, 64), (700, 1000, 32), (256, 256, 128), (33, 33, 16),
              (4096, 4096, 64), (100, 128, 64), (1, 512, 64)]
    tiles = [(64, 64), (128, 64), (32, 96)]
    masks = ["none", "causal", "causal-br", "window:64,32"]
    for algo, (nq, nk, d), (br, bc), mask in itertools.product(["standard", "v1", "v2"], shapes, tiles, masks):
        yield ["--algo", algo, "--nq", str(nq), "--nk", str(nk), "--d", str(d), "--br", str(br), "--bc", str(bc),
               "--mask", mask, "--dtype", "fp16"]
    for algo, skip, dtype in itertools.product(["v1", "v2"], ["on", "off"], ["fp32", "bf16"]):
        yield ["--algo", algo, "--nq", "1000", "--nk", "1500", "--d", "64", "--br", "64", "--bc", "32",
               "--mask", "causal-br", "--block-skip", skip, "--dtype", dtype, "--batch", "2", "--heads", "3"]


def main():
    exe, out = sys.argv[1], sys.argv[2]
    n = 0
    with open(out, "w") as f:
        for args in grid():
            r = subprocess.run([exe, "count", "--json", *args], capture_output=True, text=True)
            if r.returncode != 0:
                f.write(json.dumps({"args": args, "error": r.stderr.strip()}) + "\n")
                continue
            j = json.loads(r.stdout)
            keep = {k: j[k] for k in ("hbm", "tiles", "flops", "ops") if k in j}
            f.write(json.dumps({"args": args, **keep}, sort_keys=True) + "\n")
            n += 1
    print(f"{n} configs counted -> {out}")


if __name__ == "__main__":
    main()
