#!/usr/bin/env bash
# Where FA2's split-KV kernel stores more sectors than it stores bytes: Nsight Compute's per-SASS-
# instruction counters (SourceCounters) on PyTorch's flash_fwd_splitkv_kernel and its combine for two
# calls — N = 1000 (tiles not even: FA2's predicated epilogue) and N = 512 (even) — with the global
# store instructions (STG) and their sectors listed. docs/model.md "Split-KV" cites the result.
#   bash scripts/gpu/fa2_store_sectors.sh OUT        (on the GPU machine)
set -euo pipefail
out=${1:?usage: fa2_store_sectors.sh OUT}
mkdir -p "$out"
cat > "$out/calls.py" <<'PY'
import torch, torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
for n in (1000, 512):
    q, k, v = (torch.randn(1, 8, n, 64, device="cuda", dtype=torch.float16) for _ in range(3))
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        F.scaled_dot_product_attention(q, k, v)
    torch.cuda.synchronize()
PY
ncu --clock-control none --section SourceCounters --kernel-name regex:flash_fwd -o "$out/report" -f python3 "$out/calls.py" > "$out/ncu_run.log" 2>&1
for id in 0 1 2 3; do
  ncu -i "$out/report.ncu-rep" --page source --csv --print-source sass --launch-skip "$id" --launch-count 1 \
    > "$out/sass_$id.csv" 2>> "$out/ncu_run.log" || true
done
ncu -i "$out/report.ncu-rep" --page raw --csv --metrics l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum,smsp__inst_executed_op_global_st.sum \
  > "$out/totals.csv" 2>> "$out/ncu_run.log" || true
python3 - "$out" <<'PY'
import csv, io, sys, pathlib
out = pathlib.Path(sys.argv[1])
for f in sorted(out.glob("sass_*.csv")):
    text = f.read_text()
    start = text.find('"')
    rows = list(csv.DictReader(io.StringIO(text[start:]))) if start >= 0 else []
    print("==", f.name, len(rows), "rows; columns:", list(rows[0].keys())[:12] if rows else "-")
    for r in rows:
        src = r.get("Source", "")
        if "STG" in src or "RED" in src or "ATOM" in src:
            keep = {k: v for k, v in r.items() if v not in ("", "0") and k != "Source"}
            print("  ", src.strip()[:60], keep)
PY
