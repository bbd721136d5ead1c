"""The key of a compiled kernel instance, from its demangled name: one rule for the scripts that turn
flashlab-gpu's cuobjdump output into tables (registers_table.py, sass_loops.py).

    fl_v2_forward<Instance<__half, 64, 128, 128, 4, false>>          -> ("fl_v2_forward", "fp16", 64, 128, 128, 4)
    fl_row_forward<RowShape<Instance<__nv_bfloat16, 128, 32, 64, 4, false>, true, false>>
                                                                     -> ("fl_row_forward/split-k/hbm", "bf16", 128, 32, 64, 4)

The kernels of kernels/src/v1.cu take a RowShape<Instance, kSplitK, kOnChip>: its warp split and
where O_i lives (on chip: the Q outer order; hbm: the K/V outer order) are part of the kernel's name,
as sim/src/memory/compiled_registers.cpp compiled_kernel spells it. Only the plain instances (the
last Instance argument, kRecord, false) are keyed: they are the ones timed.
"""
import re

_KEY = re.compile(r"(fl_\w+)<[\w:]*?(?:RowShape<[\w:]*)?Instance<(__half|__nv_bfloat16), (\d+), (\d+), (\d+), (\d+), "
                  r"(true|false)>(?:, (true|false), (true|false)>)?")


def instance_key(demangled):
    """(kernel, dtype, d, b_r, b_c, warps) of a plain kernel instance, or None (a recording one, not ours)."""
    m = _KEY.search(demangled)
    if not m or m.group(7) != "false":
        return None
    kernel, ty, d, br, bc, w = m.group(1, 2, 3, 4, 5, 6)
    if m.group(8):
        kernel += ("/split-k" if m.group(8) == "true" else "/split-q") + ("/on-chip" if m.group(9) == "true" else "/hbm")
    return kernel, "fp16" if ty == "__half" else "bf16", int(d), int(br), int(bc), int(w)
