#!/usr/bin/env python3
"""Fails when a test compares with doctest's Approx directly instead of through tests/common/approx.hpp.

    python3 scripts/check/test_approx.py             # the check CI runs
    python3 scripts/check/test_approx.py --selftest  # shows it catching a bare Approx

doctest::Approx(v).epsilon(e) accepts a when |a - v| < e (1 + max(|a|, |v|)) (doctest.h: its scale is
1 by default): twice the tolerance written for values near 1, and an absolute one for small values,
so that a time in seconds compared with it passes almost anything (a backward tile's 7.1 us against
10.3 us did, until this check). flashlab::testing::approx(v) (tests/common/approx.hpp) makes e relative.
Exit 0 when no file under tests/ but approx.hpp names doctest::Approx, 1 with each offender
(file:line) otherwise.
"""

import re
import sys
import tempfile
from pathlib import Path

import verdict

ROOT = Path(__file__).resolve().parents[2]
BARE = re.compile(r"\bdoctest\s*::\s*Approx\b")
HELPER = "common/approx.hpp"


def offenders(tests):
    out = []
    for path in sorted(p for p in tests.rglob("*") if p.suffix in (".cpp", ".hpp", ".h")):
        if path.relative_to(tests).as_posix() == HELPER:
            continue
        text = path.read_text(errors="replace")
        for m in BARE.finditer(text):
            out.append(f"{path.relative_to(tests.parent)}:{text.count(chr(10), 0, m.start()) + 1}")
    return out


def selftest():
    with tempfile.TemporaryDirectory() as tmp:
        tests = Path(tmp) / "tests"
        (tests / "common").mkdir(parents=True)
        (tests / "common" / "approx.hpp").write_text("return doctest::Approx(v).scale(1e-300);\n")
        (tests / "good_test.cpp").write_text("CHECK(x == flashlab::testing::approx(1.0).epsilon(0.1));\n")
        if offenders(tests):
            print("selftest: the helper or a good test was reported:", offenders(tests))
            return 1
        (tests / "bad_test.cpp").write_text("\nCHECK(t == doctest::Approx(1e-4));\n")
        return verdict.caught(offenders(tests), ["tests/bad_test.cpp:2"], "a bare doctest::Approx")


def main():
    if "--selftest" in sys.argv:
        return selftest()
    found = [f"doctest::Approx used directly (its tolerance is absolute near 0: use flashlab::testing::approx, "
             f"tests/common/approx.hpp): {f}" for f in offenders(ROOT / "tests")]
    return verdict.verdict("test_approx", found, "every test compares through tests/common/approx.hpp")


if __name__ == "__main__":
    sys.exit(main())
