#!/usr/bin/env python3
"""Executes notebook labs headless, as ctest's notebook.* tests do (tests/python/CMakeLists.txt).

Usage: run_notebook.py [--wrong-answers] [--timeout SECONDS] NOTEBOOK.ipynb...

Each notebook must be committed clean: no code cell with outputs or an execution count (clear
them with `jupyter nbconvert --clear-output --inplace NOTEBOOK.ipynb`); a notebook with any fails
before it is run. It is then executed top to bottom by nbclient in the kernel `python3` (the
interpreter's own ipykernel), in a fresh temporary directory, with this process's environment
(PYTHONPATH: the built module, relative entries made absolute; MPLBACKEND removed, so that the
kernel draws with matplotlib's inline backend as Jupyter does); any error in any cell fails it, and
so does a run that draws no plot (each lab has one). Nothing is written back to the notebook.

A lab has an exercise: a code cell tagged `exercise` that the student fills in (shipped
answered), followed by a cell tagged `check` whose asserts hold the answer to values flashlab
computes. The exercise cell's metadata `wrong_answer` is a line of Python that spoils the answer.
With --wrong-answers, each exercise in turn gets its wrong answer appended and the notebook must
then fail in the check cell after it, with an AssertionError: the check can fail. With --student,
the notebook is a student edition (scripts/lab_editions.py: the exercise blank) and must fail in its
check cell, which tells the student what is wrong.
"""
import argparse
import os
import sys
import tempfile

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError


def dirty_cells(nb):
    """The numbers (1-based) of the code cells that carry outputs or an execution count."""
    return [k + 1 for k, c in enumerate(nb.cells)
            if c.cell_type == "code" and (c.get("outputs") or c.get("execution_count") is not None)]


def tags(cell):
    return cell.get("metadata", {}).get("tags", [])


def execute(nb, timeout):
    """Runs every cell; returns None, or (cell number, ename, evalue) of the first error."""
    with tempfile.TemporaryDirectory(prefix="flashlab-notebook-") as tmp:
        client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                resources={"metadata": {"path": tmp}})
        try:
            client.execute()
        except CellExecutionError as e:
            for k, c in enumerate(nb.cells):
                for out in c.get("outputs", []):
                    if out.get("output_type") == "error":
                        return k + 1, out["ename"], out["evalue"]
            return 0, e.ename, e.evalue
    return None


def plots(nb):
    """The PNG images among the executed notebook's outputs."""
    return sum(1 for c in nb.cells for out in c.get("outputs", []) if "image/png" in out.get("data", {}))


def run_clean(path, nb, timeout):
    failed = execute(nb, timeout)
    if failed:
        print("%s: cell %d raised %s: %s" % (path, *failed))
        return False
    if plots(nb) == 0:
        print("%s: ran without an error but drew no plot (a lab shows its answer as a figure)" % path)
        return False
    print("%s: %d cells ran without an error, %d plot(s)" % (path, len(nb.cells), plots(nb)))
    return True


def run_wrong_answers(path, nb, timeout):
    exercises = [k for k, c in enumerate(nb.cells) if "exercise" in tags(c)]
    if not exercises:
        print("%s: no cell tagged 'exercise'" % path)
        return False
    ok = True
    for k in exercises:
        wrong = nb.cells[k].get("metadata", {}).get("wrong_answer")
        checks = [j for j in range(k + 1, len(nb.cells)) if "check" in tags(nb.cells[j])]
        if not wrong or not checks:
            print("%s: the exercise in cell %d needs metadata 'wrong_answer' and a cell tagged 'check' after it"
                  % (path, k + 1))
            ok = False
            continue
        spoiled = nbformat.reads(nbformat.writes(nb), as_version=4)
        spoiled.cells[k].source += "\n" + wrong
        failed = execute(spoiled, timeout)
        if failed and failed[0] == checks[0] + 1 and failed[1] == "AssertionError":
            print("%s: with the wrong answer `%s`, the check in cell %d fails: AssertionError: %s"
                  % (path, wrong, failed[0], failed[2]))
        else:
            print("%s: with the wrong answer `%s` the check in cell %d should fail with an AssertionError; got %s"
                  % (path, wrong, checks[0] + 1, "no error" if not failed else "cell %d %s: %s" % failed))
            ok = False
    return ok


def run_student(path, nb, timeout):
    """A student edition (scripts/lab_editions.py): the cells before its check run, and the check
    fails on the skeleton's blanks — the student sees what is wrong there, not a crash earlier."""
    checks = [k for k, c in enumerate(nb.cells) if "check" in tags(c)]
    if not checks:
        print("%s: no cell tagged 'check'" % path)
        return False
    if any("exercise" in tags(c) and "wrong_answer" in c.get("metadata", {}) for c in nb.cells):
        print("%s: holds an exercise's metadata `wrong_answer`: not a student edition" % path)
        return False
    failed = execute(nb, timeout)
    if failed and failed[0] == checks[0] + 1:
        print("%s: the blank exercise fails its check in cell %d: %s: %s" % (path, failed[0], failed[1], failed[2]))
        return True
    print("%s: the blank exercise should fail the check in cell %d; got %s"
          % (path, checks[0] + 1, "no error" if not failed else "cell %d %s: %s" % failed))
    return False


def kernel_environment():
    """The kernel inherits this environment, but runs in a temporary directory: PYTHONPATH's
    relative entries (PYTHONPATH=build/python) are made absolute first."""
    paths = os.environ.get("PYTHONPATH", "")
    if paths:
        os.environ["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) for p in paths.split(os.pathsep) if p)
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # the debugger's frozen-modules warning
    os.environ.pop("MPLBACKEND", None)  # Agg would draw nothing into the notebook: inline, as in Jupyter


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("notebooks", nargs="+")
    ap.add_argument("--wrong-answers", action="store_true", help="spoil each exercise; its check must fail")
    ap.add_argument("--student", action="store_true",
                    help="a student edition (scripts/lab_editions.py): its check must fail on the blank exercise")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per cell")
    args = ap.parse_args()
    kernel_environment()
    ok = True
    for path in args.notebooks:
        nb = nbformat.read(path, as_version=4)
        dirty = dirty_cells(nb)
        if dirty:
            print("%s: code cells %s hold outputs or execution counts; commit notebooks clean: "
                  "jupyter nbconvert --clear-output --inplace %s" % (path, ", ".join(map(str, dirty)), os.path.basename(path)))
            ok = False
            continue
        run = run_student if args.student else run_wrong_answers if args.wrong_answers else run_clean
        ok &= run(path, nb, args.timeout)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
