// ceilings.hpp — the rates the time model (time/time_model.hpp) divides work by, per GPU preset:
// measured on the device for the h200 (tests/data/gpu_ceilings/h200.json, made by
// scripts/gpu/ceilings.sh), datasheet-derived for the others (marked `measured = false`).
#pragma once

#include <string>
#include <string_view>

namespace flashlab {

/// Whole-GPU rates (all SMs together) and per-event costs. Units in the names.
struct Ceilings {
  bool measured = false;              // true: measured on the device; false: datasheet figures
  std::string source;                 // where the figures come from
  double clock_hz = 0;                // SM clock while measured (datasheet: boost clock)
  double mma_f16_flops = 0;           // mma.sync m16n8k16 fp16 -> fp32, FLOP/s (2 per multiply-add)
  double mma_bf16_flops = 0;          // the same for bf16, FLOP/s
  double ex2_per_s = 0;               // ex2.approx.f32 (the special-function unit), results/s
  double fp32_fma_per_s = 0;          // FP32 FMA instructions per second (one per lane)
  double smem_bytes_per_s = 0;        // shared-memory read bandwidth, bytes/s
  double l2_bytes_per_s = 0;          // L2 read bandwidth, bytes/s
  double dram_read_bytes_per_s = 0;   // DRAM read bandwidth, bytes/s
  double dram_copy_bytes_per_s = 0;   // DRAM copy, bytes read + written per second
  double barrier_cycles_4_warps = 0;  // __syncthreads of a 4-warp block, SM cycles
  double barrier_cycles_8_warps = 0;  // the same, 8 warps
  double launch_s = 0;                // one kernel launch back to back on a stream, seconds
  double l2_bytes = 0;                // L2 capacity the device reports, bytes
  double l2_hit_latency_s = 0;        // one dependent load that hits the L2, seconds (scripts/gpu/latency.cu)
  double dram_latency_s = 0;          // one dependent load that misses the L2 (a 256 MiB chain), seconds (the same)

  /// Write bandwidth implied by the read and copy figures: a copy of B bytes takes
  /// 2B / copy = B / read + B / write, so 1/write = 2/copy - 1/read (bytes/s).
  double dram_write_bytes_per_s() const { return 1.0 / (2.0 / dram_copy_bytes_per_s - 1.0 / dram_read_bytes_per_s); }
  /// Barrier cost for a block of `warps` warps, cycles: the measured 4- and 8-warp figures,
  /// linear in between and beyond (at least the 4-warp figure).
  double barrier_cycles(int warps) const;
};

/// The ceilings of GPU preset `gpu` ("a100", "h100", "h200"). Throws ConfigError for an unknown
/// name. The h200's are the committed measurement, figure for figure.
const Ceilings& gpu_ceilings(std::string_view gpu);

}  // namespace flashlab
