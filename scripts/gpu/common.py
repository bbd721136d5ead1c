"""What the GPU drivers share: running a command, the run's metadata, flashlab-gpu over a file of flag
lines, the build, and the logs' tarball; and the validators' common steps: a grid row's result,
the trace flags, compute-sanitizer, the simulator's launches, the worst head, the Nsight Compute
drivers' JSON of launches per row, the Markdown report; and the data tables' reader (text_table).
Nsight Compute's side (metric names, the ncu command, its CSV) is ncu.py's; PyTorch's timing is
cuda_events.py's.

Every driver records the same facts the same way (`metadata`): nvidia-smi's name, driver, memory and
maximum SM clock, nvcc's, PyTorch's and Nsight Compute's versions, the commit, the SHA-256 of the
kernel sources and the UTC date, each script choosing which keys its output carries.
"""

import datetime
import hashlib
import json
import subprocess
import sys
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def sh(cmd, **kw):
    """subprocess.run with output captured as text; a string runs through the shell."""
    return subprocess.run(cmd, shell=isinstance(cmd, str), capture_output=True, text=True, **kw)


def kernel_source_hash(root=ROOT):
    """SHA-256 over the kernel sources and the host runner (root/kernels/**: sorted paths relative to
    root, and contents)."""
    h = hashlib.sha256()
    for p in sorted((Path(root) / "kernels").rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def v3_source_hash(folder=ROOT / "scripts" / "gpu" / "v3_kernel"):
    """SHA-256 over the staged V3 kernel's sources (folder/*.cu and *.cuh, sorted by name: names and
    contents): the hash its GPU data record as v3_sources_sha256 (tests/data/gpu_v3)."""
    h = hashlib.sha256()
    for p in sorted([*Path(folder).glob("*.cu"), *Path(folder).glob("*.cuh")]):
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def nvidia_smi(fields="name,driver_version"):
    """nvidia-smi's answer for the first GPU, as it prints it ("NVIDIA H200, 580.159.04"); "" if none."""
    return sh(f"nvidia-smi --query-gpu={fields} --format=csv,noheader").stdout.strip()


def last_line(cmd, default="unknown"):
    lines = sh(cmd).stdout.strip().splitlines()
    return lines[-1] if lines else default


_SMI = ("gpu", "driver", "memory", "max_sm_clock")
_READ = {
    "cuda": lambda: last_line("nvcc --version", "") or last_line("/usr/local/cuda/bin/nvcc --version"),
    "torch": lambda: sh([sys.executable, "-c", "import torch; print(torch.__version__)"]).stdout.strip(),
    "ncu": lambda: last_line("ncu --version"),
    "kernel_sources_sha256": kernel_source_hash,
    "nvidia_smi": nvidia_smi,
    "date": lambda: datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
}


def metadata(keys, missing="unknown", **given):
    """The run's record, with `keys` in order. A key in `given` (commit, command, ncu_flags, ...) takes
    that value; the others are read here: gpu (also "device"), driver, memory, max_sm_clock (nvidia-smi;
    `missing` each when it answers nothing), cuda (nvcc's last line), torch, ncu (versions),
    kernel_sources_sha256, nvidia_smi (its "name, driver" line), date (UTC, to the minute)."""
    smi = {}
    if any(k in _SMI or k == "device" for k in keys if k not in given):
        line = nvidia_smi(",".join(("name", "driver_version", "memory.total", "clocks.max.sm")))
        values = [x.strip() for x in line.splitlines()[0].split(",")] if line else [missing] * 4
        smi = dict(zip(_SMI, values)) | {"device": values[0]}
    return {k: given[k] if k in given else smi[k] if k in smi else _READ[k]() for k in keys}


def run_configs(binary, lines, cfg, json_path, extra=(), log=None, must=False, **kw):
    """flashlab-gpu --configs over `lines` (written to `cfg`), its JSON to `json_path`; `log`, when
    given, gets its stdout and stderr. Returns (the JSON list, the process); when no JSON was written,
    the list is empty, or with `must` a RuntimeError is raised."""
    cfg.write_text("".join(line + "\n" for line in lines))
    proc = sh([str(binary), "--configs", str(cfg), "--json", str(json_path)] + list(extra), **kw)
    if log is not None:
        log.write_text(proc.stdout + "\n--- stderr ---\n" + proc.stderr)
    if must and not json_path.exists():
        raise RuntimeError(f"flashlab-gpu exited with {proc.returncode} and wrote no JSON: {proc.stderr[-2000:]}")
    return (json.loads(json_path.read_text()) if json_path.exists() else []), proc


def binaries(build_dir):
    """(flashlab-gpu, flashlab): their paths in build_dir (relative to the repository root, or absolute)."""
    build = ROOT / build_dir
    return build / "kernels" / "flashlab-gpu", build / "sim" / "cli" / "flashlab"


def build(log_dir, build_dir="build-gpu"):
    """flashlab-gpu and flashlab for sm_90 in build_dir (build_gpu.sh; nothing when both are there),
    logged to log_dir/build.log. Returns flashlab-gpu's path; RuntimeError when the build fails."""
    proc = sh(["bash", str(HERE / "build_gpu.sh"), str(log_dir), str(build_dir)], cwd=ROOT)
    print(proc.stdout.strip(), flush=True)
    if proc.returncode != 0:
        raise RuntimeError("build failed; see build.log")
    return binaries(build_dir)[0]


def tar_folder(path, folder, arcname="logs"):
    """`folder` as the gzipped tarball `path`, under the name `arcname` (a run's logs, its traces)."""
    with tarfile.open(path, "w:gz") as tar:
        tar.add(folder, arcname=arcname)


def trace_flags(path):
    """flashlab-gpu's flags (after a space) that write the run's text GPU trace to `path`."""
    return f" --trace {path} --trace-format text"


def with_results(rows, results):
    """(row, its result or None) for each grid row: flashlab-gpu --configs writes one result per
    line, in order, and may stop before the last."""
    return [(g, results[k] if k < len(results) else None) for k, g in enumerate(rows)]


def worst(heads, key):
    """The largest `key` ("rel_fro_O", "rel_fro_dQ", ...) over a result's heads."""
    return max(h[key] for h in heads)


def simulated_launches(flashlab, flags):
    """The simulator's launches for a list of flashlab-gpu configuration flags: `flashlab count
    --json`'s "launches" (per launch: name, read_bytes, write_bytes, ...)."""
    return json.loads(sh([str(flashlab), "count", "--json"] + list(flags)).stdout)["launches"]


def compute_sanitizer(binary, args, tool, log):
    """compute-sanitizer's `tool` ("memcheck", "racecheck") on `binary args`, exiting 9 on its own
    findings; `log` gets stdout and stderr. Returns (the process, its output's SUMMARY lines)."""
    proc = sh(["compute-sanitizer", "--tool", tool, "--error-exitcode", "9", str(binary)] + list(args))
    log.write_text(proc.stdout + proc.stderr)
    return proc, [x for x in (proc.stdout + proc.stderr).splitlines() if "SUMMARY" in x]


def write_launch_rows(path, meta, metrics, rows, row_keys, launch_line):
    """An Nsight Compute driver's result: {"metadata": meta, "metrics": metrics, "rows": rows} written
    as the JSON file `path` (indent 1, a final newline), then a summary printed: each row's values of
    `row_keys` on one line, and under it, indented, the values launch_line(launch) returns for each
    launch in the row's "launches"."""
    path.write_text(json.dumps({"metadata": meta, "metrics": metrics, "rows": rows}, indent=1) + "\n")
    for r in rows:
        print(*(r[k] for k in row_keys))
        for x in r["launches"]:
            print("   ", *launch_line(x))


def text_table(text, *types, sep="|"):
    """The rows of a table written as text, one row a line: each line cut at `sep` (None: at runs of
    white space) into one field per entry of `types`, each field stripped of the spaces around it
    (the first keeps its leading ones: an indented label) and converted by its type (str, int,
    float, ...). Blank lines and lines whose first character is "#" (a section's heading) are
    skipped. Returns a list of tuples, in the text's order; ValueError, naming the line, when a line
    has another number of fields or a field does not convert."""
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split(sep)
        if len(fields) != len(types):
            raise ValueError(f"table line {n}: {len(fields)} fields, {len(types)} wanted: {line!r}")
        fields = [fields[0].rstrip()] + [f.strip() for f in fields[1:]]
        try:
            rows.append(tuple(t(f) for t, f in zip(types, fields)))
        except ValueError as e:
            raise ValueError(f"table line {n}: {e}: {line!r}") from None
    return rows


def table_head(*columns):
    """A Markdown table's header line and rule line."""
    return ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]


def write_markdown(path, lines):
    """`lines` as the Markdown file `path` (one per line), also printed."""
    path.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
