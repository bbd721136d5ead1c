"""l2_partition.py — turns scripts/gpu/l2_partition.sh's raw bundle into the committed data: the
probe's launches (list.jsonl, in launch order) joined with Nsight Compute's figures for each (ncu.csv,
one launch ID per profiled kernel, in the same order), the blocks' SMs (map.jsonl, three launches) and
the run's meta. Raw figures only: sectors as ncu counts them (32 bytes), bytes as bytes; what they say
is tests/sim/executor/l2_partition_test.cpp's to assert.

Usage: python3 scripts/gpu/l2_partition.py RAW.tar.gz OUT.json
Exit 2 with a message when the bundle is incomplete or the launches do not match ncu's rows.
"""

import json
import sys
import tarfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ncu  # noqa: E402

KEYS = {
    "dram_rd": "dram__bytes_read.sum",
    "dram_wr": "dram__bytes_write.sum",
    "l2_tex_rd": "lts__t_sectors_srcunit_tex_op_read.sum",
    "l2_tex_wr": "lts__t_sectors_srcunit_tex_op_write.sum",
    "l2_fabric_rd": "lts__t_sectors_srcunit_ltcfabric_op_read.sum",
    "l2_rd": "lts__t_sectors_op_read.sum",
    "l2_wr": "lts__t_sectors_op_write.sum",
    "time_ns": "gpu__time_duration.sum",
}


def read_bundle(path):
    with tarfile.open(path) as tar:
        names = set(tar.getnames())
        missing = {"map.jsonl", "list.jsonl", "ncu.csv", "meta.json"} - names
        if missing:
            raise ValueError(f"{path}: missing {sorted(missing)}")
        return {n: tar.extractfile(n).read().decode() for n in names if n.endswith((".jsonl", ".csv", ".json"))}


def build(files):
    listed = [json.loads(line) for line in files["list.jsonl"].splitlines() if line.strip()]
    profiled = ncu.launches(files["ncu.csv"], KEYS)
    if len(profiled) != len(listed):
        raise ValueError(f"ncu profiled {len(profiled)} launches, the probe listed {len(listed)}")
    rows = []
    for what, got in zip(listed, profiled):
        if "l2p_" + what["kind"] not in got["name"]:
            raise ValueError(f"launch order: listed {what['kind']}, ncu has {got['name']}")
        rows.append(what | {k: got[k] for k in KEYS})
    maps = [json.loads(line) for line in files["map.jsonl"].splitlines() if line.strip()]
    return {"meta": json.loads(files["meta.json"]), "maps": maps, "rows": rows}


def main(argv):
    if len(argv) != 3:
        print("usage: l2_partition.py RAW.tar.gz OUT.json", file=sys.stderr)
        return 2
    try:
        data = build(read_bundle(argv[1]))
    except (OSError, ValueError, KeyError, tarfile.TarError) as e:
        print(f"l2_partition.py: {e}", file=sys.stderr)
        return 2
    out = Path(argv[2])
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    tmp.replace(out)
    print(f"{out}: {len(data['rows'])} launches, {len(data['maps'])} block maps")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
