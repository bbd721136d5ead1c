"""Nsight Compute on the plain kernels: global load/store bytes and DRAM bytes per configuration.

One ncu process profiles every configuration (flashlab-gpu --configs with --profile lines, which
launch each plain kernel once). Launches are matched to configurations in order: standard
attention runs 3 kernels, V1 and V2 one each. Clocks are left as they are (--clock-control none).
"""

import csv
import io
import subprocess

METRICS = {
    "ld": "l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum",
    "st": "l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum",
    "dram_rd": "dram__bytes_read.sum",
    "dram_wr": "dram__bytes_write.sum",
}
KERNELS_PER_ALGO = {"standard": 3, "v1": 1, "v2": 1}


def algo_of(flags):
    words = flags.split()
    return words[words.index("--algo") + 1]


def profile(binary, grid, workdir, log):
    """Returns one dict per grid config: {"ld", "st", "dram_rd", "dram_wr", "kernels"} (bytes)."""
    lines = workdir / "ncu_configs.txt"
    lines.write_text("".join(f"{g.flags} --profile\n" for g in grid))
    cmd = ["ncu", "--clock-control", "none", "--metrics", ",".join(METRICS.values()), "--csv",
           "--print-units", "base", "--kernel-name", "regex:^fl_", str(binary), "--configs", str(lines)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    log.write_text(" ".join(cmd) + "\n\n" + proc.stdout + "\n--- stderr ---\n" + proc.stderr)
    if proc.returncode != 0:
        raise RuntimeError(f"ncu exited with {proc.returncode}: {proc.stderr[-2000:]}")
    start = proc.stdout.find('"ID"')
    rows = list(csv.DictReader(io.StringIO(proc.stdout[start:])))
    launches = {}  # launch ID -> {metric key: value, "name": kernel}
    for row in rows:
        key = next((k for k, m in METRICS.items() if m == row["Metric Name"]), None)
        if key is None:
            continue
        entry = launches.setdefault(int(row["ID"]), {"name": row["Kernel Name"]})
        entry[key] = int(float(row["Metric Value"].replace(",", "")))
    ordered = [launches[i] for i in sorted(launches)]
    expected = sum(KERNELS_PER_ALGO[algo_of(g.flags)] for g in grid)
    if len(ordered) != expected:
        raise RuntimeError(f"ncu profiled {len(ordered)} kernels, expected {expected}")
    out, pos = [], 0
    for g in grid:
        n = KERNELS_PER_ALGO[algo_of(g.flags)]
        group = ordered[pos:pos + n]
        pos += n
        out.append({k: sum(x.get(k, 0) for x in group) for k in METRICS} | {"kernels": [x["name"] for x in group]})
    return out
