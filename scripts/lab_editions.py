#!/usr/bin/env python3
"""Writes the student and instructor editions of the notebook labs (docs/labs/*.ipynb).

Usage: /usr/bin/python3 scripts/lab_editions.py --out DIR [NOTEBOOK.ipynb ...]   (default: docs/labs/*.ipynb)

One source per lab: the committed notebook holds the answers (so that CI runs it clean) and, in the
metadata of its cell tagged `exercise`, the skeleton a student starts from (`student`: the names to
define, `...` where an answer goes). This writes

  DIR/instructor/NAME.ipynb   the notebook as committed: answers in place
  DIR/student/NAME.ipynb      each exercise cell's source replaced by its skeleton; cells tagged
                              `instructor` (a discussion that gives the answer away) dropped; the
                              metadata `student` and `wrong_answer` removed

A student runs the notebook top to bottom; the cell tagged `check` after the exercise says what is
wrong ("you say ..., flashlab counts ...") until the answer is right. ctest's labs.editions writes
both into the build tree, and notebook.NAME.student runs each student edition: its check must fail
(tests/python/run_notebook.py --student). Exit 1, writing nothing, when a notebook has no exercise,
an exercise has no skeleton, or its skeleton is the answer itself.
"""
import argparse
import copy
import glob
import os
import sys

try:
    import nbformat
except ImportError:
    sys.exit("lab_editions: %s cannot import nbformat: run it with the Python that runs the notebooks "
             "(/usr/bin/python3 after scripts/setup.sh, which installs python3-nbformat)" % sys.executable)


def tags(cell):
    return cell.get("metadata", {}).get("tags", [])


def student_edition(nb, path):
    """The student's copy of nb; raises ValueError naming the cell when an exercise has no skeleton."""
    if not any("exercise" in tags(c) for c in nb.cells):
        raise ValueError("%s: no cell tagged `exercise`: a lab has one, with its skeleton in metadata `student`" % path)
    out = copy.deepcopy(nb)
    cells = []
    for k, cell in enumerate(out.cells):
        if "instructor" in tags(cell):
            continue
        meta = cell.get("metadata", {})
        if "exercise" in tags(cell):
            skeleton = meta.get("student")
            if not skeleton:
                raise ValueError("%s: the exercise in cell %d has no metadata `student` (the skeleton)" % (path, k + 1))
            if skeleton.strip() == cell.source.strip():
                raise ValueError("%s: the exercise in cell %d: its skeleton is the answer" % (path, k + 1))
            cell.source = skeleton
        meta.pop("student", None)
        meta.pop("wrong_answer", None)
        cells.append(cell)
    out.cells = cells
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="folder for instructor/ and student/")
    ap.add_argument("notebooks", nargs="*")
    args = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    paths = args.notebooks or sorted(glob.glob(os.path.join(here, "..", "docs", "labs", "*.ipynb")))
    editions = []
    try:
        for path in paths:
            nb = nbformat.read(path, as_version=4)
            editions.append((os.path.basename(path), nb, student_edition(nb, path)))
    except ValueError as e:
        print("lab_editions: %s" % e, file=sys.stderr)
        return 1
    for kind in ("instructor", "student"):
        os.makedirs(os.path.join(args.out, kind), exist_ok=True)
    for name, instructor, student in editions:
        nbformat.write(instructor, os.path.join(args.out, "instructor", name))
        nbformat.write(student, os.path.join(args.out, "student", name))
    print("lab_editions: %d labs, instructor and student editions in %s" % (len(editions), args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
