"""V3's validation run beyond the speed table and the bytes (issue 27): compute-sanitizer and the events /
timeline hooks' results — each judged from the raw data here, each a page section — and the selftest
cases of every check of the run (v3_kernel_bytes.py's included). Used by scripts/check/v3_kernel_data.py
(its problems, page and selftest).

Data (tests/data/gpu_v3/, from scripts/gpu/v3_kernel/ncu_run.sh):
- v3_sanitizer.json (sanitize.py): per run the tool, the program's arguments, exit status, the tool's
  SUMMARY lines and the program's JSON line. A run passes when it exited 0, its summary says 0 errors
  (memcheck / synccheck "ERROR SUMMARY: 0 errors"; racecheck "RACECHECK SUMMARY: n hazards displayed
  (0 errors, w warnings)": warnings listed, not failed) and its check passed. Every run of sanitize.RUNS
  must be there.
- v3_events.jsonl (events_check.py) and v3_timeline.json (timeline_compare.py): shown when present;
  an events line passes when v3 exited 0, its check passed and no agent's events differ.
- v3_timelines.jsonl (ncu_run.sh PARTS timelines: timeline_compare.py on the ablation's variants):
  shown when present (timelines_section), no verdict; lines of another kernel's sources are named.
"""

import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[0] / "gpu" / "v3_kernel"))
sys.path.insert(0, str(HERE.parents[0] / "gpu"))
import v3_kernel_bytes as bytes_  # noqa: E402
from sanitize import RUNS as SANITIZER_RUNS  # noqa: E402


def sanitizer_verdict(r):
    """(errors, warnings, why) of one sanitizer run, from its raw text; why is None when it passes."""
    text = " ".join(r["summary"])
    if r["tool"] == "racecheck":
        m = re.search(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)", text)
        errors, warnings = (int(m.group(2)), int(m.group(3))) if m else (None, None)
    else:
        m = re.search(r"ERROR SUMMARY: (\d+) errors?", text)
        errors, warnings = (int(m.group(1)), 0) if m else (None, None)
    run_ok = bool(r["run"]) and r["run"]["check"]["pass"] and r["run"]["check"]["repeat_identical"]
    why = None
    if errors is None:
        why = f"no summary line in the tool's output (exit {r['exit']})"
    elif errors or r["exit"] != 0:
        why = f"{errors} errors, exit {r['exit']}"
    elif not run_ok:
        why = "the program's check failed"
    return errors, warnings, why


def sanitizer_key(r):
    return r["tool"], (r["variant"], r["dtype"], r["d"], r["mask"], r["n"])


def sanitizer_problems(doc, sha):
    """What makes v3_sanitizer.json unusable: absent, another kernel's, a run missing, a run without the
    tool's summary line or whose program check failed. What the tools found is sanitizer_findings'."""
    if doc is None:
        return ["no v3_sanitizer.json: run ncu_run.sh with PARTS containing sanitizer"]
    out = []
    if doc["meta"]["v3_sources_sha256"] != sha:
        out.append(f"v3_sanitizer.json: sources {doc['meta']['v3_sources_sha256'][:12]}, not v3_ncu.json's {sha[:12]}")
    have = {sanitizer_key(r) for r in doc["rows"]}
    if set(SANITIZER_RUNS) - have:
        out.append(f"sanitizer runs missing: {sorted(set(SANITIZER_RUNS) - have)}")
    for r in doc["rows"]:
        errors, _, why = sanitizer_verdict(r)
        if why and (errors is None or why == "the program's check failed"):
            out.append(f"{r['tool']} {' '.join(r['args'])}: {why}")
    return out


def sanitizer_findings(doc):
    """Every run in which the tool reported errors (issue 27 item 4: memcheck and racecheck clean)."""
    if doc is None:
        return []  # sanitizer_problems reports the missing file
    out = []
    for r in doc["rows"]:
        errors, _, why = sanitizer_verdict(r)
        if why and errors is not None and why != "the program's check failed":
            out.append(f"{r['tool']} {' '.join(r['args'])}: {why}")
    return out


def events_name(e):
    c = e["config"]
    return f"{c['variant']} {c['dtype']} d {c['d']} {c['mask']} {c['batch']}x{c['n']}x{c['heads']}"


def events_verdict(e):
    """None when an events_check.py line passes: `v3 trace` exited 0 with its check passed, the simulator
    traced the same config, and no (launch, block, step, agent) group's events differ; else why."""
    check = ((e.get("v3") or {}).get("check") or {})
    if e.get("v3_exit") != 0 or not e.get("v3"):
        return f"v3 trace exit {e.get('v3_exit')}: {e.get('v3_stderr', '')[-120:]}"
    if check and not check.get("pass"):
        return "the traced run's check failed"
    if e.get("sim_exit") != 0 or "per_agent" not in e:
        return f"flashlab trace exit {e.get('sim_exit')}"
    pa = e["per_agent"]
    if pa["events_differing"] or pa["groups_differing"]:
        return (f"{pa['events_differing']} events differ in {pa['groups_differing']} of {pa['groups']} groups "
                f"(first: {pa.get('first_mismatch')})")
    return None


def events_problems(lines):
    if lines is None:
        return []
    return [f"events {events_name(e)}: {events_verdict(e)}" for e in lines if events_verdict(e)]


def sanitizer_section(doc):
    out = ["## compute-sanitizer\n"]
    if doc is None:
        return out + ["Not in this data set (ncu_run.sh PARTS sanitizer).", ""]
    m = doc["meta"]
    out += [f"{m['sanitizer']}; `sanitize.py` ({len(doc['rows'])} runs): each `compute-sanitizer --tool T "
            "--error-exitcode 9 v3 run VARIANT DTYPE D MASK 1 N 2 --seed 7` (the checked launch and its repeat, O and "
            "L against float64 on every row). Verdict recomputed here from the tool's summary line.\n",
            "| tool | variant | dtype | d | mask | N | exit | summary (raw) | errors | warnings | check | verdict |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in doc["rows"]:
        e, w, why = sanitizer_verdict(r)
        summary = "; ".join(s.replace("=========", "").strip() for s in r["summary"]) or "-"
        out.append(f"| {r['tool']} | {r['variant']} | {r['dtype']} | {r['d']} | {r['mask']} | {r['n']} | {r['exit']} | "
                   f"{summary} | {e} | {w} | {(r['run'] or {}).get('check', {}).get('pass')} | {why or 'pass'} |")
    return out + [""]


def events_section(lines, timeline):
    out = ["## Events and timeline: the instrumented kernel against the simulator\n"]
    if lines is None:
        out.append("Events: not in this data set (`events_check.py`, ncu_run.sh PARTS hooks).\n")
    else:
        out += [f"`events_check.py` (v3_events.jsonl): {len(lines)} configs, each `v3 trace` (the instrumented kernel,",
                "O and L checked against float64) against `flashlab trace` with the flags the run printed (the same",
                "variant, tile and shape). Verdict: per (launch, block, step, agent), the events in program order",
                "equal; `flashlab diff` of the whole stream (the GPU's concurrent agents merged by a convention) shown",
                "beside it.\n",
                "| config | GPU events | simulator events | groups | groups differing | `flashlab diff` exit | verdict |",
                "|---|---|---|---|---|---|---|"]
        for e in lines:
            pa = e.get("per_agent") or {}
            out.append(f"| {events_name(e)} | {e.get('gpu_events', '-')} | {e.get('sim_events', '-')} | "
                       f"{pa.get('groups', '-')} | {pa.get('groups_differing', '-')} | {e.get('diff_exit', '-')} | "
                       f"{'equal' if events_verdict(e) is None else 'differ'} |")
        out.append("")
    if timeline is None:
        out.append("Timeline: not in this data set (`timeline_compare.py`, ncu_run.sh PARTS hooks).")
        return out + [""]
    m, pr = timeline["measured"], timeline["predicted"]
    flags = (timeline.get("v3") or {}).get("sim_flags", "-")
    out += [f"Timeline (`timeline_compare.py`, v3_timeline.json): `flashlab timeline {flags}` (SM {pr['sm']},",
            f"{pr['time_s'] * 1e6:.1f} us, {pr['tiles']} tiles) against %globaltimer stamps of {m['ctas']} CTAs (span",
            f"median {m['span_ns_median'] / 1e3:.1f} us): each agent's time per category as a fraction of the CTA's",
            "span (median over the CTAs, and the longest CTA), beside the timeline's share of its time. Not a verdict:",
            "the model's figures for tests/sim/time.\n",
            "| agent | category | measured (median CTA) | measured (longest CTA) | timeline |", "|---|---|---|---|---|"]
    for x in timeline["rows"]:
        lg, tl = x.get("measured_longest_cta"), x.get("timeline")
        out.append(f"| {x['agent']} | {x['category']} | {x['measured_median']:.3f} | "
                   f"{'-' if lg is None else f'{lg:.3f}'} | {'-' if tl is None else f'{tl:.3f}'} |")
    return out + [""]


# the consumer warpgroups' categories the timelines table shows: (timeline_compare.py's name, the
# timeline's interval name, or None where the timeline has none)
TIMELINE_CATEGORIES = [("wait_full", "wait-full"), ("wait_mma", "wait-mma"), ("softmax", "softmax"),
                       ("issue", None), ("pp_wait", None), ("unstamped", None)]


def consumer_fractions(line):
    """{category: (measured, timeline)} of one timeline_compare.py record, each the mean over its
    consumer warpgroups (measured: the median CTA's fraction of its span; timeline: None where the
    timeline has no such interval)."""
    out = {}
    for cat, _ in TIMELINE_CATEGORIES:
        rows = [x for x in line["rows"] if x["agent"].startswith("consumer") and x["category"] == cat]
        tl = [x["timeline"] for x in rows if x.get("timeline") is not None]
        out[cat] = (sum(x["measured_median"] for x in rows) / len(rows) if rows else None,
                    sum(tl) / len(tl) if tl else None)
    return out


def timelines_section(lines, sha):
    """The page's table of v3_timelines.jsonl: per config the measured span and the timeline's time, and
    the consumer warpgroups' time by category, measured / timeline. No verdict: the data behind the
    time model's next rule (docs/model.md "V3")."""
    out = ["### The timeline on the ablation's variants\n"]
    if lines is None:
        return out + ["Not in this data set (ncu_run.sh PARTS timelines -> v3_timelines.jsonl).", ""]
    other = [x["config"] for x in lines if x.get("v3_sources_sha256") != sha]
    out += ["`timeline_compare.py` on each config (v3_timelines.jsonl, ncu_run.sh PARTS timelines): the consumer",
            "warpgroups' time by category as a fraction of the CTA's span, the mean over the warpgroups of the",
            "median CTA's, measured / `flashlab timeline`'s (one figure: the timeline has no such interval).",
            "No verdict.\n",
            "| config | measured span, us (median CTA) | timeline, us (one SM) | " +
            " | ".join(c for c, _ in TIMELINE_CATEGORIES) + " |",
            "|---|---|---|" + "---|" * len(TIMELINE_CATEGORIES)]
    fmt = lambda v: "-" if v is None else f"{v:.3f}"  # noqa: E731
    for x in lines:
        f = consumer_fractions(x)
        cells = [f"{fmt(f[c][0])} / {fmt(f[c][1])}" if name else fmt(f[c][0]) for c, name in TIMELINE_CATEGORIES]
        out.append(f"| {x['config']} | {x['measured']['span_ns_median'] / 1e3:.1f} | "
                   f"{x['predicted']['time_s'] * 1e6:.1f} | " + " | ".join(cells) + " |")
    if other:
        out += ["", f"Of other kernel sources than this page's: {', '.join(other)}."]
    return out + [""]


def _sanitizer_doc(sha):
    """A made-up v3_sanitizer.json in which every run of sanitize.RUNS passes."""
    rows = []
    for tool, (v, dt, d, m, n) in SANITIZER_RUNS:
        summary = ("========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)" if tool == "racecheck"
                   else "========= ERROR SUMMARY: 0 errors")
        rows.append({"tool": tool, "variant": v, "dtype": dt, "d": d, "mask": m, "batch": 1, "n": n, "heads": 2,
                     "args": ["run", v, dt, str(d), m, "1", str(n), "2"], "exit": 0, "summary": [summary],
                     "run": {"check": {"pass": True, "repeat_identical": True}}})
    return {"meta": {"v3_sources_sha256": sha}, "rows": rows}


def selftest_cases(cli):
    """(name, problems found) for made-up data, independent of the committed files: the clean made-up sets
    must give no problem (so the checks can pass), each broken one must give one."""
    import copy
    sha, cases = "a" * 64, []
    clean = _sanitizer_doc(sha)
    cases.append(("clean sanitizer runs give no problem", ["(none)"] if not sanitizer_problems(clean, sha) + sanitizer_findings(clean) else []))
    bad = copy.deepcopy(clean)
    bad["rows"][0]["summary"] = ["========= ERROR SUMMARY: 2 errors"]
    cases.append(("memcheck reporting 2 errors", sanitizer_findings(bad)))
    bad = copy.deepcopy(clean)
    bad["rows"][1]["summary"] = []
    cases.append(("a racecheck run without its summary line", sanitizer_problems(bad, sha)))
    bad = copy.deepcopy(clean)
    bad["rows"][1]["summary"] = ["========= RACECHECK SUMMARY: 3 hazards displayed (1 errors, 2 warnings)"]
    cases.append(("racecheck reporting a hazard error", sanitizer_findings(bad)))
    bad = copy.deepcopy(clean)
    del bad["rows"][2]
    cases.append(("a sanitizer run missing", sanitizer_problems(bad, sha)))
    cases += bytes_.selftest_cases(cli, sha)
    ev = {"config": {"variant": "fa3", "dtype": "fp16", "d": 64, "mask": "none", "batch": 1, "n": 1000, "heads": 2},
          "v3_exit": 0, "v3": {"check": {"pass": True}}, "sim_exit": 0,
          "per_agent": {"groups": 4, "groups_differing": 0, "events_differing": 0}}
    cases.append(("equal events give no problem", ["(none)"] if not events_problems([ev]) else []))
    bad = copy.deepcopy(ev)
    bad["per_agent"] |= {"groups_differing": 1, "events_differing": 3}
    cases.append(("an agent's events differing", events_problems([bad])))
    bad = copy.deepcopy(ev)
    bad["v3_exit"] = 124
    cases.append(("v3 trace timed out", events_problems([bad])))
    return cases
