#!/usr/bin/env python3
"""The READMEs' layout blocks against the tree (issue 26: docs that cannot go stale).

Usage: check_layout.py SOURCE_DIR

A layout block lists folders and files, one per entry:
  - the top README.md's fenced block under its "## Layout" heading: an entry is the first word of a
    line that does not start with a space (an indented line goes on with the entry above), a path
    relative to the repository root; the top README.md must have one;
  - in any README.md, a Markdown table with a column named file, folder, headers or sources: an
    entry is a `code span` of those columns, a path relative to the README's folder (a `headers`
    path is below include/flashlab/, as sim/README.md says: "Headers live in include/flashlab/<stage>/").
The check fails when
  1. an entry does not exist;
  2. a folder that holds an entry (the README's own folder among them: the top one for README.md)
     has a direct subfolder that the block does not cover, neither naming it nor a path below it:
     a top-level folder left out of README.md, a folder README's subfolder left out of its table,
     or sim/src/<stage> where the block lists its siblings.
Folders are those holding a file git tracks or would track (untracked and not ignored), so build
trees and caches do not count; without git, every folder not hidden. README.md files below a
fixtures/ folder are not checked (tests/docs/fixtures/layout/ is the check's own failing case).
Prints each problem and a summary line; exit 1 when there is a problem, 0 otherwise.
"""
import os
import re
import subprocess
import sys

PATH_COLUMNS = {"file": "", "folder": "", "headers": "include/flashlab/", "sources": ""}
CODE_SPAN = re.compile(r"`([^`]+)`")
PATH_WORD = re.compile(r"^[A-Za-z0-9_.][A-Za-z0-9_./-]*$")


def tree_files(root):
    """Every file of the tree, relative to root: git's tracked and untracked-not-ignored files."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard"],
                             capture_output=True, text=True, check=True).stdout
        return [f for f in out.splitlines() if os.path.exists(os.path.join(root, f))]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for folder, dirs, names in os.walk(root):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            files += [os.path.relpath(os.path.join(folder, n), root) for n in names]
        return files


def subfolders(files):
    """{folder: its direct subfolders} over the folders holding `files` ("" is the root); hidden
    folders left out."""
    out = {}
    for f in files:
        parts = f.split("/")[:-1]
        if any(part.startswith(".") for part in parts):  # .ci/, .github/: not the project's layout
            continue
        for k in range(len(parts)):
            out.setdefault("/".join(parts[:k]), set()).add("/".join(parts[:k + 1]))
            out.setdefault("/".join(parts[:k + 1]), set())
    return out


def layout_fence(text):
    """(line number, entry) of the fenced block under a "## Layout" heading; None when there is none."""
    lines = text.split("\n")
    start = next((k for k, line in enumerate(lines) if re.match(r"^#+\s+Layout\s*$", line)), None)
    if start is None:
        return None
    fence = next((k for k in range(start + 1, len(lines)) if lines[k].startswith("```")), None)
    if fence is None:
        return None
    out = []
    for k in range(fence + 1, len(lines)):
        if lines[k].startswith("```"):
            break
        if lines[k].strip() and not lines[k][0].isspace():
            out.append((k + 1, lines[k].split()[0]))
    return out


def table_cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def layout_tables(text):
    """One list of (line number, entry) per table with a path column (PATH_COLUMNS)."""
    lines = text.split("\n")
    blocks = []
    k = 0
    while k + 1 < len(lines):
        if lines[k].startswith("|") and re.match(r"^\|[\s:|-]+\|\s*$", lines[k + 1]):
            header = table_cells(lines[k])
            columns = {i: PATH_COLUMNS[h] for i, h in enumerate(header) if h in PATH_COLUMNS}
            k += 2
            entries = []
            while k < len(lines) and lines[k].startswith("|"):
                cells = table_cells(lines[k].replace("\\|", "/"))
                for i, base in columns.items():
                    if i < len(cells):
                        entries += [(k + 1, base + s) for s in CODE_SPAN.findall(cells[i]) if PATH_WORD.match(s)]
                k += 1
            if columns:
                blocks.append(entries)
        else:
            k += 1
    return blocks


def block_problems(rel, base, entries, root, folders):
    """Problems of one block of README `rel`, whose entries are relative to `base` ("" is the root)."""
    out = []
    listed = []
    for number, entry in entries:
        path = os.path.normpath(os.path.join(base, entry)).replace(os.sep, "/")
        if not os.path.exists(os.path.join(root, path)):
            out.append(f"{rel}:{number}: `{entry}` is listed but not in the tree")
        listed.append(path)

    def covered(folder):
        return any(p == folder or p.startswith(folder + "/") for p in listed)

    holders = {base} | {os.path.dirname(p) for p in listed if p != base}
    for folder in sorted(holders):
        for sub in sorted(folders.get(folder, ())):
            if not covered(sub):
                where = "the top folder" if folder == "" else f"{folder}/"
                out.append(f"{rel}: {sub}/ (a subfolder of {where}) is missing from its layout block")
    return out


def readmes(files):
    return sorted(f for f in files if os.path.basename(f) == "README.md" and "fixtures" not in f.split("/")[:-1])


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    files = tree_files(root)
    folders = subfolders(files)
    problems, blocks = [], 0
    for rel in readmes(files):
        text = open(os.path.join(root, rel), encoding="utf-8").read()
        base = os.path.dirname(rel)
        found = layout_tables(text)
        if rel == "README.md":
            fence = layout_fence(text)
            if fence is None:
                problems.append("README.md: no fenced block under a \"## Layout\" heading")
            else:
                found.append(fence)
        for entries in found:
            problems += block_problems(rel, base, entries, root, folders)
        blocks += len(found)
    for p in problems:
        print("FAIL  " + p)
    print(f"check_layout: {blocks} layout blocks in {len(readmes(files))} READMEs, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
