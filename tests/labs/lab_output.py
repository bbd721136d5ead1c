"""A lab script's output, split by command, and the figures read from it.

lab.sh echoes `$ flashlab ARGS` before each command, so the output is a list of sections: the
command line (ARGS) and what it printed, standard error included. A check finds a section by a
fragment of its command line and reads one figure from it: a CSV column by its header name, a
JSON field by its path, a line of a table by its label.
"""
import csv
import io
import json
import os
import re
import subprocess


class LabOutput:
    def __init__(self, text):
        self.text = text
        self.sections = []  # [(command line, output)]
        for block in re.split(r"^\$ ", text, flags=re.M)[1:]:
            command, _, body = block.partition("\n")
            self.sections.append((command, body))

    def section(self, *fragments):
        """The output of the one command whose line holds every fragment."""
        found = [body for command, body in self.sections if all(f in command for f in fragments)]
        if len(found) != 1:
            raise AssertionError("%d commands of the lab hold %s; expected one. The lab ran:\n  %s"
                                 % (len(found), fragments, "\n  ".join(c for c, _ in self.sections)))
        return found[0]

    def csv_rows(self, *fragments):
        """The CSV a command printed, as dicts keyed by the header's names."""
        lines = [line for line in self.section(*fragments).splitlines() if line.strip()]
        return list(csv.DictReader(io.StringIO("\n".join(lines))))

    def json(self, *fragments):
        return json.loads(self.section(*fragments))


def field(obj, path):
    """A JSON field by its dotted path (hbm.read_bytes.O), with a clear error when it is missing."""
    for key in path.split("."):
        if not isinstance(obj, dict) or key not in obj:
            raise AssertionError("the JSON has no field %s (at %s)" % (path, key))
        obj = obj[key]
    return obj


def line_with(text, label):
    """The first line of a command's output that starts (after spaces) with label."""
    for line in text.splitlines():
        if line.strip().startswith(label):
            return line.strip()
    raise AssertionError("no line starting %r in:\n%s" % (label, text))


def cells(text, label):
    """The cells of the table line that starts with label (cells are separated by 2+ spaces)."""
    rest = line_with(text, label)[len(label):]
    return re.split(r"\s{2,}", rest.strip())


def run_lab(script, flashlab, source_dir):
    env = dict(os.environ, FLASHLAB=flashlab)
    done = subprocess.run(["bash", script], cwd=source_dir, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=900)
    return done.returncode, LabOutput(done.stdout)


class Checks:
    """Collects failures so that one run reports every figure that is wrong."""

    def __init__(self):
        self.failures = []
        self.passed = 0

    def equal(self, what, got, want):
        if got == want:
            self.passed += 1
        else:
            self.failures.append("%s: the lab prints %r, the closed form gives %r" % (what, got, want))

    def holds(self, what, condition, detail=""):
        if condition:
            self.passed += 1
        else:
            self.failures.append("%s%s" % (what, ": " + detail if detail else ""))

    def run(self, what, function, *args):
        """Runs a group of checks; an AssertionError (a missing section, column or field) is a failure."""
        try:
            function(self, *args)
        except (AssertionError, KeyError, ValueError, IndexError) as e:
            self.failures.append("%s: %s: %s" % (what, type(e).__name__, e))
