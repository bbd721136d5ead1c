#!/usr/bin/env python3
"""Fails when the committed GPU data no longer describe the kernels in the tree (issues 23, 25).

    python3 scripts/check/gpu_data_fresh.py            # the check CI runs
    python3 scripts/check/gpu_data_fresh.py --selftest # shows the check failing on a changed kernel

1. The kernel sources' SHA-256 (scripts/gpu/common.py kernel_source_hash: every file under
   kernels/, sorted by path) must equal the one tests/data/gpu_time/h200.json was measured and
   checked at: the kernels that were timed are the kernels that were validated, and a changed
   kernel needs `scripts/gpu/time_dataset.sh` run again before its times mean anything.
   The same for tests/data/gpu_backward/fa2_parity.json and fa2_parity_new_shapes.json (the backward
   against FA2, checked and timed in one run): a changed kernel needs `scripts/gpu/backward_perf.py`
   run again (the second with --shapes scripts/gpu/configs/backward_new_shapes.txt).
2. sim/src/memory/compiled_registers_table.inc and sim/src/time/sass_loops_table.inc must be their
   generators' output (scripts/gpu/registers_table.py, sass_loops.py --table) from the committed
   resource usage and SASS digest of the same build.
Exit 0 when both hold, 1 with what to re-run otherwise.
"""

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "gpu"))
import common  # noqa: E402
import verdict  # noqa: E402  (scripts/check/verdict.py: this folder is on the path when run as a script)

DATA = ROOT / "tests" / "data" / "gpu_time"


def problems(root):
    out = []
    recorded = json.loads((DATA / "h200.json").read_text())["meta"]["kernel_sources_sha256"]
    now = common.kernel_source_hash(root)
    if now != recorded:
        out.append(f"kernels/ changed since tests/data/gpu_time/h200.json was measured (sources {recorded[:12]}, "
                   f"now {now[:12]}): run scripts/gpu/time_dataset.sh on the GPU machine and merge its output "
                   "(scripts/gpu/time_dataset_merge.py)")
    for name, how in (("fa2_parity.json", ""), ("fa2_parity_new_shapes.json", " --shapes scripts/gpu/configs/backward_new_shapes.txt")):
        parity = json.loads((ROOT / "tests/data/gpu_backward" / name).read_text())["meta"]["kernel_sources_sha256"]
        if now != parity:
            out.append(f"kernels/ changed since tests/data/gpu_backward/{name} was measured (sources {parity[:12]}, "
                       f"now {now[:12]}): run scripts/gpu/backward_perf.py{how} on the GPU machine and commit its "
                       f"fa2_parity.json as {name}")
    table = subprocess.run([sys.executable, str(ROOT / "scripts/gpu/registers_table.py"),
                            str(DATA / "flashlab-gpu.resources.txt")], capture_output=True, text=True, check=True).stdout
    if table != (ROOT / "sim/src/memory/compiled_registers_table.inc").read_text():
        out.append("sim/src/memory/compiled_registers_table.inc is not scripts/gpu/registers_table.py's output: regenerate it")
    loops = subprocess.run([sys.executable, str(ROOT / "scripts/gpu/sass_loops.py"), "--table", str(DATA / "sass_loops.json")],
                           capture_output=True, text=True, check=True).stdout
    if loops != (ROOT / "sim/src/time/sass_loops_table.inc").read_text():
        out.append("sim/src/time/sass_loops_table.inc is not scripts/gpu/sass_loops.py --table's output: regenerate it")
    return out


def selftest():
    """A copy of the tree's kernels/ with one byte added must fail check 1; the copy as it is must pass."""
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(ROOT / "kernels", Path(tmp) / "kernels")
        if problems(Path(tmp)):
            print("selftest: the unchanged copy of kernels/ was reported stale")
            return 1
        (Path(tmp) / "kernels" / "src" / "v2.cu").open("a").write("\n")
        found = problems(Path(tmp))
        if not any("kernels/ changed" in p for p in found):
            print("selftest: a changed kernel was not reported")
            return 1
        print("selftest: a changed kernels/src/v2.cu is reported:", found[0])
        return 0


def main():
    if "--selftest" in sys.argv:
        return selftest()
    return verdict.verdict("gpu_data_fresh", problems(ROOT), "tests/data/gpu_time/h200.json describes the kernels in the tree")


if __name__ == "__main__":
    sys.exit(main())
