"""Nsight Compute for every GPU driver: the metric names (NAMES), the command line (command, run), the
CSV parser (launches), PyTorch's flash calls told apart (flash_calls); and the plain kernels' global
load/store bytes and DRAM bytes per configuration (profile).

One ncu process profiles every configuration (flashlab-gpu --configs with --profile lines, which
launch each plain kernel once). Launches are matched to configurations in order: standard
attention runs 3 kernels, V1 and V2 one each, split-KV V2 (--splits N > 1) two (the split kernel
and the combine). Clocks are left as they are (--clock-control none).
"""

import csv
import io

from common import sh

# Every Nsight Compute metric the drivers read, by the key their outputs use: each driver picks its
# own (METRICS below, time_dataset.METRICS, ...).
NAMES = {
    "ld": "l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum",
    "st": "l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum",
    "red": "l1tex__t_bytes_pipe_lsu_mem_global_op_red.sum",
    "atom": "l1tex__t_bytes_pipe_lsu_mem_global_op_atom.sum",
    "ldgsts": "l1tex__t_bytes_pipe_lsu_mem_global_op_ldgsts.sum",
    "dram_rd": "dram__bytes_read.sum",
    "dram_wr": "dram__bytes_write.sum",
    "l2_fabric_rd": "lts__t_sectors_srcunit_ltcfabric_op_read.sum",  # sectors read between the L2's two partitions
    "time_ns": "gpu__time_duration.sum",
    "smem_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
    "smem_ld_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "smem_st_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "smem_ld_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "smem_st_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "inst_executed": "smsp__inst_executed.sum",
}
METRICS = {k: NAMES[k] for k in ("ld", "st", "dram_rd", "dram_wr", "time_ns")}
KERNELS_PER_ALGO = {"standard": 3, "v1": 1, "v2": 1}
SPLIT_KERNELS = 2  # --algo v2 --splits N > 1: fl_v2_forward_split, fl_v2_combine


def flag_value(flags, name, default=None):
    words = flags.split()
    return words[words.index(name) + 1] if name in words else default


def algo_of(flags):
    return flag_value(flags, "--algo")


def kernels_of(flags):
    """Kernels one run of these flags launches. `--splits auto` depends on the GPU's size: resolve it
    first (the simulator's `flashlab count --json` lists the launches) and pass the count to profile."""
    splits = flag_value(flags, "--splits", "1")
    if splits == "auto":
        raise ValueError(f"--splits auto: pass the resolved kernel count to ncu.profile ({flags})")
    return SPLIT_KERNELS if algo_of(flags) == "v2" and int(splits) > 1 else KERNELS_PER_ALGO[algo_of(flags)]


def command(metrics, cache_control=None):
    """ncu's command line up to the kernel filter: clocks left as they are, `metrics` (a dict's
    values), CSV in base units; `cache_control` "all" flushes the caches before each kernel
    explicitly (ncu's default does too)."""
    return (["ncu", "--clock-control", "none"] + (["--cache-control", cache_control] if cache_control else [])
            + ["--metrics", ",".join(metrics.values()), "--csv", "--print-units", "base"])


def run(cmd, log):
    """Runs an ncu command line; `log` gets the command, its stdout and stderr. Returns the process."""
    proc = sh(cmd)
    log.write_text(" ".join(cmd) + "\n\n" + proc.stdout + "\n--- stderr ---\n" + proc.stderr)
    return proc


def short_name(name):
    """A kernel's name without template arguments and namespaces: "fl_v2_bwd_dq_dk_dv"."""
    return name.split("<")[0].split("::")[-1]


def launches(stdout, metrics=METRICS, strict=True):
    """The kernels of ncu's --csv output (--print-units base) in launch order: one dict per launch ID
    with "name" (the kernel's), "grid" and "block" (ncu's "(x, y, z)" text) and, per key of
    `metrics`, the value (a float; with strict=False, a value that is not a number is kept as ncu's
    text instead of raising ValueError)."""
    start = stdout.find('"ID"')
    out = {}
    for row in csv.DictReader(io.StringIO(stdout[start:])):
        key = next((k for k, m in metrics.items() if m == row["Metric Name"]), None)
        if key is None:
            continue
        entry = out.setdefault(int(row["ID"]), {"name": row["Kernel Name"], "grid": row.get("Grid Size", ""),
                                                "block": row.get("Block Size", "")})
        try:
            entry[key] = float(row["Metric Value"].replace(",", ""))
        except ValueError:
            if strict:
                raise
            entry[key] = row["Metric Value"]
    return [out[i] for i in sorted(out)]


def profile(binary, grid, workdir, log, kernels=None, per_kernel=False):
    """Returns one dict per grid config: {"ld", "st", "dram_rd", "dram_wr", "kernels"} (bytes), the
    sums over its kernels; with per_kernel, "launches" too: each kernel's own. `kernels`: how many
    each config launches (default: kernels_of its flags)."""
    counts = kernels if kernels is not None else [kernels_of(g.flags) for g in grid]
    lines = workdir / "ncu_configs.txt"
    lines.write_text("".join(f"{g.flags} --profile\n" for g in grid))
    proc = run(command(METRICS) + ["--kernel-name", "regex:^fl_", str(binary), "--configs", str(lines)], log)
    if proc.returncode != 0:
        raise RuntimeError(f"ncu exited with {proc.returncode}: {proc.stderr[-2000:]}")
    ordered = [{"name": x["name"]} | {k: int(x[k]) for k in METRICS if k in x} for x in launches(proc.stdout)]
    expected = sum(counts)
    if len(ordered) != expected:
        raise RuntimeError(f"ncu profiled {len(ordered)} kernels, expected {expected}")
    out, pos = [], 0
    for n in counts:
        group = ordered[pos:pos + n]
        pos += n
        row = {k: sum(x.get(k, 0) for x in group) for k in METRICS} | {"kernels": [x["name"] for x in group]}
        if per_kernel:
            row["launches"] = [{"name": x["name"]} | {k: x.get(k, 0) for k in METRICS} for x in group]
        out.append(row)
    return out


def flash_calls(passes, launches):
    """Splits PyTorch's flash launches (launches(): in order, with "name") into its calls, one per
    entry of `passes` ("forward", "backward" or "backward-deterministic"), by kernel name: a forward call is flash_fwd_kernel,
    or flash_fwd_splitkv_kernel and its combine kernel; a backward call is its forward, then every
    launch up to and including flash_bwd_convert_dq_kernel. RuntimeError when they do not match."""
    groups, pos = [], 0
    for p in passes:
        if pos >= len(launches):
            raise RuntimeError(f"{len(launches)} flash launches: too few for {len(passes)} calls")
        group = [launches[pos]]
        pos += 1
        if "splitkv" in group[0]["name"] and pos < len(launches) and "combine" in launches[pos]["name"]:
            group.append(launches[pos])
            pos += 1
        if p.startswith("backward"):
            while pos < len(launches) and "convert_dq" not in group[-1]["name"]:
                group.append(launches[pos])
                pos += 1
        groups.append(group)
    if pos != len(launches):
        raise RuntimeError(f"{len(launches)} flash launches, {pos} matched to calls")
    return groups
