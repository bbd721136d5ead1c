#!/usr/bin/env python3
"""One compact line per result of run.sh's results.jsonl (unit tests, checks, times), for the end of
the device call's output: python3 summarize.py RESULTS.jsonl"""
import json
import sys

for line in open(sys.argv[1]):
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    if "unit" in r:
        print(f"unit {r['unit']}: max {r['max_abs']} rel {r['rel_l2']} {'PASS' if r['pass'] else 'FAIL'}")
        continue
    c = r["check"]
    t = f" {r['time_ms']:.4f}ms {r['tflops']:.0f}TF" if r.get("time_ms") else ""
    print(f"{r['variant'][:11]:>11} {r['dtype']} d{r['d']} {r['mask'][:6]:>6} {r['batch']}x{r['n']}x{r['heads']} "
          f"rel {c['rel_l2']:.2e} max {c['max_abs']:.2e} L {c['lse_max_abs']:.1e} "
          f"{'ok' if c['pass'] else 'FAIL'}{t}")
