// gpu_spec.cpp — the GPU presets: datasheet figures for every preset, the h200's measurements beside
// them. Sources: each figure's own, and docs/model.md "Presets".
#include "flashlab/config/gpu_spec.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include "preset_table.hpp"

namespace flashlab {
namespace {

constexpr std::int64_t KiB = 1024;
constexpr std::int64_t MB = 1000 * 1000;
constexpr double G = 1e9, T = 1e12;

// The rules that derive per-SM rates from the datasheet, and what stands in where nothing is published.
constexpr std::string_view kEx2Rule = "derived: 16 ex2 results per SM per cycle x SMs x boost clock";
constexpr std::string_view kFmaRule = "derived: FP32 lanes per SM (sm_80: 64, sm_90: 128) x SMs x boost clock";
constexpr std::string_view kSmemRule = "derived: 128 bytes per SM per cycle x SMs x boost clock";
constexpr std::string_view kL2Rule = "estimate: 2.5 x the datasheet DRAM bandwidth (not published)";
constexpr std::string_view kCopyRule = "derived: the datasheet DRAM bandwidth";
constexpr std::string_view kH200Costs = "estimate: the h200's measurement (not published)";

// The h200's measurements, copied figure for figure (tests/sim/config/gpu_spec_test.cpp reads the
// files and checks each one).
constexpr std::string_view kH200Ceilings =
    "measured: tests/data/gpu_ceilings/h200.json (scripts/gpu/ceilings.sh, 2026-12-01)";
constexpr std::string_view kH200Wgmma =
    "measured: tests/data/gpu_ceilings/h200_wgmma.json (scripts/gpu/wgmma_ceiling.sh, 2026-12-04)";
constexpr std::string_view kH200Latency =
    "measured: tests/data/gpu_latency/h200.json (scripts/gpu/latency.cu, 2026-12-03)";
// The bulk copy engine's figures were measured on an H100, the H200's GH100 die at the same boost clock
// (the device tool ran the call asked of an H200 there); its L2 ceiling with every SM loading, 7,742 GB/s
// by TMA, is the H200's by the LSU within 0.2%.
constexpr std::string_view kH100Tma =
    "measured: tests/data/gpu_ceilings/h100_tma_per_sm.json (scripts/gpu/tma_per_sm.cu, 2026-12-05, on an H100)";

/// What a preset's datasheet column is built from: published figures and the per-SM FP32 lanes.
struct Published {
  std::string_view source;  // "datasheet: <product>"
  double clock_hz;          // boost clock
  int fma_lanes;            // FP32 lanes per SM
  double tensor_flops;      // dense fp16/bf16 tensor rate
  double fp32_flops;        // fp32 (non-tensor) rate
  double dram_bytes_per_s;  // HBM bandwidth
};

Rate datasheet(double value, std::string_view source) { return Rate{Figure{value, source}, Figure{}}; }

// A preset's datasheet column: per-SM rates times SMs times boost clock; the tensor rate as published
// for mma.sync (an upper bound: the h200 measures 65% of it) and for wgmma (sm_90's path to it; an
// sm_80 preset has no wgmma: the same figure stands for its mma.sync); L2 bandwidth 2.5x DRAM; DRAM read and
// copy at the published bandwidth. Barrier, launch and round-trip costs are not published: left unknown.
GpuSpec from_datasheet(std::string name, std::string device, int sms, std::int64_t smem_per_sm,
                       std::int64_t smem_per_block, std::int64_t l2_bytes, const Published& d) {
  GpuSpec g;
  g.name = std::move(name);
  g.device = std::move(device);
  g.sms = sms;
  g.smem_per_sm = smem_per_sm;
  g.smem_per_block = smem_per_block;
  g.max_blocks_per_sm = 32;
  g.max_warps_per_sm = 64;
  g.l2_bytes = l2_bytes;
  g.clock_hz = datasheet(d.clock_hz, d.source);
  g.mma_f16_flops = g.mma_bf16_flops = datasheet(d.tensor_flops, d.source);
  g.wgmma_flops = datasheet(d.tensor_flops, d.source);
  g.fp32_flops = datasheet(d.fp32_flops, d.source);
  g.fp32_fma_per_s = datasheet(double(sms) * d.fma_lanes * d.clock_hz, kFmaRule);
  g.ex2_per_s = datasheet(sms * 16.0 * d.clock_hz, kEx2Rule);
  g.smem_bytes_per_s = datasheet(sms * 128.0 * d.clock_hz, kSmemRule);
  g.l2_bytes_per_s = datasheet(2.5 * d.dram_bytes_per_s, kL2Rule);
  g.dram_read_bytes_per_s = datasheet(d.dram_bytes_per_s, d.source);
  g.dram_copy_bytes_per_s = datasheet(d.dram_bytes_per_s, kCopyRule);
  return g;
}

// The H200: its datasheet column, and beside it tests/data/gpu_ceilings/h200.json and
// tests/data/gpu_latency/h200.json. mma.sync is what the project's kernels and FA2 issue; wgmma
// (Hopper's faster path, V3's GEMMs) from tests/data/gpu_ceilings/h200_wgmma.json: m64n128k16 with
// both operands in shared memory at two warpgroups per SM (ss_n128_2wg; one and three measure 953.2
// and 961.9 TFLOP/s, within 0.7%).
GpuSpec h200() {
  GpuSpec g = from_datasheet("h200", "NVIDIA H200 SXM", 132, 228 * KiB, 227 * KiB, 60 * 1024 * KiB,
                             {"datasheet: NVIDIA H200 SXM", 1.98e9, 128, 989.4 * T, 67 * T, 4.8 * T});
  g.clock_hz.datasheet.source = "datasheet: NVIDIA H100 SXM5 boost clock (the H200 is the same GH100 chip)";
  const auto measured = [](Rate& r, double value, std::string_view source) { r.measured = Figure{value, source}; };
  measured(g.clock_hz, 1980000.0 * 1e3, kH200Ceilings);
  measured(g.mma_f16_flops, 638.9 * T, kH200Ceilings);
  measured(g.mma_bf16_flops, 641.7 * T, kH200Ceilings);
  measured(g.wgmma_flops, 959.9 * T, kH200Wgmma);
  measured(g.ex2_per_s, 4144.94 * G, kH200Ceilings);
  measured(g.fp32_fma_per_s, 31840.82 * G, kH200Ceilings);
  measured(g.smem_bytes_per_s, 32918.0 * G, kH200Ceilings);
  measured(g.l2_bytes_per_s, 7729.1 * G, kH200Ceilings);
  measured(g.dram_read_bytes_per_s, 4513.3 * G, kH200Ceilings);
  measured(g.dram_copy_bytes_per_s, 3936.3 * G, kH200Ceilings);
  measured(g.barrier_cycles_4_warps, 20.8, kH200Ceilings);
  measured(g.barrier_cycles_8_warps, 28.8, kH200Ceilings);
  measured(g.launch_s, 3.621e-6, kH200Ceilings);
  measured(g.l2_hit_latency_s, 146.5e-9, kH200Latency);
  measured(g.dram_latency_s, 353.1e-9, kH200Latency);  // the file's dram_ns
  measured(g.tma_round_trip_s, 202.37e-9, kH100Tma);     // one_sm, 1 in flight, 1,024 B: ns_per_copy
  measured(g.tma_sm_bytes_per_s, 186.231 * G, kH100Tma);  // one_sm, 4 in flight, 45,056 B: gbps
  return g;
}

// A datasheet preset with the costs no datasheet publishes: the h200's measurements stand in.
GpuSpec with_h200_costs(GpuSpec g, const GpuSpec& h) {
  for (auto cost : {&GpuSpec::barrier_cycles_4_warps, &GpuSpec::barrier_cycles_8_warps, &GpuSpec::launch_s,
                    &GpuSpec::l2_hit_latency_s, &GpuSpec::dram_latency_s, &GpuSpec::tma_round_trip_s,
                    &GpuSpec::tma_sm_bytes_per_s})
    g.*cost = datasheet((h.*cost).measured.value, kH200Costs);
  return g;
}

// NVIDIA A100 (SXM4 80 GB), H100 (SXM5) and H200 (SXM) datasheets and the CUDA C++ Programming
// Guide's compute-capability table (8.0: 164 KB smem/SM, 163 KB/block; 9.0: 228 KB/SM, 227 KB/block;
// 32 resident blocks and 64 resident warps per SM). The H200's L2 is what the device reports (60 MiB =
// 62,914,560 bytes, tests/data/gpu_ceilings/h200.json); H100's is the datasheet's 50 MB.
const std::array<GpuSpec, 3>& gpus() {
  static const GpuSpec h = h200();
  static const std::array<GpuSpec, 3> table{{
      with_h200_costs(from_datasheet("a100", "NVIDIA A100 SXM4 80 GB", 108, 164 * KiB, 163 * KiB, 40 * MB,
                                     {"datasheet: NVIDIA A100 SXM4 80 GB", 1.41e9, 64, 312 * T, 19.5 * T, 2.039 * T}),
                      h),
      with_h200_costs(from_datasheet("h100", "NVIDIA H100 SXM5", 132, 228 * KiB, 227 * KiB, 50 * MB,
                                     {"datasheet: NVIDIA H100 SXM5", 1.98e9, 128, 989.4 * T, 67 * T, 3.35 * T}),
                      h),
      h,
  }};
  return table;
}

}  // namespace

double GpuSpec::dram_write_bytes_per_s() const {
  return 1.0 / (2.0 / dram_copy_bytes_per_s.value() - 1.0 / dram_read_bytes_per_s.value());
}

double GpuSpec::barrier_cycles(int warps) const {
  const double four = barrier_cycles_4_warps.value(), eight = barrier_cycles_8_warps.value();
  const double slope = (eight - four) / 4.0;
  return std::max(four, four + slope * (warps - 4));
}

const GpuSpec& gpu_preset(std::string_view name) { return find_preset(gpus(), name, "gpu"); }

std::vector<std::string> gpu_preset_names() { return preset_names(gpus()); }

}  // namespace flashlab
