#!/usr/bin/env python3
"""Runs one lab script and checks the figures its questions ask about (ctest's lab_NN_* tests).

Usage: check_lab.py --flashlab PATH --source-dir DIR [--script PATH] LAB

LAB is the number of a lab with a script (docs/labs/NN_*.sh: 01 .. 04, 06); tests/labs/labNN.py
names its script and checks its output against values derived here, not by flashlab: closed
forms of docs/model.md's counting rules (closed_forms.py), or JSON fields named explicitly. A
column, unit or default that moves under a lab breaks its test. --script runs another script in
its place (tests/labs/fixtures/: a lab that cuts its CSV by position must fail). Exit 0 when the
script exits 0 and every figure holds.
"""
import argparse
import importlib
import os
import sys

from lab_output import Checks, run_lab


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("lab")
    ap.add_argument("--flashlab", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--script")
    args = ap.parse_args()
    lab = importlib.import_module("lab" + args.lab)
    script = args.script or os.path.join(args.source_dir, lab.SCRIPT)
    status, out = run_lab(script, os.path.abspath(args.flashlab), args.source_dir)
    checks = Checks()
    checks.holds("%s exits 0" % script, status == 0, "exit %d; its output:\n%s" % (status, out.text[-3000:]))
    lab.check(checks, out, args.source_dir)
    for failure in checks.failures:
        print("FAIL", failure)
    print("%s: %d figures hold, %d fail" % (script, checks.passed, len(checks.failures)))
    return 1 if checks.failures else 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.exit(main())
