"""V3's measured launches in SM cycles, beside the time model (issue 27 item 2): a section of
docs/validation/v3_h200.md, recomputed from tests/data/gpu_v3/v3_units.json and the simulator's CLI.

The time model prices the SM's units at the GPU preset's clock; the staged kernel runs at the clock the
H200's power limit leaves it. Nsight Compute's counters give both sides in cycles:

    SM clock         sm__cycles_elapsed / SMs / gpu__time_duration            (GHz)
    tensor rate      the simulator's matmul FLOPs / (sm__pipe_tensor_cycles_active / 4)
                     FLOP per tensor-active cycle per SM (the counter sums the 4 sub-partitions);
                     m64nNk16's peak is 4,096 (fp16, dense)
    tensor busy      sm__pipe_tensor_cycles_active / smsp__cycles_elapsed
    XU busy          sm__inst_executed_pipe_xu x 8 / smsp__cycles_elapsed (16 MUFU results per cycle
                     per SM: a warp's ex2 holds its sub-partition's XU 8 cycles)
    tensor + XU      the two together: above 1 by the part of the launch both were busy at once
    at the peak      the FLOPs at 4,096 per cycle per SM, at the launch's own SM clock, over its time
    wgmma's clock    the clock at which the simulator's wgmma rate (predicted tflops / peak_fraction)
                     is 4,096 FLOP per cycle per SM

    cycles_section(cli, unit_rows)   the section's lines; no verdict (a diagnostic for the time model)
"""

import v3_kernel_sim as sim

PEAK_FLOP_PER_CYCLE = 4096  # m64nNk16 fp16 per SM per cycle: 4 tensor cores x 512 FMA (NVIDIA H100 whitepaper)
XU_CYCLES_PER_WARP_INST = 8  # 32 lanes at 4 MUFU results per cycle per sub-partition (CUDA Programming Guide, cc 9.0)


def launch_cycles(k, sms):
    """The measured side of one profiled launch (its raw counters): clock (GHz), FLOP-free figures."""
    return {"clock_ghz": k["sm_cycles_elapsed"] / sms / k["time_ns"],
            "tensor_active_per_sm": k["tensor_cycles"] / 4 / sms,
            "tensor_busy": k["tensor_cycles"] / k["smsp_cycles_elapsed"],
            "xu_busy": k["xu_inst"] * XU_CYCLES_PER_WARP_INST / k["smsp_cycles_elapsed"]}


def cycles_section(cli, unit_rows):
    out = ["### The units in SM cycles\n",
           "\"fa3\"'s launches of the table above in cycles (scripts/check/v3_kernel_cycles.py): the SM clock each",
           "ran at (sm__cycles_elapsed over the launch's time), the FLOP the tensor pipe did per active cycle per SM",
           f"(the simulator's matmul FLOPs over sm__pipe_tensor_cycles_active / 4; m64nNk16's peak is {PEAK_FLOP_PER_CYCLE:,}),",
           f"the launch's time were the tensor pipe busy throughout at {PEAK_FLOP_PER_CYCLE:,} FLOP per cycle at that clock, and the",
           "time model's prediction (`flashlab count --algo v3 --json`, the kernel's tile). The simulator's wgmma rate",
           f"(predicted tflops / peak_fraction) is {PEAK_FLOP_PER_CYCLE:,} FLOP per cycle per SM at the clock in the last column.\n",
           "| d | mask | N | measured us | SM clock GHz | FLOP per tensor-active cycle per SM | tensor busy | XU busy | "
           "tensor + XU | at the peak, us | predicted us | predicted / measured | wgmma's clock GHz |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    if cli is None:
        return out[:1] + ["Not computed: no flashlab CLI was found (--flashlab PATH).", ""]
    clocks, pairs = {}, {}
    for r in unit_rows:
        if r["variant"] != "fa3" or not r["kernels"] or not r["run"]:
            continue
        k = r["kernels"][0]
        c = sim.count(cli, sim.v3_flags(r))
        sms, flops, pred = c["grid"]["sms"], c["flops"]["matmul"], c["predicted"]
        m = launch_cycles(k, sms)
        clocks.setdefault(r["d"], []).append(m["clock_ghz"])
        pairs.setdefault((r["mask"], r["n"]), []).append((r["d"], m["tensor_busy"] + m["xu_busy"]))
        at_peak_ns = flops / (PEAK_FLOP_PER_CYCLE * sms * m["clock_ghz"])
        wgmma_clock = pred["tflops"] / pred["peak_fraction"] * 1e12 / (PEAK_FLOP_PER_CYCLE * sms) / 1e9
        out.append(f"| {r['d']} | {r['mask']} | {r['n']} | {k['time_ns'] / 1e3:.1f} | {m['clock_ghz']:.3f} | "
                   f"{flops / sms / m['tensor_active_per_sm']:,.0f} | {m['tensor_busy']:.3f} | {m['xu_busy']:.3f} | "
                   f"{m['tensor_busy'] + m['xu_busy']:.3f} | {at_peak_ns / 1e3:.1f} | "
                   f"{pred['time_s'] * 1e6:.1f} | {pred['time_s'] * 1e9 / k['time_ns']:.3f} | {wgmma_clock:.3f} |")
    out += ["", "SM clock by d: " + "; ".join(f"d {d}: {min(c):.3f}-{max(c):.3f} GHz" for d, c in sorted(clocks.items())) +
            ". The time model's other units are priced at ceilings measured near the boost clock (docs/model.md, "
            "\"V3 in SM cycles\").", "",
            "Tensor + XU by mask and N, whatever d (the MUFU about as loaded as the tensor pipe at d = 64, half as "
            "loaded at d = 128): " + "; ".join(
                f"{mask} N {n}: " + ", ".join(f"{v:.3f} at d {d}" for d, v in sorted(x))
                for (mask, n), x in sorted(pairs.items(), key=lambda kv: (kv[0][0] != "none", -kv[0][1]))) + ".", ""]
    return out
