#!/usr/bin/env python3
"""Fails when a doctest case's name would keep it from running under ctest.

    python3 scripts/check/test_names.py             # the check CI runs
    python3 scripts/check/test_names.py --selftest  # shows it catching a bad name

doctest_discover_tests (CMake's doctest module) registers each TEST_CASE by name and ctest runs it
with `-tc=NAME`; a name holding ';' is split into a CMake list there, the filter then matches no
case, and ctest reports a pass for a test that never ran (23 cases did so until issue 26). A ','
in a name is read by doctest as a list of filters, and '*', '?', '[' and ']' as wildcards; a
doctest filter matches those cases too, so they still run, but ';' never does. Exit 0 when no case
under tests/ has a ';' in its name, 1 with each offender (file:line: name) otherwise.
"""

import re
import sys
import tempfile
from pathlib import Path

import verdict

ROOT = Path(__file__).resolve().parents[2]
CASE = re.compile(r'\b(?:TEST_CASE|SUBCASE|TEST_CASE_FIXTURE\(\s*\w+\s*,)\s*\(?\s*"((?:[^"\\]|\\.)*)"')


def offenders(tests):
    out = []
    for path in sorted(tests.rglob("*.cpp")):
        text = path.read_text(errors="replace")
        for m in CASE.finditer(text):
            if ";" in m.group(1):
                line = text.count("\n", 0, m.start()) + 1
                out.append(f"{path.relative_to(tests.parent)}:{line}: {m.group(1)}")
    return out


def selftest():
    with tempfile.TemporaryDirectory() as tmp:
        tests = Path(tmp) / "tests"
        tests.mkdir()
        (tests / "good_test.cpp").write_text('TEST_CASE("a name, with a comma") {}\n')
        if offenders(tests):
            print("selftest: a good name was reported")
            return 1
        (tests / "bad_test.cpp").write_text('TEST_CASE("never runs; under ctest") {}\n')
        return verdict.caught(offenders(tests), ["tests/bad_test.cpp:1: never runs; under ctest"], "a name with ';'")


def main():
    if "--selftest" in sys.argv:
        return selftest()
    found = [f"';' in a test case name (ctest would run nothing for it): {f}" for f in offenders(ROOT / "tests")]
    return verdict.verdict("test_names", found, "no test case name holds ';'")


if __name__ == "__main__":
    sys.exit(main())
