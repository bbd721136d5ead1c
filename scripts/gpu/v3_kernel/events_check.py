#!/usr/bin/env python3
"""events_check.py — V3's staged kernel against the simulator, event by event (issue 27 item 4).

    python3 scripts/gpu/v3_kernel/events_check.py --v3 BIN --flashlab BIN --out DIR [--grid full|quick]
                                                  [--commit SHA] [--timeout 30]

BIN: the CMake target flashlab_v3_staged (`v3`, with `v3 trace`) and the simulator's CLI (`flashlab`).
For each config of the grid: `v3 trace ... --events DIR/traces/NAME.gpu.txt --stamps DIR/traces/NAME.csv`
(the instrumented kernel, O and L checked against float64), `flashlab trace` with the flags that
`v3 trace` prints (`sim_flags`: the same variant, tile and shape) into NAME.sim.txt, then
  - `flashlab diff NAME.sim.txt NAME.gpu.txt` (its exit status and report's first lines): the whole
    stream in the simulator's order, the GPU's agents merged by trace_file.hpp's rule;
  - a per-(launch, block, step, agent) compare (below): each agent's events in program order, which
    the GPU fixes (the merge of concurrent agents within a step is a convention); and the same groups
    compared as multisets (order aside): the events only one side has.
Writes DIR/events_check.jsonl, one JSON line per config: the config, v3's exit status and JSON line
(check, events, dropped), the simulator's event count, diff's status and head, and the per-agent
compare (groups, groups_differing, events_differing, first_mismatch with both events' text lines;
groups_differing_as_sets, events_only_sim, events_only_gpu, first_set_mismatch).
Each program run gets --timeout seconds (default 30). Exit 0 when every line was written (whatever
the verdicts), 1 when a program could not be started.

Grid (full): "fa3" fp16/bf16 x d 64/128 x none/causal x (B, N, H) = (1, 1000, 2), (1, 3000, 1),
(3, 1, 2); each ablation variant (stages1, no_pingpong, no_overlap, grid, static, dynamic, no_ws) at
fp16 d 128 N 1000 (B 1, H 2), none and causal, and br128 at d 64 (40 configs, ~15 s on the H200);
quick: the same with bf16 at the first shape only (32). Every config has at most 132 tiles
(one wave on the H200), where the simulator's one-(batch, head) trace is exact (docs/events.md "V3").
"""
import argparse
import json
import os
import subprocess
import sys

FA3_SHAPES = [(1, 1000, 2), (1, 3000, 1), (3, 1, 2)]
ABLATION = ["stages1", "no_pingpong", "no_overlap", "grid", "static", "dynamic", "no_ws"]


def grid(kind):
    out = []
    for dt in ("fp16", "bf16"):
        for d in (64, 128):
            for m in ("none", "causal"):
                for b, n, h in FA3_SHAPES:
                    out.append(("fa3", dt, d, m, b, n, h))
                    if kind == "quick" and dt == "bf16":
                        break
    for v in ABLATION:
        for m in ("none", "causal"):
            out.append((v, "fp16", 128, m, 1, 1000, 2))
    for m in ("none", "causal"):
        out.append(("br128", "fp16", 64, m, 1, 1000, 2))
    return out


def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return 124, "", f"timeout after {timeout} s"


def read_events(path):
    """The event lines of a text trace (docs/events.md "Text form"), as lists of fields."""
    ev = []
    with open(path) as f:
        inside = False
        for line in f:
            line = line.rstrip("\n")
            if line == "events":
                inside = True
                continue
            if inside:
                if line.startswith("stats "):
                    break
                ev.append(line.split(" "))
    return ev


def agent_of(fields):
    return fields[12] if len(fields) > 12 else "block"


def per_agent_compare(sim, gpu):
    """Group each trace's events by (launch, block, step, agent), in file order (each agent's program
    order), and compare the groups position by position."""
    def groups(ev):
        g = {}
        for e in ev:
            g.setdefault((int(e[0]), int(e[1]), int(e[2]), agent_of(e)), []).append(" ".join(e))
        return g
    gs, gg = groups(sim), groups(gpu)
    keys = sorted(set(gs) | set(gg), key=lambda k: (k[0], k[1], k[2], k[3]))
    differing, ev_diff, first = 0, 0, None
    for k in keys:
        a, b = gs.get(k, []), gg.get(k, [])
        if a == b:
            continue
        differing += 1
        n = max(len(a), len(b))
        bad = [p for p in range(n) if p >= len(a) or p >= len(b) or a[p] != b[p]]
        ev_diff += len(bad)
        if first is None:
            p = bad[0]
            first = {"launch": k[0], "block": k[1], "step": k[2], "agent": k[3], "position": p,
                     "sim": a[p] if p < len(a) else None, "gpu": b[p] if p < len(b) else None,
                     "sim_group_len": len(a), "gpu_group_len": len(b),
                     "shared_before": a[max(0, p - 3):p]}
    # the same groups as multisets: which events one side has and the other has not, order aside
    set_diff, only_sim, only_gpu, first_set = 0, 0, 0, None
    for k in keys:
        a, b = sorted(gs.get(k, [])), sorted(gg.get(k, []))
        if a == b:
            continue
        set_diff += 1
        ra, rb = list(a), list(b)
        for x in a:
            if x in rb:
                rb.remove(x)
                ra.remove(x)
        only_sim += len(ra)
        only_gpu += len(rb)
        if first_set is None:
            first_set = {"launch": k[0], "block": k[1], "step": k[2], "agent": k[3], "only_sim": ra[:4], "only_gpu": rb[:4]}
    return {"groups": len(keys), "groups_differing": differing, "events_differing": ev_diff, "first_mismatch": first,
            "groups_differing_as_sets": set_diff, "events_only_sim": only_sim, "events_only_gpu": only_gpu,
            "first_set_mismatch": first_set}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--v3", required=True)
    ap.add_argument("--flashlab", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--grid", choices=["full", "quick"], default="full")
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--timeout", type=int, default=30)
    a = ap.parse_args()
    tdir = os.path.join(a.out, "traces")
    os.makedirs(tdir, exist_ok=True)
    out_path = os.path.join(a.out, "events_check.jsonl")
    with open(out_path, "w") as out:
        for seed, (v, dt, d, m, b, n, h) in enumerate(grid(a.grid), start=300):
            name = f"{v}_{dt}_d{d}_{m}_b{b}_n{n}_h{h}"
            gpu_p, sim_p, st_p = (os.path.join(tdir, name + s) for s in (".gpu.txt", ".sim.txt", ".csv"))
            row = {"config": {"variant": v, "dtype": dt, "d": d, "mask": m, "batch": b, "n": n, "heads": h, "seed": seed}}
            try:
                rc, so, se = run([a.v3, "trace", v, dt, str(d), m, str(b), str(n), str(h), "--events", gpu_p,
                                  "--stamps", st_p, "--seed", str(seed), "--commit", a.commit], a.timeout)
            except OSError as e:
                print(f"cannot run {a.v3}: {e}", file=sys.stderr)
                return 1
            row["v3_exit"] = rc
            row["v3_stderr"] = se[-400:]
            rec = None
            for line in so.splitlines():
                if line.startswith("{"):
                    rec = json.loads(line)
            row["v3"] = rec
            if rec and os.path.exists(gpu_p):
                flags = rec["sim_flags"].split()
                try:
                    rc2, so2, se2 = run([a.flashlab, "trace", *flags, "--format", "text", "--quiet", "-o", sim_p],
                                        a.timeout)
                except OSError as e:
                    print(f"cannot run {a.flashlab}: {e}", file=sys.stderr)
                    return 1
                row["sim_exit"] = rc2
                if rc2 == 0:
                    sim, gpu = read_events(sim_p), read_events(gpu_p)
                    row["sim_events"], row["gpu_events"] = len(sim), len(gpu)
                    rc3, so3, se3 = run([a.flashlab, "diff", sim_p, gpu_p], a.timeout)
                    row["diff_exit"] = rc3
                    row["diff_head"] = (so3 + se3).splitlines()[:14]
                    row["per_agent"] = per_agent_compare(sim, gpu)
                else:
                    row["sim_stderr"] = se2[-400:]
            out.write(json.dumps(row) + "\n")
            out.flush()
            pa = row.get("per_agent", {})
            print(f"{name}: v3 {rc}, events gpu {row.get('gpu_events')} sim {row.get('sim_events')}, "
                  f"diff {row.get('diff_exit')}, agent groups differing {pa.get('groups_differing')}", flush=True)
    print(f"wrote {out_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
