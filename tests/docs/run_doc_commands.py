#!/usr/bin/env python3
"""Runs every command quoted in the project's Markdown docs against the built binaries.

Usage: run_doc_commands.py --source-dir DIR --flashlab PATH [--timeout SECONDS] FILE.md...

Every fenced block labelled ```sh (or bash, shell, console) is a list of commands: lines are
joined across a trailing backslash and over shell compounds (for ... done, if ... fi), comment
lines are skipped. Each command then falls under exactly one rule:

  display   flashlab-viewer, xvfb-run, viz/make_screenshots.sh      skipped: needs a display
  gpu       flashlab-gpu, scripts/gpu/                              skipped: needs an NVIDIA GPU
  build     scripts/setup.sh, cmake, ctest                          skipped: this test runs inside that build
  lab       bash docs/labs/NN_*.sh                                  skipped: ctest's lab_NN_* runs it
  notebook  jupyter ...                                             skipped: ctest's notebook.* run the notebooks
  editions  scripts/lab_editions.py                                 skipped: ctest's labs.editions runs it
  picture   flashlab ... --map / --plot, in a build without them   skipped: this build cannot draw
            (--no-map, --no-plot: CMake passes them when stb or PLplot is missing)
  flashlab  flashlab ..., build/sim/cli/flashlab ...                run
and a command no rule knows fails the test (add a rule, or change the doc), as does `python3 -m jupyter`
(the python3 on PATH need not be the interpreter Jupyter is installed for: write `jupyter`).

A command runs through bash (pipefail) in a fresh temporary directory shared by the commands of
one file, in order: build/sim/cli/flashlab and `flashlab` on PATH are the built binary; tests/ and
docs/ are links to the source tree's, so quoted paths such as tests/data/gpu/... resolve, and files
a command writes (sim.trace) are there for the next one. It must exit 0, or the status its doc
states at the end of its last line: `# exit N` or `# exit N: why` (e.g. `# exit 2: tiles over M`).
A doc that quotes what a command prints says so the same way, `# prints: TEXT`: the command must
exit 0 and TEXT must appear in its standard output or error.

Paths a doc quotes must exist: a code span naming a repository path (sim/..., tests/..., docs/...,
viz/..., kernels/..., scripts/..., bench/..., flags/..., fuzz/...; globs allowed) and a relative
link target. The docs stand on their own: a mention of shared/ (the team's notes, not part of the
project) fails.

A fenced block with another label (```text, ```json) is not run. One with no label that holds a
line starting like a command (flashlab, build/, bash, python3, xvfb-run, cmake, ctest) fails the
test: label it ```sh to run it or ```text to show it.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

COMMAND_LANGS = {"sh", "bash", "shell", "console"}
COMMAND_START = re.compile(r"^\s*(\$\s*)?(flashlab\b|build/|bash\s|python3\s|xvfb-run\s|cmake\s|ctest\s)")
EXPECT_EXIT = re.compile(r"\s#\s*exit\s+(\d+)\b[^#]*$")
EXPECT_PRINTS = re.compile(r"\s#\s*prints:\s*(.*?)\s*$")
OPENERS = re.compile(r"(^|[;&|]\s*|\s)(for|while|until|if|case)\s")
CLOSERS = re.compile(r"(^|[;&|]\s*|\s)(done|fi|esac)(\s*$|\s*[;&|)])")

# (rule, reason, pattern) in order; the first match decides.
SKIP_RULES = [
    ("display", "needs a display", re.compile(r"flashlab-viewer|xvfb-run|viz/make_screenshots\.sh")),
    ("gpu", "needs an NVIDIA GPU", re.compile(r"flashlab-gpu|scripts/gpu/")),
    ("build", "builds or installs; this test runs inside that build",
     re.compile(r"scripts/setup\.sh|(^|[;&|]\s*)(cmake|ctest)\s")),
    ("notebook", "opens or executes a notebook; ctest's notebook.* tests run docs/labs/*.ipynb",
     re.compile(r"(^|\s)jupyter\s")),
    ("editions", "writes the notebooks' editions; ctest's labs.editions runs it and notebook.*.student the result",
     re.compile(r"scripts/lab_editions\.py")),
]
PYTHON_MODULE_JUPYTER = re.compile(r"\bpython3?\s+-m\s+jupyter\b")
LAB = re.compile(r"^bash\s+(docs/labs/(\d\d_[A-Za-z0-9_]+)\.sh)\s*$")
FLASHLAB = re.compile(r"(^|[;&|(]\s*|\s)(build/sim/cli/)?flashlab\s")


def blocks(path):
    """Yields (line number of the fence, label, [(line number, text)]) for each fenced block."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    k = 0
    while k < len(lines):
        m = re.match(r"^(\s*)(```+|~~~+)\s*([A-Za-z0-9_+-]*)", lines[k])
        if not m:
            k += 1
            continue
        fence, label, start = m.group(2), m.group(3).lower(), k + 1
        body = []
        k += 1
        while k < len(lines) and not lines[k].strip().startswith(fence):
            body.append((k + 1, lines[k]))
            k += 1
        k += 1
        yield start, label, body


def commands(body):
    """Logical commands of a block: [(first line number, text)]."""
    out, current, first, depth = [], [], None, 0
    for number, line in body:
        stripped = line.strip()
        if not current and (not stripped or stripped.startswith("#")):
            continue
        if first is None:
            first = number
            line = re.sub(r"^(\s*)\$\s+", r"\1", line)  # a console prompt
        current.append(line.rstrip())
        code = stripped.split(" #")[0]
        depth += len(OPENERS.findall(" " + code)) - len(CLOSERS.findall(" " + code))
        if stripped.endswith("\\") or depth > 0:
            continue
        out.append((first, "\n".join(current)))
        current, first, depth = [], None, 0
    if current:
        out.append((first, "\n".join(current)))
    return out


def classify(cmd, source_dir, no_map=False, no_plot=False):
    """(rule, reason); rule None when no rule knows the command."""
    text = cmd.strip()
    if PYTHON_MODULE_JUPYTER.search(text):
        return None, ("`python3 -m jupyter` fails where the python3 on PATH is not the interpreter Jupyter is "
                      "installed for (pyenv, a venv): write `jupyter ...`, which runs with its own")
    for rule, reason, pattern in SKIP_RULES:
        if pattern.search(text):
            return rule, reason
    lab = LAB.match(text)
    if lab:
        if not os.path.isfile(os.path.join(source_dir, lab.group(1))):
            return None, "a lab script that does not exist: " + lab.group(1)
        return "lab", "ctest's lab_%s runs it" % lab.group(2)
    if FLASHLAB.search(" " + text):
        if no_map and re.search(r"\s--map\b", text):
            return "picture", "this build of flashlab has no --map (CMake did not find stb)"
        if no_plot and re.search(r"\s--plot\b", text):
            return "picture", "this build of flashlab has no --plot (CMake did not find PLplot or stb)"
        return "flashlab", ""
    return None, "no rule for this command (tests/docs/run_doc_commands.py lists the rules)"


REPO_PATH = re.compile(r"^(sim|tests|docs|viz|kernels|scripts|bench|flags|fuzz)/[A-Za-z0-9_.*/+-]*$")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"\]\(([^)\s]+)\)")
SHARED = re.compile(r"(^|[\s(`'\"])shared/")


def check_paths(path, rel, source_dir):
    """Failures for paths the doc quotes that are not in the source tree, and mentions of shared/."""
    failures = []
    in_fence = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if re.match(r"^\s*(```|~~~)", line):
                in_fence = not in_fence
                continue
            where = "%s:%d" % (rel, number)
            if SHARED.search(line):
                failures.append("%s: refers to shared/, which is not part of the project: state the fact here, "
                                "with its paper or source\n    %s" % (where, line.strip()))
            if in_fence:
                continue
            for span in CODE_SPAN.findall(line):
                span = span.strip().rstrip(".,;:")
                if REPO_PATH.match(span) and not glob.glob(os.path.join(source_dir, span)):
                    failures.append("%s: `%s` is not in the source tree" % (where, span))
            for target in LINK.findall(line):
                if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                    continue
                target = target.split("#")[0]
                if not os.path.exists(os.path.join(os.path.dirname(path), target)):
                    failures.append("%s: link target %s is not in the source tree" % (where, target))
    for f in failures:
        print("FAIL  " + f.split("\n")[0])
    return failures


def sandbox(source_dir, flashlab):
    """A temporary directory laid out like a checkout with a build: see the module docstring."""
    root = tempfile.mkdtemp(prefix="flashlab_docs_")
    os.makedirs(os.path.join(root, "build", "sim", "cli"))
    os.makedirs(os.path.join(root, "bin"))
    os.symlink(flashlab, os.path.join(root, "build", "sim", "cli", "flashlab"))
    os.symlink(flashlab, os.path.join(root, "bin", "flashlab"))
    for name in ("tests", "docs"):
        os.symlink(os.path.join(source_dir, name), os.path.join(root, name))
    return root


def tail(text, n=1500):
    return text if len(text) <= n else "..." + text[-n:]


def check_file(path, args):
    """Runs the file's commands; returns (ran, skipped, failures)."""
    rel = os.path.relpath(path, args.source_dir)
    ran, skipped, failures = 0, 0, check_paths(path, rel, args.source_dir)
    root = None
    for start, label, body in blocks(path):
        if label not in COMMAND_LANGS:
            for number, line in body:
                if not label and COMMAND_START.match(line):
                    where = "%s:%d" % (rel, number)
                    print("FAIL  %s  a command in an unlabelled block" % where)
                    failures.append("%s: a command in an unlabelled block: label the block ```sh to run it or "
                                    "```text to show it\n    %s" % (where, line.strip()))
                    break
            continue
        for number, cmd in commands(body):
            where = "%s:%d" % (rel, number)
            rule, reason = classify(cmd, args.source_dir, args.no_map, args.no_plot)
            shown = cmd.replace("\n", "\n    ")
            if rule is None:
                failures.append("%s: %s\n    %s" % (where, reason, shown))
                print("FAIL  %s  %s" % (where, reason))
                continue
            if rule != "flashlab":
                skipped += 1
                print("SKIP  %s  [%s: %s]  %s" % (where, rule, reason, cmd.splitlines()[0]))
                continue
            m = EXPECT_EXIT.search(cmd.splitlines()[-1])
            expected = int(m.group(1)) if m else 0
            m = EXPECT_PRINTS.search(cmd.splitlines()[-1])
            prints = m.group(1) if m else None
            if root is None:
                root = sandbox(args.source_dir, args.flashlab)
            env = dict(os.environ, PATH=os.path.join(root, "bin") + os.pathsep + os.environ.get("PATH", ""))
            began = time.monotonic()
            try:
                r = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=root, env=env, capture_output=True,
                                   text=True, errors="replace", timeout=args.timeout)
                code, out, err = r.returncode, r.stdout, r.stderr
            except subprocess.TimeoutExpired as e:
                code, out, err = None, "", "timed out after %g s" % args.timeout
            seconds = time.monotonic() - began
            ran += 1
            if code == expected and (prints is None or prints in out + err):
                print("ok    %s  exit %d (%.2f s)  %s" % (where, code, seconds, cmd.splitlines()[0]))
                continue
            if code is None:
                why = "timed out after %g s" % args.timeout
            elif code != expected:
                why = "exit %d, the doc expects %d" % (code, expected)
            else:
                why = "the doc says it prints '%s'; it does not" % prints
            print("FAIL  %s  %s" % (where, why))
            failures.append("%s: %s\n    %s\n  stdout: %s\n  stderr: %s" % (where, why, shown, tail(out), tail(err)))
    if root is not None:
        shutil.rmtree(root, ignore_errors=True)
    return ran, skipped, failures


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--source-dir", required=True, help="the repository root (tests/ and docs/ are linked from it)")
    p.add_argument("--flashlab", required=True, help="the built flashlab binary")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per command (default 120)")
    p.add_argument("--no-map", action="store_true", help="skip commands with --map (a build without stb)")
    p.add_argument("--no-plot", action="store_true", help="skip commands with --plot (a build without PLplot)")
    p.add_argument("files", nargs="+", help="Markdown files")
    args = p.parse_args()
    args.source_dir = os.path.abspath(args.source_dir)
    args.flashlab = os.path.abspath(args.flashlab)
    if not os.access(args.flashlab, os.X_OK):
        print("run_doc_commands: %s is not an executable" % args.flashlab, file=sys.stderr)
        return 2
    ran = skipped = 0
    failures = []
    for path in args.files:
        r, s, f = check_file(os.path.abspath(path), args)
        ran, skipped, failures = ran + r, skipped + s, failures + f
    print("\n%d run, %d skipped by a rule, %d failed" % (ran, skipped, len(failures)))
    for f in failures:
        print("\nFAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
