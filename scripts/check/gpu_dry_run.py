#!/usr/bin/env python3
"""Runs the GPU validators (scripts/gpu/validate.py, split_validate.py, deterministic_validate.py,
backward_validate.py) without a GPU: every subprocess they start is faked, and each run's commands,
printed output and written files are recorded, one JSON file per case.

    python3 scripts/check/gpu_dry_run.py OUT_DIR [--tree ROOT]
    python3 scripts/check/gpu_dry_run.py --selftest   # a validator that raises must be reported

Used to show that a refactor of the validators changes no behaviour (issue 26), as count_snapshot.py
does for the counts: run it on the tree before the change (--tree: a checkout of it, e.g.
`git worktree add /tmp/before main`) and after, then `diff -r` the two folders. It also fails, as
ctest's gpu_dry_run, when a case raises or does not write the files the script's docstring names.

The fakes (fake_sh) answer each command as the GPU machine's tools would, with made-up figures
that vary per configuration line: nvidia-smi, nvcc, ncu --version; flashlab-gpu over a --configs
file or one configuration (a result per line, traces and dQ dumps where asked); `flashlab count
--json` (launches); ncu (a CSV with a row per metric of each launch); compute-sanitizer (0 errors).
With a case's `fail`, ncu exits 1, compute-sanitizer reports errors and flashlab-gpu writes
results for only half of its lines. PyTorch's side (torch_check; backward_validate's torch_time,
torch_compare) returns fixed figures, and report.py, which needs every field of a real run, is
replaced by a JSON dump of what validate.py hands it. Dates are fixed; paths under the case's
scratch folder are written as $TMP and the tree as $ROOT.
"""
import argparse
import importlib
import io
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import types
import zlib
from contextlib import redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXTRA = "--algo v2 --nq 10 --nk 10 --d 64 --br 64 --bc 64 --warps 4\n# comment\n\n--algo v1 --nq 20 --nk 10 --d 32\n"

# (case, script, arguments ({T}: the scratch folder), fail, files it must write under {T})
CASES = [
    ("validate", "validate", "--out {T}/out --bin {T}/gpu --work {T}/work --report {T}/page/h200.md --traces {T}/traces "
     "--commit abc --extra {T}/extra.txt", False,
     ["out/report.md", "out/results.json", "out/gpu_traces.tar.gz", "out/logs.tar.gz", "page/h200.md",
      "traces/manifest.json"]),
    ("validate-no-perf", "validate", "--out {T}/out --bin {T}/gpu --work {T}/work --report {T}/page/h200.md "
     "--traces {T}/traces --no-perf", False, ["out/results.json"]),
    ("validate-build", "validate", "--out {T}/out --build-dir {T}/build --work {T}/work --report {T}/page/h200.md "
     "--traces {T}/traces", False, ["out/results.json"]),
    ("validate-fail", "validate", "--out {T}/out --bin {T}/gpu --work {T}/work --report {T}/page/h200.md "
     "--traces {T}/traces", True, ["out/results.json"]),
    ("split", "split_validate", "--out {T}/out --build-dir {T}/build --commit abc", False,
     ["out/results.json", "out/report.md", "out/logs.tar.gz"]),
    ("split-variant", "split_validate", "--out {T}/out --build-dir {T}/build --grid variant", False,
     ["out/results.json", "out/report.md"]),
    ("split-quick", "split_validate", "--out {T}/out --build-dir {T}/build --quick", False, ["out/results.json"]),
    ("split-fail", "split_validate", "--out {T}/out --build-dir {T}/build", True, ["out/results.json"]),
    ("deterministic", "deterministic_validate", "--out {T}/out --gpu {T}/gpu --work {T}/work --commit c --driver 580",
     False, ["out/deterministic_results.json", "out/deterministic_report.md", "out/deterministic_logs.txt",
             "out/det-ragged.trace"]),
    ("deterministic-ncu", "deterministic_validate", "--out {T}/out --gpu {T}/gpu --work {T}/work --ncu", False,
     ["out/ncu_results.json", "out/deterministic_results.json"]),
    ("deterministic-only-ncu", "deterministic_validate", "--out {T}/out --gpu {T}/gpu --work {T}/work --only-ncu",
     False, ["out/ncu_results.json", "out/deterministic_logs.txt"]),
    ("deterministic-only-time", "deterministic_validate", "--out {T}/out --gpu {T}/gpu --work {T}/work --only-time",
     False, ["out/timing.json"]),
    ("deterministic-fail", "deterministic_validate", "--out {T}/out --gpu {T}/gpu --work {T}/work --ncu", True,
     ["out/deterministic_results.json"]),
    ("backward", "backward_validate", "--out {T}/out --build-dir {T}/build --commit abc", False,
     ["out/backward_report.md", "out/backward_results.json", "out/backward_traces.tar.gz", "out/backward_logs.tar.gz"]),
    ("backward-only-perf", "backward_validate", "--out {T}/out --build-dir {T}/build --only-perf", False,
     ["out/perf.json"]),
    ("backward-fail", "backward_validate", "--out {T}/out --build-dir {T}/build", True, ["out/backward_results.json"]),
]


SCRATCH = ["/nowhere"]  # the case's scratch folder: figures must not depend on where it is


def crc(text):
    return zlib.crc32(text.replace(SCRATCH[0], "$TMP").encode())


def launches_of(flags):
    """The made-up launches of a configuration: three for a backward pass or standard attention,
    two for split-KV (named as the simulator names them, or not, to take both paths), else one."""
    w = flags.split()
    if "--pass" in w and w[w.index("--pass") + 1] == "backward":
        return [{"name": n, "read_bytes": crc(flags + n) % 999, "write_bytes": crc(n + flags) % 777,
                 "atomic_bytes": crc(n) % 55} for n in ("bwd_dot", "bwd_main", "bwd_convert")]
    if "standard" in w:
        return [{"name": f"std{k}", "read_bytes": k * 10, "write_bytes": k * 3} for k in range(3)]
    if "--splits" in w and w[w.index("--splits") + 1] != "1":
        names = ("x1", "x2") if crc(flags) % 3 == 0 else ("v2_forward_split", "flash_combine")
        return [{"name": n, "read_bytes": 100 + k, "write_bytes": 20 + k} for k, n in enumerate(names)]
    return [{"name": "v2_forward", "read_bytes": crc(flags) % 1000, "write_bytes": crc(flags) % 100}]


def result(flags):
    """flashlab-gpu's JSON object for one configuration line, every figure made up from the line."""
    x = crc(flags)
    heads = [{"rel_fro_O": (x % 97) * 1e-5, "L_over_tol": (x % 13) / 100, "rel_fro_dQ": (x % 7) * 1e-4,
              "rel_fro_dK": (x % 11) * 1e-4, "rel_fro_dV": (x % 5) * 1e-4, "tol": 1e-2}]
    tensors = {t: {"ld": (x + k) % 300, "st": (x + 2 * k) % 200} for k, t in enumerate(("Q", "K", "V", "Oacc", "Lacc"))}
    return {"passed": x % 17 != 0, "device": {"cuda_runtime": "12.8", "name": "H200", "driver": "580", "sms": 132},
            "events": {"agree": x % 19 != 0, "gpu": x % 500, "sim": x % 500, "stat_values": 8,
                       "stat_differing": x % 2, "report": "diff " + flags},
            "numbers": {"tol_O": 1e-3, "heads": heads, "within": True, "canary_intact": x % 23 != 0},
            "grads": {"heads": heads, "within": x % 29 != 0},
            "bytes": {"sim": {"ld": 1000 + x % 50, "st": 100 + x % 7},
                      "kernel": {"ld": 1024, "st": 128, "tensors": tensors}},
            "config": {"splits": 2, "b_r": 64, "b_c": 64, "warps": 4},
            "timing": {"tflops": (x % 1000) / 10, "flops": 1e12 + x, "median_ms": 1 + (x % 100) / 100}}


def run_line(flags):
    """One configuration: its trace and dQ dump written where the line asks; its result."""
    w = flags.split()
    if "--trace" in w:
        path = Path(w[w.index("--trace") + 1])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("TRACE " + flags + "\n")
    if "--dump" in w:
        path = Path(w[w.index("--dump") + 1])
        path.mkdir(parents=True, exist_ok=True)
        k = int(path.name) if path.name.isdigit() else 0
        values = [(i * 37 + (k if "released" in flags else 0)) % 65536 for i in range(64)]
        (path / "dq.bin").write_bytes(b"".join(v.to_bytes(2, "little") for v in values))
    return result(flags)


def ncu_csv(lines, metrics):
    """ncu --csv's output for the launches of `lines`: one row per metric of each launch."""
    rows = ['"ID","Kernel Name","Grid Size","Block Size","Metric Name","Metric Unit","Metric Value"']
    launch = 0
    for flags in lines:
        for sl in launches_of(flags):
            for key, metric in metrics.items():
                rows.append(f'"{launch}","fl_{sl["name"]}<int>","(1, 2, 3)","(128, 1, 1)","{metric}","byte",'
                            f'"{crc(flags + sl["name"] + key) % 100000}"')
            launch += 1
    return "==PROF== profiling\n" + "\n".join(rows) + "\n"


class Done:
    """A finished process, as subprocess.run returns it."""

    def __init__(self, args, returncode=0, stdout="", stderr=""):
        self.args, self.returncode, self.stdout, self.stderr = args, returncode, stdout, stderr


def fake_sh(calls, fail, metrics):
    """common.sh's stand-in: records each command (`calls`) and answers it."""

    def sh(cmd, **kw):
        c = cmd if isinstance(cmd, str) else [str(x) for x in cmd]
        calls.append({"cmd": c, "options": sorted(kw)})
        if isinstance(c, str):
            answer = "NVIDIA H200, 580.1, 143771 MiB, 1980 MHz" if c.startswith("nvidia-smi") else "version " + c.split()[0]
            return Done(c, stdout=answer + "\n")
        return answer_list(c, fail, metrics)

    return sh


def answer_list(c, fail, metrics):
    if c[0] == sys.executable or c[0] == "bash":
        return Done(c, stdout="2.9\n" if c[0] == sys.executable else "built")
    if c[0] == "ncu":
        lines = Path(c[c.index("--configs") + 1]).read_text().splitlines()
        csv = ncu_csv([x.replace(" --profile", "") for x in lines], metrics)
        return Done(c, 1, "", "ncu failed") if fail else Done(c, stdout=csv)
    if c[0] == "compute-sanitizer":
        return Done(c, 9, "========= ERROR SUMMARY: 2 errors\n") if fail else Done(c, stdout="========= ERROR SUMMARY: 0 errors\n")
    if len(c) > 1 and c[1] == "count":
        return Done(c, stdout=json.dumps({"launches": launches_of(" ".join(c[3:]))}))
    if "--configs" in c:
        lines = Path(c[c.index("--configs") + 1]).read_text().splitlines()
        results = [run_line(x) for x in lines]
        Path(c[c.index("--json") + 1]).write_text(json.dumps(results[:len(results) // 2] if fail else results))
        return Done(c, stdout=f"ran {len(lines)}")
    if "--json" in c:
        Path(c[c.index("--json") + 1]).write_text(json.dumps([run_line(" ".join(c[c.index("--json") + 2:]))]))
        return Done(c, stdout="ran one")
    raise RuntimeError(f"gpu_dry_run: no fake for {c}")


def fake_torch_side():
    """torch_check and report as modules of fixed answers (no torch here, no real run's fields)."""
    tc = types.ModuleType("torch_check")
    tc.compare = lambda folder: {"rel_fro": (crc(Path(folder).name) % 100) * 1e-5, "rows": 3}
    tc.time_flash = lambda d, causal: 1.0 + d / 1000 + causal
    tc.compare_perf_dump = lambda folder: {"folder": Path(folder).name, "ok": True}
    report = types.ModuleType("report")
    report.render = lambda e: (json.dumps(e, sort_keys=True, indent=1), all(r.get("passed") for r in e["grid"]))
    report.summary = lambda e: f"summary of {len(e['grid'])} rows"
    sys.modules.update(torch_check=tc, report=report)


def written(folder):
    """Every file under `folder`: its text (a tarball: its members' texts; binary: hex)."""
    out = {}
    for p in sorted(Path(folder).rglob("*")):
        if not p.is_file():
            continue
        if p.name.endswith(".tar.gz"):
            with tarfile.open(p) as tar:
                out[str(p.relative_to(folder))] = {m.name: tar.extractfile(m).read().decode() if m.isfile() else "folder"
                                                  for m in tar.getmembers()}
            continue
        data = p.read_bytes()
        try:
            out[str(p.relative_to(folder))] = data.decode()
        except UnicodeDecodeError:
            out[str(p.relative_to(folder))] = data.hex()
    return out


def run_case(tree, case, tmp, record):
    """One case in this process: fakes installed, the script's main run, the record written."""
    name, script, args, fail, _ = next(c for c in CASES if c[0] == case)
    SCRATCH[0] = str(tmp)
    (Path(tmp) / "extra.txt").write_text(EXTRA)
    sys.path.insert(0, str(Path(tree) / "scripts" / "gpu"))
    fake_torch_side()
    import common
    import ncu
    calls = []
    common.sh = ncu.sh = fake_sh(calls, fail, ncu.NAMES)
    common._READ["date"] = lambda: "2099-01-01 00:00 UTC"
    module = importlib.import_module(script)
    for fixed, answer in (("torch_time", lambda d, causal: 2.0 + d / 100 + causal),
                          ("torch_compare", lambda folder: {"backend": "flash", "rel_fro_dq": 1e-4})):
        if hasattr(module, fixed):
            setattr(module, fixed, answer)
    sys.argv = [script + ".py"] + args.format(T=tmp).split()
    printed = io.StringIO()
    with redirect_stdout(printed):
        status = module.main()
    doc = {"exit": status, "printed": printed.getvalue(), "commands": calls, "files": written(tmp)}
    text = json.dumps(doc, indent=1, sort_keys=True).replace(str(tmp), "$TMP").replace(str(Path(tree).resolve()), "$ROOT")
    Path(record).write_text(re.sub(r"\(\d+ s left\)", "(N s left)", text) + "\n")  # validate.py's budget


def check_case(tree, case, expect, out_dir):
    """Runs one case in a child process; returns what is wrong with it ([] when nothing)."""
    with tempfile.TemporaryDirectory() as tmp:
        record = Path(out_dir) / f"{case}.json"
        p = subprocess.run([sys.executable, __file__, "--case", case, "--tree", str(tree), "--tmp", tmp,
                            "--record", str(record)], capture_output=True, text=True)
        if p.returncode != 0:
            return [f"{case}: the script raised: {p.stderr.strip().splitlines()[-1] if p.stderr.strip() else p.returncode}"]
        files = json.loads(record.read_text())["files"]
        return [f"{case}: {f} not written" for f in expect if f not in files]


def check_tree(tree, out_dir):
    """Every case on `tree`; returns the problems found."""
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    return [p for case, _, _, _, expect in CASES for p in check_case(tree, case, expect, out_dir)]


def selftest():
    """This tree passes; a copy of it whose backward_validate.py raises gives one problem per backward case."""
    with tempfile.TemporaryDirectory() as records:
        if check_tree(ROOT, records):
            print("gpu_dry_run selftest: this tree has problems")
            return 1
    with tempfile.TemporaryDirectory() as tree:
        shutil.copytree(ROOT / "scripts" / "gpu", Path(tree) / "scripts" / "gpu",
                        ignore=shutil.ignore_patterns("__pycache__"))
        with open(Path(tree) / "scripts" / "gpu" / "backward_validate.py", "a") as f:
            f.write("\n\ndef main():\n    raise RuntimeError('a broken refactor')\n")
        found = check_tree(tree, Path(tree) / "records")
    want = sum(c[1] == "backward_validate" for c in CASES)
    ok = len(found) == want and all("a broken refactor" in p for p in found)
    print("\n".join(found))
    print(f"gpu_dry_run selftest: {len(found)} problems, {want} expected: " + ("ok" if ok else "FAILED"))
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir", nargs="?")
    ap.add_argument("--tree", default=str(ROOT), help="the checkout whose scripts/gpu/ runs (default: this one)")
    ap.add_argument("--selftest", action="store_true", help="show the check failing on a broken validator")
    ap.add_argument("--case", help=argparse.SUPPRESS)
    ap.add_argument("--tmp", help=argparse.SUPPRESS)
    ap.add_argument("--record", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.case:
        run_case(Path(a.tree).resolve(), a.case, a.tmp, a.record)
        return 0
    if a.selftest:
        return selftest()
    if not a.out_dir:
        ap.error("OUT_DIR is required")
    problems = check_tree(a.tree, a.out_dir)
    for p in problems:
        print("gpu_dry_run:", p)
    print(f"gpu_dry_run: {len(CASES)} cases, {len(problems)} problems; records in {a.out_dir}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
