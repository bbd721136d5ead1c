// The h200 preset's ceilings are the committed measurement (tests/data/gpu_ceilings/h200.json),
// figure for figure; the other presets are marked as datasheet figures.
#include <doctest/doctest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "flashlab/config/ceilings.hpp"
#include "flashlab/config/config.hpp"
#include "flashlab/contract/error.hpp"

using namespace flashlab;

TEST_CASE("the h200 preset's ceilings equal tests/data/gpu_ceilings/h200.json") {
  std::ifstream in(FLASHLAB_TEST_DATA "/gpu_ceilings/h200.json");
  REQUIRE(in);
  const nlohmann::json j = nlohmann::json::parse(in);
  const Ceilings& c = gpu_ceilings("h200");
  CHECK(c.measured);
  CHECK(c.clock_hz == doctest::Approx(j["sm_clock_khz"].get<double>() * 1e3));
  CHECK(c.mma_f16_flops == doctest::Approx(j["mma_sync_f16_tflops"].get<double>() * 1e12));
  CHECK(c.mma_bf16_flops == doctest::Approx(j["mma_sync_bf16_tflops"].get<double>() * 1e12));
  CHECK(c.ex2_per_s == doctest::Approx(j["ex2_gops"].get<double>() * 1e9));
  CHECK(c.fp32_fma_per_s == doctest::Approx(j["fp32_fma_gops"].get<double>() * 1e9));
  CHECK(c.smem_bytes_per_s == doctest::Approx(j["smem_read_gbps"].get<double>() * 1e9));
  CHECK(c.l2_bytes_per_s == doctest::Approx(j["l2_read_gbps"].get<double>() * 1e9));
  CHECK(c.dram_read_bytes_per_s == doctest::Approx(j["dram_read_gbps"].get<double>() * 1e9));
  CHECK(c.dram_copy_bytes_per_s == doctest::Approx(j["dram_copy_gbps"].get<double>() * 1e9));
  CHECK(c.barrier_cycles_4_warps == doctest::Approx(j["barrier_cycles_4_warps"].get<double>()));
  CHECK(c.barrier_cycles_8_warps == doctest::Approx(j["barrier_cycles_8_warps"].get<double>()));
  CHECK(c.launch_s == doctest::Approx(j["launch_us"].get<double>() * 1e-6));
  CHECK(c.l2_bytes == j["l2_bytes"].get<double>());
  // the preset's L2 and SMs are the device's
  const GpuSpec& g = gpu_preset("h200");
  CHECK(g.l2_bytes == j["l2_bytes"].get<std::int64_t>());
  CHECK(g.sms == j["sms"].get<int>());
  CHECK(g.smem_per_sm == j["smem_per_sm_bytes"].get<std::int64_t>());
  // the L2 hit's round trip: scripts/gpu/latency.cu's figure (every run of it the same)
  std::ifstream lat(FLASHLAB_TEST_DATA "/gpu_latency/h200.json");
  REQUIRE(lat);
  const nlohmann::json latency = nlohmann::json::parse(lat);  // kept: a range-for over a temporary's member dangles
  for (const auto& run : latency.at("runs")) {
    CHECK(c.l2_hit_latency_s == doctest::Approx(run.at("l2_hit_ns").get<double>() * 1e-9));
    // the DRAM round trip (a chain over 256 MiB), within the runs' spread of 0.1 ns
    CHECK(c.dram_latency_s == doctest::Approx(run.at("dram_ns").get<double>() * 1e-9).epsilon(1e-3));
  }
}

TEST_CASE("ceilings of the other presets are datasheet figures, the write bandwidth follows from read and copy") {
  CHECK_FALSE(gpu_ceilings("a100").measured);
  CHECK_FALSE(gpu_ceilings("h100").measured);
  CHECK_THROWS_AS(gpu_ceilings("v100"), ConfigError);
  const Ceilings& c = gpu_ceilings("h200");
  // a copy of B bytes (B read, B written) at the copy rate takes B/read + B/write
  const double b = 1e9;
  CHECK(2 * b / c.dram_copy_bytes_per_s == doctest::Approx(b / c.dram_read_bytes_per_s + b / c.dram_write_bytes_per_s()));
  CHECK(c.barrier_cycles(4) == doctest::Approx(20.8));
  CHECK(c.barrier_cycles(8) == doctest::Approx(28.8));
  CHECK(c.barrier_cycles(1) == doctest::Approx(20.8));
}
