"""The simulator's figures for V3's measured configurations, from the built CLI (issue 27): what
scripts/check/v3_kernel_bytes.py and v3_kernel_predicted.py set beside the H200's data. Nothing here is committed: each figure is
recomputed by running `flashlab` (CPU only) when the check runs.

    flashlab_cli()                  the CLI's path: --flashlab PATH on the command line, else $FLASHLAB_CLI,
                                    else build/sim/cli/flashlab; None when none exists
    count(cli, flags)               `flashlab count --json --quiet FLAGS`, parsed (cached)
    timeline_units(cli, flags)      `flashlab timeline FLAGS --max-intervals 1 --json F`: unit -> busy fraction
    v3_flags(row, variant="fa3", tile=True)  the flags of a measured row (dtype, d, mask, N, batch, heads and,
                                    with tile, the B_r x B_c the run printed), with the ablation variant's switches
                                    (docs/model.md "V3"): stages1 --stages 1, no_pingpong --pingpong off,
                                    no_overlap --intra-overlap off, grid --scheduler grid, no_ws
                                    --warp-specialize off with ping-pong off and the grid scheduler (as
                                    variants_ablation.cu compiles it); None for static / dynamic (persistent
                                    schedulers the simulator does not tell apart)
"""

import functools
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SWITCHES = {
    "fa3": [],
    "stages1": ["--stages", "1"],
    "no_pingpong": ["--pingpong", "off"],
    "no_overlap": ["--intra-overlap", "off"],
    "grid": ["--scheduler", "grid"],
    "no_ws": ["--warp-specialize", "off", "--pingpong", "off", "--scheduler", "grid"],
}


def flashlab_cli(argv=None):
    argv = sys.argv if argv is None else argv
    if "--flashlab" in argv:
        return Path(argv[argv.index("--flashlab") + 1])
    for p in (os.environ.get("FLASHLAB_CLI"), ROOT / "build" / "sim" / "cli" / "flashlab"):
        if p and Path(p).is_file():
            return Path(p)
    return None


@functools.lru_cache(maxsize=None)
def _run(cli, flags):
    proc = subprocess.run([str(cli), *flags], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{cli} {' '.join(flags)}: exit {proc.returncode}: {proc.stderr.strip()[-400:]}")
    return proc.stdout


def count(cli, flags):
    return json.loads(_run(str(cli), ("count", "--json", "--quiet", *flags)))


@functools.lru_cache(maxsize=None)
def _timeline(cli, flags):
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "timeline.json"
        _run(cli, ("timeline", *flags, "--max-intervals", "1", "--json", str(out)))
        return json.loads(out.read_text())


def timeline_units(cli, flags):
    return {u["unit"]: u["busy"] for u in _timeline(str(cli), tuple(flags))["units"]}


def v3_flags(row, variant="fa3", tile=True):
    if variant not in SWITCHES:
        return None
    run = row["run"]
    return ("--algo", "v3", "--dtype", row.get("dtype", "fp16"), "--d", str(row["d"]), "--seq", str(row["n"]),
            "--batch", str(row["batch"]), "--heads", str(row["heads"]), "--mask", row["mask"],
            *(("--br", str(run["b_r"]), "--bc", str(run["b_c"])) if tile else ()), *SWITCHES[variant])
