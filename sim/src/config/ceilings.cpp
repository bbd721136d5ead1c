// ceilings.cpp — measured (h200) and datasheet (a100, h100) rates for the time model.
#include "flashlab/config/ceilings.hpp"

#include <algorithm>
#include <array>

#include "flashlab/contract/error.hpp"

namespace flashlab {
namespace {

constexpr double G = 1e9, T = 1e12;

// H200: tests/data/gpu_ceilings/h200.json, copied figure for figure (tests/sim/config/
// ceilings_test.cpp reads the file and checks each one). mma.sync is what the project's kernels
// and FA2 issue; wgmma (Hopper's faster path) is not used and not measured.
Ceilings h200() {
  Ceilings c;
  c.measured = true;
  c.source = "measured: tests/data/gpu_ceilings/h200.json (scripts/gpu/ceilings.sh, 2026-12-01)";
  c.clock_hz = 1980000.0 * 1e3;
  c.mma_f16_flops = 638.9 * T;
  c.mma_bf16_flops = 641.7 * T;
  c.ex2_per_s = 4144.94 * G;
  c.fp32_fma_per_s = 31840.82 * G;
  c.smem_bytes_per_s = 32918.0 * G;
  c.l2_bytes_per_s = 7729.1 * G;
  c.dram_read_bytes_per_s = 4513.3 * G;
  c.dram_copy_bytes_per_s = 3936.3 * G;
  c.barrier_cycles_4_warps = 20.8;
  c.barrier_cycles_8_warps = 28.8;
  c.launch_s = 3.621e-6;
  c.l2_bytes = 62914560;
  c.l2_hit_latency_s = 146.5e-9;  // tests/data/gpu_latency/h200.json (scripts/gpu/latency.cu, 2026-12-03)
  c.dram_latency_s = 353.1e-9;    // the same file's dram_ns
  return c;
}

// Datasheet figures, per-SM rates times SMs times boost clock: 16 ex2 and 128 FP32 FMA lanes per
// SM per cycle (sm_80: 64 FP32 lanes), 128 bytes of shared memory per SM per cycle; mma.sync at
// the datasheet dense tensor rate (an upper bound: the H200 measures 65% of its datasheet figure
// with mma.sync); L2 bandwidth at 2.5x DRAM (not published); DRAM read and copy at the datasheet
// bandwidth; barrier and launch costs as measured on the H200.
Ceilings datasheet(std::string name, int sms, double clock_hz, int fma_lanes, double tensor_flops, double dram,
                   double l2_bytes) {
  Ceilings c;
  c.measured = false;
  c.source = "datasheet: " + name + " (derived per-SM rates; see docs/model.md \"Time model\")";
  c.clock_hz = clock_hz;
  c.mma_f16_flops = c.mma_bf16_flops = tensor_flops;
  c.ex2_per_s = sms * 16.0 * clock_hz;
  c.fp32_fma_per_s = double(sms) * fma_lanes * clock_hz;
  c.smem_bytes_per_s = sms * 128.0 * clock_hz;
  c.l2_bytes_per_s = 2.5 * dram;
  c.dram_read_bytes_per_s = c.dram_copy_bytes_per_s = dram;
  c.barrier_cycles_4_warps = 20.8;
  c.barrier_cycles_8_warps = 28.8;
  c.launch_s = 3.621e-6;
  c.l2_bytes = l2_bytes;
  c.l2_hit_latency_s = 146.5e-9;  // the H200's, as measured (the same L2 design)
  c.dram_latency_s = 353.1e-9;    // the H200's, as measured
  return c;
}

}  // namespace

double Ceilings::barrier_cycles(int warps) const {
  const double slope = (barrier_cycles_8_warps - barrier_cycles_4_warps) / 4.0;
  return std::max(barrier_cycles_4_warps, barrier_cycles_4_warps + slope * (warps - 4));
}

const Ceilings& gpu_ceilings(std::string_view gpu) {
  static const std::array<std::pair<std::string_view, Ceilings>, 3> table{{
      {"a100", datasheet("NVIDIA A100 SXM4 80 GB", 108, 1.41e9, 64, 312 * T, 2.039 * T, 40e6)},
      {"h100", datasheet("NVIDIA H100 SXM5", 132, 1.98e9, 128, 989.4 * T, 3.35 * T, 50e6)},
      {"h200", h200()},
  }};
  for (const auto& [name, c] : table)
    if (name == gpu) return c;
  throw ConfigError("gpu", std::string(gpu), "one of a100, h100, h200");
}

}  // namespace flashlab
