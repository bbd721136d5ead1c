#!/usr/bin/env python3
"""timeline_compare.py — the H200's measured V3 timeline (per-warpgroup %globaltimer stamps of
`v3 trace`) beside the simulator's predicted one (`flashlab timeline --json`), as per-agent fractions
of time (issue 27 item 4; sim/include/flashlab/time/timeline.hpp).

    # run both, then compare (one config; stamps of the CTAs listed, default 0-3; the events file
    # v3 trace writes is removed: the stamps CSV and the timeline JSON stay in DIR):
    python3 scripts/gpu/v3_kernel/timeline_compare.py --v3 BIN --flashlab BIN --out DIR \\
        [--config "fa3 fp16 128 none 1 16384 16"] [--stamp-ctas 0,1,...] [--timeout 30]
    # or compare files already written:
    python3 scripts/gpu/v3_kernel/timeline_compare.py --stamps FILE.csv --timeline FILE.json [--out DIR]

Measured (stamps CSV: sm,cta,agent,step,i,j,what,t_begin_ns,t_end_ns; trace_cmd.cuh): for each CTA,
its span is its first stamp's begin to its last stamp's end over all its agents; each agent's time in
a category is the sum of its stamps' durations in it, divided by that span. Reported per agent: the
median over the CTAs, and the CTA with the longest span. Categories (stamp names -> the timeline's
interval names, timeline.hpp):
  producer: wait_empty = wait_k_empty + wait_v_empty (timeline "wait-empty"); also wait_q_empty,
            load (load_q + load_k + load_v: the TMA issue), sched (dynamic scheduler), the rest idle
  consumer k: wait_full = wait_q_full + wait_k_full + wait_v_full ("wait-full"); wait_mma = wait_s +
            wait_pv ("wait-mma"); softmax = softmax + rescale ("softmax"); epilogue ("store O");
            issue = issue_s + issue_pv; pp_wait (named barrier); sched_wait; gemm_issue_and_wait = issue +
            wait_mma (beside "wait-mma" too: wgmma issue stalls while the tensor cores are busy)
  every agent: unstamped = 1 - the sum of its categories (time no stamp covers: the stamps' own cost,
            barrier arrives, fences)
Predicted: the timeline JSON's agent lanes (producer, consumer k), each interval name's summed
duration / time_s (one SM: the busiest by default).
Stamps are taken by thread 0 of each warpgroup; %globaltimer's resolution (`v3 clock`) bounds each
stamp's error. Writes DIR/timeline_compare.json and prints a table. Exit 0, 2 bad input.
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys

GROUPS = {
    "producer": {"wait_empty": ["wait_k_empty", "wait_v_empty"], "wait_q_empty": ["wait_q_empty"],
                 "load": ["load_q", "load_k", "load_v"], "sched": ["sched"]},
    "consumer": {"wait_full": ["wait_q_full", "wait_k_full", "wait_v_full"], "wait_mma": ["wait_s", "wait_pv"],
                 "softmax": ["softmax", "rescale"], "epilogue": ["epilogue"], "issue": ["issue_s", "issue_pv"],
                 "pp_wait": ["pp_wait"], "sched_wait": ["sched_wait"]},
}
# derived rows: the GEMMs' issue and wait together (wgmma issue stalls while the tensor cores are busy,
# so part of the GEMM time shows as issue), and the time no stamp covers (the instrumentation itself,
# barrier arrives, fences)
DERIVED = {"consumer": {"gemm_issue_and_wait": ["issue", "wait_mma"]}}
SIM_NAMES = {"wait_empty": "wait-empty", "wait_full": "wait-full", "wait_mma": "wait-mma", "softmax": "softmax",
             "epilogue": "store O", "gemm_issue_and_wait": "wait-mma"}


def agent_name(a):
    return "producer" if a == 1 else f"consumer {a - 2}"


def measured(stamps_path):
    per_cta = {}
    with open(stamps_path) as f:
        for r in csv.DictReader(f):
            c = per_cta.setdefault(int(r["cta"]), {"sm": int(r["sm"]), "t0": None, "t1": None, "agents": {}})
            t0, t1 = float(r["t_begin_ns"]), float(r["t_end_ns"])
            c["t0"] = t0 if c["t0"] is None else min(c["t0"], t0)
            c["t1"] = t1 if c["t1"] is None else max(c["t1"], t1)
            ag = c["agents"].setdefault(agent_name(int(r["agent"])), {})
            ag[r["what"]] = ag.get(r["what"], 0) + (t1 - t0)
    if not per_cta:
        raise ValueError(f"{stamps_path}: no stamps")
    fr = {}  # cta -> agent -> category -> fraction
    for cta, c in per_cta.items():
        span = max(1, c["t1"] - c["t0"])
        fr[cta] = {"span_ns": span, "sm": c["sm"], "agents": {}}
        for ag, whats in c["agents"].items():
            groups = GROUPS["producer" if ag == "producer" else "consumer"]
            f = {g: sum(whats.get(w, 0) for w in ws) / span for g, ws in groups.items()}
            f["unstamped"] = 1.0 - sum(f.values())
            for g, parts in DERIVED.get("producer" if ag == "producer" else "consumer", {}).items():
                f[g] = sum(f[x] for x in parts)
            fr[cta]["agents"][ag] = f
    longest = max(fr, key=lambda k: fr[k]["span_ns"])
    agents = sorted({a for v in fr.values() for a in v["agents"]})
    median = {}
    for ag in agents:
        rows = [v["agents"][ag] for v in fr.values() if ag in v["agents"]]
        median[ag] = {g: statistics.median(r[g] for r in rows) for g in rows[0]}
    return {"ctas": len(fr), "median": median, "longest_cta": longest, "longest": fr[longest],
            "span_ns_median": statistics.median(v["span_ns"] for v in fr.values())}


def predicted(timeline_path):
    t = json.load(open(timeline_path))
    total = t["time_s"]
    lanes = [ln["name"] for ln in t["lanes"]]
    out = {}
    for iv in t["intervals"]:
        t0, t1, lane, what = iv[0], iv[1], iv[2], iv[3]
        if t["lanes"][lane]["kind"] != "agent":
            continue
        d = out.setdefault(lanes[lane], {})
        d[what] = d.get(what, 0.0) + (t1 - t0) / total
    return {"sm": t["sm"], "time_s": total, "tiles": t["tiles"], "truncated": t["truncated"], "agents": out}


def compare(stamps_path, timeline_path):
    m, p = measured(stamps_path), predicted(timeline_path)
    rows = []
    for ag, cats in m["median"].items():
        for g, x in cats.items():
            sim = p["agents"].get(ag, {}).get(SIM_NAMES.get(g, ""), None) if g in SIM_NAMES else None
            rows.append({"agent": ag, "category": g, "measured_median": x,
                         "measured_longest_cta": m["longest"]["agents"].get(ag, {}).get(g),
                         "timeline": sim, "timeline_name": SIM_NAMES.get(g)})
    return {"stamps": stamps_path, "timeline": timeline_path, "measured": m, "predicted": p, "rows": rows}


def run(cmd, timeout):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--stamps")
    ap.add_argument("--timeline")
    ap.add_argument("--v3")
    ap.add_argument("--flashlab")
    ap.add_argument("--config", default="fa3 fp16 128 none 1 16384 16")
    ap.add_argument("--stamp-ctas", default="0,1,2,3")
    ap.add_argument("--out", default=".")
    ap.add_argument("--timeout", type=int, default=30)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    extra = {}
    if a.v3 or a.flashlab:
        if not (a.v3 and a.flashlab):
            print("error: --v3 and --flashlab go together", file=sys.stderr)
            return 2
        cfg = a.config.split()
        if len(cfg) != 7:
            print(f"error: --config = {a.config}: VARIANT DTYPE D MASK B N H", file=sys.stderr)
            return 2
        name = "_".join(cfg)
        a.stamps = os.path.join(a.out, name + ".stamps.csv")
        a.timeline = os.path.join(a.out, name + ".timeline.json")
        try:
            rc, so, se = run([a.v3, "trace", *cfg, "--events", os.path.join(a.out, name + ".gpu.fltrace"),
                              "--events-format", "binary", "--stamps", a.stamps, "--stamp-ctas", a.stamp_ctas],
                             a.timeout)
        except subprocess.TimeoutExpired:
            print(f"error: v3 trace {a.config}: timeout after {a.timeout} s", file=sys.stderr)
            return 1
        rec = next((json.loads(x) for x in so.splitlines() if x.startswith("{")), None)
        if rc != 0 or rec is None:
            print(f"error: v3 trace {a.config}: exit {rc}\n{so}{se}", file=sys.stderr)
            return 1
        extra["v3"] = rec
        os.remove(os.path.join(a.out, name + ".gpu.fltrace"))  # (tens of MB at N = 16k; events_check.py checks events)
        rc, so, se = run([a.flashlab, "timeline", *rec["sim_flags"].split(), "--json", a.timeline], a.timeout)
        if rc != 0:
            print(f"error: flashlab timeline: exit {rc}\n{se}", file=sys.stderr)
            return 1
    if not (a.stamps and a.timeline):
        print("error: give --stamps and --timeline, or --v3 and --flashlab", file=sys.stderr)
        return 2
    try:
        r = compare(a.stamps, a.timeline)
    except (OSError, ValueError, KeyError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    r.update(extra)
    path = os.path.join(a.out, "timeline_compare.json")
    with open(path, "w") as f:
        json.dump(r, f, indent=1)
    m = r["measured"]
    print(f"measured: {m['ctas']} CTAs, span median {m['span_ns_median'] / 1e3:.1f} us; "
          f"timeline: SM {r['predicted']['sm']}, {r['predicted']['time_s'] * 1e6:.1f} us, {r['predicted']['tiles']} tiles")
    print(f"{'agent':<12} {'category':<20} {'measured':>9} {'longest':>9} {'timeline':>9}")
    for x in r["rows"]:
        tl = "" if x["timeline"] is None else f"{x['timeline']:.3f}"
        lg = "" if x["measured_longest_cta"] is None else f"{x['measured_longest_cta']:.3f}"
        print(f"{x['agent']:<12} {x['category']:<20} {x['measured_median']:>9.3f} {lg:>9} {tl:>9}")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
