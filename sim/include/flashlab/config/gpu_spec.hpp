// gpu_spec.hpp — the one description of each GPU preset ("a100", "h100", "h200"): its limits, and
// each rate or cost with the datasheet's figure beside the measured one where the device was
// measured (the h200: tests/data/gpu_ceilings/h200.json, made by scripts/gpu/ceilings.sh), each
// figure marked with its source. Occupancy, the L2 model, the metrics' lower bounds and the time
// model (time/time_model.hpp) all read it; docs/model.md "Presets" lists the figures.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace flashlab {

/// One figure and where it comes from. `source` begins with its kind — "datasheet:" (published),
/// "derived:" (from published per-SM rates), "estimate:" (nothing published; what stands in) or
/// "measured:" (the committed file that holds it) — and is empty when there is no such figure.
struct Figure {
  double value = 0;
  std::string_view source;
  bool known() const { return !source.empty(); }
};

/// A rate or cost of a GPU: the datasheet's figure beside the measured one (known only where the
/// device was measured; the datasheet's is unknown only where nothing is published and the device
/// was measured instead).
struct Rate {
  Figure datasheet;
  Figure measured;
  /// The figure the time model uses: the measured one where there is one, else the datasheet's.
  const Figure& used() const { return measured.known() ? measured : datasheet; }
  double value() const { return used().value; }
};

/// A GPU preset. Limits from the vendor datasheet and the CUDA C++ Programming Guide's
/// compute-capability table (one figure each: the device reports the same); whole-GPU rates (all
/// SMs together) and per-event costs as Rates. Units in the names.
struct GpuSpec {
  std::string name;                     // preset name: "a100", "h100", "h200"
  std::string device;                   // the product, e.g. "NVIDIA H200 SXM"
  int sms = 0;                          // streaming multiprocessors
  std::int64_t smem_per_sm = 0;         // shared memory per SM, bytes
  std::int64_t smem_per_block = 0;      // largest shared memory one block may use (opt-in), bytes
  int max_blocks_per_sm = 0;            // resident thread blocks per SM
  int max_warps_per_sm = 0;             // resident warps per SM
  std::int64_t l2_bytes = 0;            // L2 capacity, bytes (the h200: as the device reports it)

  Rate clock_hz;                // SM clock (datasheet: boost clock; measured: while measured)
  Rate mma_f16_flops;           // fp16 -> fp32 tensor rate, FLOP/s (datasheet: dense tensor rate;
                                // measured: mma.sync m16n8k16)
  Rate mma_bf16_flops;          // the same for bf16, FLOP/s
  Rate wgmma_flops;             // fp16/bf16 -> fp32 rate of Hopper's asynchronous wgmma (V3's GEMMs),
                                // FLOP/s (datasheet: the dense tensor rate; measured: m64n128k16 SS,
                                // fp16, two warpgroups per SM; bf16 taken as the same, not measured)
  Rate fp32_flops;              // fp32 (non-tensor) FLOP/s as published (the metrics' lower bound)
  Rate fp32_fma_per_s;          // FP32 FMA instructions per second, one per lane (what the time model uses)
  Rate ex2_per_s;               // ex2.approx.f32 (the special-function unit), results/s
  Rate smem_bytes_per_s;        // shared-memory read bandwidth, bytes/s
  Rate l2_bytes_per_s;          // L2 read bandwidth, bytes/s
  Rate dram_read_bytes_per_s;   // DRAM (HBM) read bandwidth, bytes/s (datasheet: the HBM bandwidth)
  Rate dram_copy_bytes_per_s;   // DRAM copy, bytes read + written per second
  Rate barrier_cycles_4_warps;  // __syncthreads of a 4-warp block, SM cycles
  Rate barrier_cycles_8_warps;  // the same, 8 warps
  Rate launch_s;                // one kernel launch back to back on a stream, seconds
  Rate l2_hit_latency_s;        // one dependent load that hits the L2, seconds (scripts/gpu/latency.cu)
  Rate dram_latency_s;          // one dependent load that misses the L2 (a 256 MiB chain), seconds (the same)
  Rate tma_round_trip_s;        // one bulk copy (TMA) of 1 KiB from the L2 into one SM's shared memory, its
                                // issue to its mbarrier's completion, one in flight, seconds (scripts/gpu/tma_per_sm.cu)
  Rate tma_sm_bytes_per_s;      // what one SM's bulk copies take in from the L2 alone: 45,056-byte copies,
                                // four in flight, bytes/s (the same; l2_bytes_per_s / sms bounds it when all load)

  /// True when the time model's rates were measured on the device (the tensor rate has a measured
  /// figure), false when they are datasheet figures.
  bool measured() const { return mma_f16_flops.measured.known(); }
  /// Where the time model's rates come from, as one line: the tensor rate's source.
  std::string_view rates_source() const { return mma_f16_flops.used().source; }
  /// Write bandwidth implied by the used read and copy figures: a copy of B bytes takes
  /// 2B / copy = B / read + B / write, so 1/write = 2/copy - 1/read (bytes/s).
  double dram_write_bytes_per_s() const;
  /// Barrier cost for a block of `warps` warps, cycles: the used 4- and 8-warp figures, linear in
  /// between and beyond (at least the 4-warp figure).
  double barrier_cycles(int warps) const;
};

/// The preset named `name` ("a100", "h100", "h200"). Throws ConfigError (field "gpu") for an
/// unknown name.
const GpuSpec& gpu_preset(std::string_view name);
/// Names of all GPU presets, in table order, for help texts and errors.
std::vector<std::string> gpu_preset_names();

}  // namespace flashlab
