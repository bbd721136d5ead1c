#!/usr/bin/env python3
"""Merges the outputs of time_dataset.py runs (one ncu pass each, checks, PyTorch) into the committed
data set tests/data/gpu_time/h200.json: per row and launch, every pass's sample, in run order.

    python3 scripts/gpu/time_dataset_merge.py OUT/a/time_dataset.json OUT/b/... -o tests/data/gpu_time/h200.json

A first run whose "ours" step stopped (its ncu log kept) is regrouped from that log with --regroup
LOG (group_ours, the simulator's launch counts from --flashlab). Every run with rows of this
project's kernels ("checks", "ours") must name the same kernel-source hash: samples of different
kernels are never mixed. A run of PyTorch's kernels only ("torch") times no kernel of ours, so it
may come from an earlier kernel-source hash (--torch-from takes them from a committed data set).
"""

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import ncu  # noqa: E402
import time_configs  # noqa: E402
import time_dataset  # noqa: E402


def regrouped(log, flashlab_gpu):
    rows = time_configs.ours()
    launches = ncu.launches(Path(log).read_text(), time_dataset.METRICS)
    counts = time_dataset.launch_counts(Path(flashlab_gpu), rows, Path("/tmp"))
    out = []
    for r, group in zip(rows, time_dataset.group_ours(launches, counts, rows)):
        out.append({"flags": r, "split": time_configs.split_of(r), "launches": []})
        time_dataset.add_samples(out[-1], group)
    return out


def add_samples(dst, src):
    """Appends src's samples to dst's rows of the same flags; a row dst lacks (a run split by --rows
    over device calls) is added whole."""
    by_flags = {r["flags"]: r for r in dst}
    for r in src:
        d = by_flags.get(r["flags"])
        if d is None:
            dst.append(dict(r))
            by_flags[r["flags"]] = dst[-1]
            continue
        if len(d["launches"]) != len(r["launches"]):
            raise SystemExit(f"{r['flags']}: {len(r['launches'])} launches, earlier {len(d['launches'])}")
        for a, b in zip(d["launches"], r["launches"]):
            if a["name"] != b["name"]:
                raise SystemExit(f"{r['flags']}: launch {b['name']} where an earlier run had {a['name']}")
            for key in time_dataset.METRICS:
                a[key] = a[key] + b[key]
    return dst


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("-o", "--output", required=True, type=Path)
    ap.add_argument("--regroup", help="ncu_ours_*.csv of a run whose grouping failed")
    ap.add_argument("--flashlab-gpu", default="build/kernels/flashlab-gpu")
    ap.add_argument("--command", required=True, help="the device commands that made the runs, for the record")
    ap.add_argument("--torch-from", type=Path, help="a committed data set whose PyTorch rows (and their run) to keep")
    a = ap.parse_args()
    docs = []
    if a.torch_from:
        try:
            old = json.loads(a.torch_from.read_text())
            runs = [r for r in old["meta"]["runs"] if r.get("steps_with_rows") == ["torch"]]
            docs.append({"meta": runs[0], "checks": [], "ours": [], "torch": old["torch"]})
        except (OSError, ValueError, KeyError, TypeError, IndexError) as e:
            ap.error(f"torch-from = {a.torch_from}: not a merged data set with a PyTorch-only run ({e})")
    for p in a.runs:
        try:
            docs.append(json.loads(p.read_text()))
            docs[-1]["meta"]["kernel_sources_sha256"], docs[-1]["ours"], docs[-1]["torch"], docs[-1]["checks"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            ap.error(f"run = {p}: not a time_dataset.py output ({e})")
    hashes = {d["meta"]["kernel_sources_sha256"] for d in docs if d["ours"] or d["checks"]}
    if len(hashes) != 1:
        raise SystemExit(f"runs of this project's kernels must share one kernel-source hash: {sorted(hashes)}")
    ours_meta = next(d["meta"] for d in docs if d["ours"] or d["checks"])
    merged = {"meta": dict(ours_meta) | {"runs": [d["meta"] | {"steps_with_rows": [k for k in ("checks", "ours", "torch") if d[k]]}
                                                   for d in docs]},
              "checks": [], "ours": [], "torch": []}
    merged["meta"].pop("command", None)
    merged["meta"]["command"] = a.command
    if a.regroup:
        merged["ours"] = regrouped(a.regroup, a.flashlab_gpu)
    for d in docs:
        merged["checks"] = merged["checks"] or d["checks"]
        merged["ours"] = add_samples(merged["ours"], d["ours"])
        merged["torch"] = add_samples(merged["torch"], d["torch"])
    a.output.parent.mkdir(parents=True, exist_ok=True)
    a.output.write_text(json.dumps(merged, indent=0, separators=(",", ":")) + "\n")
    print(f"{a.output}: checks {len(merged['checks'])}, ours {len(merged['ours'])}, torch {len(merged['torch'])}")


if __name__ == "__main__":
    main()
