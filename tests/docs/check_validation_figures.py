#!/usr/bin/env python3
"""The README quotes the H200 validation's summary (docs/validation/h200.md, written by
scripts/gpu/validate.py): the number of configurations, those whose Nsight Compute bytes are within
1% of the simulator's, and the rest. This check reads the report's summary lines and requires the
README's sentence to quote the same counts, so a re-run of the validation that changes them fails
here until the README follows (issue 24: it said 52 and 37 where the report said 55 and 40).

Usage: check_validation_figures.py SOURCE_DIR
"""
import os
import re
import sys


def report_counts(text):
    configs = int(re.search(r"^- configurations: (\d+) ", text, re.M).group(1))
    within, of = map(int, re.search(r"ncu global ld/st bytes within 1% of the simulator in (\d+)/(\d+);", text).groups())
    model, of_model = map(int, re.search(r"equal to the kernels' sector-exact byte model in (\d+)/(\d+);", text).groups())
    events, of_events = map(int, re.search(r"streams equal the simulator's in (\d+)/(\d+)", text).groups())
    if not (of == of_model == of_events == configs and model == events == configs):
        sys.exit("docs/validation/h200.md: its summary's counts disagree with each other (%d configurations)" % configs)
    return configs, within


def main():
    source = sys.argv[1]
    report = open(os.path.join(source, "docs/validation/h200.md"), encoding="utf-8").read()
    readme = " ".join(open(os.path.join(source, "README.md"), encoding="utf-8").read().split())
    configs, within = report_counts(report)
    want = [
        "event streams equal the simulator's on all %d configurations" % configs,
        "within 1%% of the simulator's on %d of the %d" % (within, configs),
        "byte model on all %d; the other %d are explained" % (configs, configs - within),
    ]
    missing = [w for w in want if w not in readme]
    for w in missing:
        print("README.md does not say %r (docs/validation/h200.md: %d configurations, %d within 1%%)" % (w, configs, within))
    print("%d of %d quoted figures match docs/validation/h200.md" % (len(want) - len(missing), len(want)))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
