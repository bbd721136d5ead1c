"""verdict.py — the ending every check in scripts/check shares: each problem on its own line under the check's
name, or one line saying what holds; the exit status CI reads (0: it holds, 1: it does not)."""


def verdict(name, found, holds):
    """Prints `found` (a list of problems, each a line) prefixed with `name: `, or `name: holds` when
    there is none; returns the exit status (1 when anything was found)."""
    for p in found:
        print(f"{name}: {p}")
    if not found:
        print(f"{name}: {holds}")
    return 1 if found else 0


def caught(found, expected, what):
    """A --selftest's ending: 0 when the check, run on a planted offender, found exactly `expected` (a list of
    lines), else 1; prints which (`what` names the offender)."""
    if found != expected:
        print(f"selftest: {what} was not reported as {expected}: {found}")
        return 1
    print("selftest: reported", found[0])
    return 0
