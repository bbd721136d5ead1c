// The GPU presets (sim/src/config/gpu_spec.cpp): the h200's measured figures are the committed
// measurements (tests/data/gpu_ceilings/h200.json, tests/data/gpu_latency/h200.json), figure for
// figure; every figure names its source; the datasheet columns follow the published figures.
#include <doctest/doctest.h>

#include <fstream>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

#include "flashlab/config/gpu_spec.hpp"
#include "flashlab/contract/error.hpp"
#include "../../common/approx.hpp"

using namespace flashlab;

namespace {

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in);
  return nlohmann::json::parse(in);
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// Every Rate of a GpuSpec, by name.
const std::pair<const char*, Rate GpuSpec::*> kRates[] = {
    {"clock_hz", &GpuSpec::clock_hz},
    {"mma_f16_flops", &GpuSpec::mma_f16_flops},
    {"mma_bf16_flops", &GpuSpec::mma_bf16_flops},
    {"wgmma_flops", &GpuSpec::wgmma_flops},
    {"fp32_flops", &GpuSpec::fp32_flops},
    {"fp32_fma_per_s", &GpuSpec::fp32_fma_per_s},
    {"ex2_per_s", &GpuSpec::ex2_per_s},
    {"smem_bytes_per_s", &GpuSpec::smem_bytes_per_s},
    {"l2_bytes_per_s", &GpuSpec::l2_bytes_per_s},
    {"dram_read_bytes_per_s", &GpuSpec::dram_read_bytes_per_s},
    {"dram_copy_bytes_per_s", &GpuSpec::dram_copy_bytes_per_s},
    {"barrier_cycles_4_warps", &GpuSpec::barrier_cycles_4_warps},
    {"barrier_cycles_8_warps", &GpuSpec::barrier_cycles_8_warps},
    {"launch_s", &GpuSpec::launch_s},
    {"l2_hit_latency_s", &GpuSpec::l2_hit_latency_s},
    {"dram_latency_s", &GpuSpec::dram_latency_s},
    {"tma_round_trip_s", &GpuSpec::tma_round_trip_s},
    {"tma_sm_bytes_per_s", &GpuSpec::tma_sm_bytes_per_s},
};

}  // namespace

TEST_CASE("the h200 preset's measured figures equal tests/data/gpu_ceilings/h200.json and gpu_latency/h200.json") {
  const nlohmann::json j = read_json(FLASHLAB_TEST_DATA "/gpu_ceilings/h200.json");
  const GpuSpec& g = gpu_preset("h200");
  CHECK(g.measured());
  // each measured figure, scaled from the file's unit, and its source names the file
  const std::tuple<Rate GpuSpec::*, const char*, double> ceilings[] = {
      {&GpuSpec::clock_hz, "sm_clock_khz", 1e3},
      {&GpuSpec::mma_f16_flops, "mma_sync_f16_tflops", 1e12},
      {&GpuSpec::mma_bf16_flops, "mma_sync_bf16_tflops", 1e12},
      {&GpuSpec::ex2_per_s, "ex2_gops", 1e9},
      {&GpuSpec::fp32_fma_per_s, "fp32_fma_gops", 1e9},
      {&GpuSpec::smem_bytes_per_s, "smem_read_gbps", 1e9},
      {&GpuSpec::l2_bytes_per_s, "l2_read_gbps", 1e9},
      {&GpuSpec::dram_read_bytes_per_s, "dram_read_gbps", 1e9},
      {&GpuSpec::dram_copy_bytes_per_s, "dram_copy_gbps", 1e9},
      {&GpuSpec::barrier_cycles_4_warps, "barrier_cycles_4_warps", 1.0},
      {&GpuSpec::barrier_cycles_8_warps, "barrier_cycles_8_warps", 1.0},
      {&GpuSpec::launch_s, "launch_us", 1e-6},
  };
  for (const auto& [rate, key, scale] : ceilings) {
    CAPTURE(key);
    const Figure& m = (g.*rate).measured;
    CHECK(m.value == flashlab::testing::approx(j.at(key).get<double>() * scale));
    CHECK(m.source.find("tests/data/gpu_ceilings/h200.json") != std::string_view::npos);
  }
  // the preset's limits are the device's
  CHECK(g.l2_bytes == j.at("l2_bytes").get<std::int64_t>());
  CHECK(g.sms == j.at("sms").get<int>());
  CHECK(g.smem_per_sm == j.at("smem_per_sm_bytes").get<std::int64_t>());
  // the round trips: scripts/gpu/latency.cu's figures (the L2 hit's every run the same; DRAM's, a
  // chain over 256 MiB, within the runs' spread of 0.1 ns)
  const nlohmann::json latency = read_json(FLASHLAB_TEST_DATA "/gpu_latency/h200.json");
  for (const auto& run : latency.at("runs")) {
    CHECK(g.l2_hit_latency_s.measured.value == flashlab::testing::approx(run.at("l2_hit_ns").get<double>() * 1e-9));
    CHECK(g.dram_latency_s.measured.value == flashlab::testing::approx(run.at("dram_ns").get<double>() * 1e-9).epsilon(1e-3));
  }
  // wgmma (V3's GEMMs): m64n128k16 SS at two warpgroups per SM, tests/data/gpu_ceilings/h200_wgmma.json
  const nlohmann::json wgmma = read_json(FLASHLAB_TEST_DATA "/gpu_ceilings/h200_wgmma.json");
  CHECK(g.wgmma_flops.measured.value ==
        flashlab::testing::approx(wgmma.at("wgmma_f16_f32acc").at("ss_n128_2wg").at("tflops").get<double>() * 1e12));
  CHECK(g.wgmma_flops.measured.source.find("tests/data/gpu_ceilings/h200_wgmma.json") != std::string_view::npos);
  for (const Rate* r : {&g.l2_hit_latency_s, &g.dram_latency_s})
    CHECK(r->measured.source.find("tests/data/gpu_latency/h200.json") != std::string_view::npos);
  // the bulk copy engine (V3's loads), tests/data/gpu_ceilings/h100_tma_per_sm.json: a 1 KiB copy's round
  // trip alone, and one SM's intake of 45,056-byte copies four in flight
  const nlohmann::json tma = read_json(FLASHLAB_TEST_DATA "/gpu_ceilings/h100_tma_per_sm.json");
  int tma_rows = 0;
  for (const auto& row : tma.at("runs").at(0).at("rows")) {
    if (row.at("mode") != "one_sm") continue;
    const int inflight = row.at("inflight").get<int>(), bytes = row.at("bytes").get<int>();
    if (inflight == 1 && bytes == 1024) {
      ++tma_rows;
      CHECK(g.tma_round_trip_s.measured.value == flashlab::testing::approx(row.at("ns_per_copy").get<double>() * 1e-9));
    }
    if (inflight == 4 && bytes == 45056) {
      ++tma_rows;
      CHECK(g.tma_sm_bytes_per_s.measured.value == flashlab::testing::approx(row.at("gbps").get<double>() * 1e9));
    }
  }
  CHECK(tma_rows == 2);
  for (const Rate* r : {&g.tma_round_trip_s, &g.tma_sm_bytes_per_s})
    CHECK(r->measured.source.find("tests/data/gpu_ceilings/h100_tma_per_sm.json") != std::string_view::npos);
}

TEST_CASE("every rate of every preset has a figure for the time model, each marked with the kind of its source") {
  for (const std::string& name : gpu_preset_names()) {
    const GpuSpec& g = gpu_preset(name);
    CHECK(g.name == name);
    for (const auto& [rate_name, rate] : kRates) {
      CAPTURE(name);
      CAPTURE(rate_name);
      const Rate& r = g.*rate;
      CHECK(r.used().known());
      CHECK(r.used().value > 0);
      CHECK(r.value() == r.used().value);
      if (r.datasheet.known())
        CHECK((starts_with(r.datasheet.source, "datasheet: ") || starts_with(r.datasheet.source, "derived: ") ||
               starts_with(r.datasheet.source, "estimate: ")));
      if (r.measured.known()) CHECK(starts_with(r.measured.source, "measured: tests/data/"));
      // a measured preset measured every rate but the published FP32 FLOP/s (measured as FMA/s)
      CHECK(r.measured.known() == (g.measured() && rate != &GpuSpec::fp32_flops));
    }
    CHECK(g.rates_source() == g.mma_f16_flops.used().source);
  }
  CHECK_FALSE(gpu_preset("a100").measured());
  CHECK_FALSE(gpu_preset("h100").measured());
  CHECK_THROWS_AS(gpu_preset("v100"), ConfigError);
}

TEST_CASE("the datasheet columns: published figures, per-SM rates times SMs times boost clock, the h200's costs") {
  const GpuSpec& a100 = gpu_preset("a100");
  const GpuSpec& h200 = gpu_preset("h200");
  // A100 SXM4: 108 SMs at 1.41 GHz, 64 FP32 lanes per SM; 312 TFLOP/s dense fp16, 19.5 TFLOP/s fp32
  CHECK(a100.ex2_per_s.datasheet.value == flashlab::testing::approx(108 * 16 * 1.41e9));
  CHECK(a100.smem_bytes_per_s.datasheet.value == flashlab::testing::approx(108 * 128 * 1.41e9));
  CHECK(a100.l2_bytes_per_s.datasheet.value == flashlab::testing::approx(2.5 * 2.039e12));
  // the derived FMA rate is the published FP32 rate to within 0.1% (2 FLOPs per FMA)
  CHECK(2 * a100.fp32_fma_per_s.datasheet.value == flashlab::testing::approx(a100.fp32_flops.datasheet.value).epsilon(1e-3));
  CHECK(a100.mma_f16_flops.value() == flashlab::testing::approx(312e12));
  // the H200 measures mma.sync at 65% of the datasheet's dense tensor rate (docs/model.md "Presets")
  CHECK(h200.mma_f16_flops.measured.value / h200.mma_f16_flops.datasheet.value == flashlab::testing::approx(0.65).epsilon(0.01));
  // no datasheet publishes barrier, launch or round-trip costs: the h200 has only its measurement,
  // the others take it as an estimate
  for (auto cost : {&GpuSpec::barrier_cycles_4_warps, &GpuSpec::barrier_cycles_8_warps, &GpuSpec::launch_s,
                    &GpuSpec::l2_hit_latency_s, &GpuSpec::dram_latency_s, &GpuSpec::tma_round_trip_s,
                    &GpuSpec::tma_sm_bytes_per_s}) {
    CHECK_FALSE((h200.*cost).datasheet.known());
    CHECK((a100.*cost).datasheet.value == (h200.*cost).measured.value);
    CHECK(starts_with((a100.*cost).datasheet.source, "estimate: "));
  }
}

TEST_CASE("the write bandwidth follows from read and copy, barriers are linear in the warps") {
  const GpuSpec& g = gpu_preset("h200");
  // a copy of B bytes (B read, B written) at the copy rate takes B/read + B/write
  const double b = 1e9;
  CHECK(2 * b / g.dram_copy_bytes_per_s.value() ==
        flashlab::testing::approx(b / g.dram_read_bytes_per_s.value() + b / g.dram_write_bytes_per_s()));
  CHECK(g.barrier_cycles(4) == flashlab::testing::approx(20.8));
  CHECK(g.barrier_cycles(8) == flashlab::testing::approx(28.8));
  CHECK(g.barrier_cycles(1) == flashlab::testing::approx(20.8));
  CHECK(g.barrier_cycles(12) == flashlab::testing::approx(36.8));
}
