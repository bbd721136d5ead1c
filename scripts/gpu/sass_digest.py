#!/usr/bin/env python3
"""Per-kernel instruction counts from `cuobjdump -sass` output: how many local-memory spill
instructions (LDL, STL) each kernel has, beside its tensor-core (HMMA), special-function (MUFU)
and barrier instructions, so that "without spills" is read from the machine code rather than from
ptxas's summary alone.

    cuobjdump -sass OBJ > k.sass
    python3 scripts/gpu/sass_digest.py k.sass [--match SUBSTR ...] [--dump DIR]

Prints one line per kernel (filtered by --match: every substring must occur in the mangled name);
--dump writes each matching kernel's SASS to DIR/<index>.sass.
"""

import argparse
import collections
import pathlib
import re

KINDS = ("LDL", "STL", "HMMA", "MUFU.EX2", "LDSM", "LDGSTS", "BAR.SYNC", "SHFL")


def kernels(text):
    """(name, [instruction lines]) per function of a cuobjdump -sass listing."""
    name, body = None, []
    for line in text.splitlines():
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            if name:
                yield name, body
            name, body = m.group(1), []
        elif name and re.match(r"\s*/\*[0-9a-f]{4,}\*/\s+\S", line):
            body.append(line)
    if name:
        yield name, body


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sass", type=pathlib.Path)
    ap.add_argument("--match", nargs="*", default=[])
    ap.add_argument("--dump", type=pathlib.Path)
    a = ap.parse_args()
    if a.dump:
        a.dump.mkdir(parents=True, exist_ok=True)
    print("instructions " + " ".join(KINDS) + " kernel")
    for k, (name, body) in enumerate(kernels(a.sass.read_text())):
        if not all(s in name for s in a.match):
            continue
        ops = collections.Counter()
        for line in body:
            op = re.sub(r"^\s*/\*[0-9a-f]+\*/\s+(@!?U?P\w+\s+)?", "", line).split(" ")[0].rstrip(";")
            for kind in KINDS:
                if op.startswith(kind):
                    ops[kind] += 1
        print(len(body), " ".join(str(ops[kind]) for kind in KINDS), name)
        if a.dump:
            (a.dump / f"{k}.sass").write_text(name + "\n" + "\n".join(body) + "\n")


if __name__ == "__main__":
    main()
