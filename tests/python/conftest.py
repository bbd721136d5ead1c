"""Shared helpers of the Python module's tests: the built `flashlab` command (FLASHLAB, set by
ctest: tests/python/CMakeLists.txt) run as a user runs it, whose output the module is held to."""
import json
import os
import shlex
import subprocess

import pytest

FLASHLAB = os.environ.get("FLASHLAB", "")
SOURCE_DIR = os.environ.get("FLASHLAB_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))


def cli(args, expect=0):
    """Runs `flashlab ARGS`; returns (stdout, stderr) after checking the exit status."""
    if not FLASHLAB:
        pytest.fail("FLASHLAB (the built flashlab command) is not set: run these tests through ctest")
    r = subprocess.run([FLASHLAB] + shlex.split(args), capture_output=True, text=True, timeout=600)
    assert r.returncode == expect, "flashlab %s: exit %d\n%s" % (args, r.returncode, r.stderr)
    return r.stdout, r.stderr


def cli_json(args):
    """`flashlab ARGS` (ending in --json) parsed."""
    out, _ = cli(args)
    return json.loads(out)


def cli_error(args):
    """The message of `flashlab ARGS` refused as bad input (exit 2), without "flashlab: error: "."""
    _, err = cli(args, expect=2)
    prefix = "flashlab: error: "
    line = err.strip().splitlines()[-1]
    assert line.startswith(prefix), err
    return line[len(prefix):]
