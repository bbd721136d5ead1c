#!/usr/bin/env python3
"""Fails when scripts/gpu/README.md no longer maps the folder it describes (issue 26).

    python3 scripts/check/gpu_scripts_readme.py            # the check CI runs
    python3 scripts/check/gpu_scripts_readme.py --selftest # shows the check failing, then passing

1. Every entry at the top of scripts/gpu/ (files and folders; not README.md itself, __pycache__ or
   hidden names) must be named on the page: a new script needs its line there.
2. Every script the page names in code (a `...` span or a fenced block) must exist: a word of the
   form scripts/gpu/X (anything), a path with a folder ending in .py, .sh, .cu or .cpp (relative to
   the repository root), or a bare file name with one of those endings (in scripts/gpu/). Words
   holding shell syntax (*, ?, {, $, <, >, [) and absolute paths are not file names and are skipped.
Exit 0 when both hold, 1 listing what is missing otherwise.
"""

import re
import shutil
import sys
import tempfile
from pathlib import Path

import verdict

ROOT = Path(__file__).resolve().parents[2]
GPU = ROOT / "scripts" / "gpu"
EXTS = (".py", ".sh", ".cu", ".cpp")
SKIP_ENTRIES = {"README.md", "__pycache__"}


def code_texts(text):
    """The contents of the fenced blocks and of the inline code spans of a Markdown text."""
    out, rest = [], []
    fence = None
    for line in text.split("\n"):
        m = re.match(r"\s*(```+|~~~+)", line)
        if fence is None and m:
            fence = m.group(1)
        elif fence is not None and line.strip().startswith(fence):
            fence = None
        elif fence is not None:
            out.append(line)
        else:
            rest.append(line)
    out += re.findall(r"`([^`\n]+)`", "\n".join(rest))
    return out


def named_paths(text):
    """(word, path relative to the root or None, bare name in scripts/gpu or None) per file word in code."""
    words = set()
    for span in code_texts(text):
        for w in span.split():
            w = w.strip("()[],;:'\"")
            if not w or w.startswith("/") or re.search(r"[*?{}$<>\[\]]", w):
                continue
            if w.startswith("scripts/gpu/") or w.endswith(EXTS):
                words.add(w)
    return sorted(words)


def mentioned(text, name):
    """Whether NAME occurs in TEXT as a whole name (time_dataset.py is not named by time_dataset.pyc
    nor validate.py by backward_validate.py; scripts/gpu/validate.py names it)."""
    return re.search(r"(?<![A-Za-z0-9_.\-])" + re.escape(name) + r"(?![A-Za-z0-9_])", text) is not None


def problems(readme_text, gpu_dir, root):
    out = []
    for entry in sorted(gpu_dir.iterdir()):
        if entry.name in SKIP_ENTRIES or entry.name.startswith("."):
            continue
        if not mentioned(readme_text, entry.name):
            kind = "folder" if entry.is_dir() else "file"
            out.append(f"scripts/gpu/{entry.name}: {kind} not named in scripts/gpu/README.md (add its entry)")
    for w in named_paths(readme_text):
        if w.startswith("scripts/gpu/"):
            target = gpu_dir / w[len("scripts/gpu/"):]
        elif "/" in w:
            target = root / w
        else:
            target = gpu_dir / w
        if not target.exists():
            out.append(f"scripts/gpu/README.md names `{w}`, which does not exist")
    return out


def selftest():
    """The page as it is passes; a copy of scripts/gpu/ with a new script, the page with one entry's
    name removed, and the page naming a script that is not there each fail."""
    text = (GPU / "README.md").read_text()
    if problems(text, GPU, ROOT):
        print("selftest: the unchanged page was reported")
        return 1
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "gpu"
        shutil.copytree(GPU, copy, ignore=shutil.ignore_patterns("__pycache__"))
        (copy / "new_tool.py").write_text('"""A script with no line on the page."""\n')
        cases.append(("a new script in a copy of scripts/gpu/", problems(text, copy, ROOT), "new_tool.py: file not named"))
    gone = text.replace("scripts/gpu/sass_digest.py", "cuobjdump").replace("sass_digest.py", "the digest")
    cases.append(("the page without sass_digest.py", problems(gone, GPU, ROOT), "sass_digest.py: file not named"))
    ghost = text + "\n- `python3 scripts/gpu/no_such_driver.py --out OUT`\n"
    cases.append(("the page naming scripts/gpu/no_such_driver.py", problems(ghost, GPU, ROOT), "no_such_driver.py`, which does not exist"))
    ok = True
    for what, found, want in cases:
        hit = [p for p in found if want in p]
        print(f"selftest: {what}: " + ("; ".join(found) if found else "nothing reported"))
        ok = ok and bool(hit) and len(found) == 1
    print("selftest: " + ("each change is reported, the page as it is passes" if ok else "FAILED"))
    return 0 if ok else 1


def main():
    if "--selftest" in sys.argv:
        return selftest()
    readme = GPU / "README.md"
    if not readme.is_file():
        print("gpu_scripts_readme: scripts/gpu/README.md is missing")
        return 1
    n = sum(1 for e in GPU.iterdir() if e.name not in SKIP_ENTRIES and not e.name.startswith("."))
    return verdict.verdict("gpu_scripts_readme", problems(readme.read_text(), GPU, ROOT),
                          f"scripts/gpu/README.md names all {n} entries of scripts/gpu/, and every script it names exists")


if __name__ == "__main__":
    sys.exit(main())
