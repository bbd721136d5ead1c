// `count` and `compare` with the L2 and time models: the JSON keys scripts read, requests beside
// DRAM, and the line saying which of them the FA papers count.
#include <doctest/doctest.h>

#include "run_cli.hpp"
#include "../common/approx.hpp"

TEST_CASE("count --json: predicted.* keys, the l2 and dram levels, and the compulsory floor of V2") {
  const nlohmann::json j = run_json("count --seq 4096 --heads 16 --br 128 --bc 128 --warps 8 --json");
  const nlohmann::json& p = j.at("predicted");
  CHECK(p.at("time_s").get<double>() > 0);
  CHECK(p.at("tflops").get<double>() > 0);
  CHECK(p.at("bound").is_string());
  CHECK(p.at("ceilings").at("kind") == "measured");
  // Q, K, V read once (16 heads x 4096 x 64 x 2 bytes each): K/V of the resident heads fit the L2
  const std::uint64_t qkv = 16ull * 4096 * 64 * 2;
  CHECK(u64_at(j, "predicted.dram_read_bytes") == 3 * qkv);
  CHECK(u64_at(j, "memory.dram.total_read_bytes") == 3 * qkv);
  CHECK(u64_at(j, "predicted.dram_write_bytes") == u64_at(j, "memory.dram.total_write_bytes"));
  // the requests (the papers' HBM) are 32 K/V blocks re-read per Q block: far more than DRAM
  CHECK(u64_at(j, "hbm.read_bytes.K") == 32 * qkv);
  CHECK(u64_at(j, "memory.l2.read_bytes.K") == 32 * qkv);
  REQUIRE(p.at("launches").size() == 1);
  const nlohmann::json& l = p.at("launches")[0];
  CHECK(l.at("name") == "v2_forward");
  CHECK(l.at("grid") == 32 * 16);
  for (const char* u : {"tensor", "sfu", "fp32", "smem", "barrier", "l2", "latency", "dram", "launch"})
    CHECK(l.at("unit_s").contains(u));
  CHECK(p.at("time_s").get<double>() == flashlab::testing::approx(l.at("time_s").get<double>()));
}

TEST_CASE("count and compare print requests and DRAM side by side and say which the FA papers count") {
  for (const char* cmd : {"count --seq 2048 --heads 4", "compare --seq 2048 --heads 4"}) {
    const CliResult r = run_cli(cmd);
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(r.out.find("The FA papers' \"HBM accesses\" are the requests (hbm)") != std::string::npos);
    CHECK(r.out.find("DRAM") != std::string::npos);
    CHECK(r.out.find("redicted") != std::string::npos);
  }
  const nlohmann::json c = run_json("compare --seq 2048 --heads 4 --json");
  for (const char* a : {"standard", "v1", "v2"}) CHECK(c.at("algos").at(a).at("predicted").at("time_s").get<double>() > 0);
  CHECK(c.at("ratios").contains("predicted_seconds"));
  CHECK(c.at("ratios").contains("dram_read_bytes"));
}

// SRAM M = 512 KiB with auto tiles at d = 64, fp32: the tile fits M, and V1 holds Q_i, K_j, V_j and
// S_ij in SRAM, (B_r d + 2 B_c d + B_r B_c) x 4 bytes — more than the H200's 233,472 bytes of shared
// memory per SM. No wave can run, so there is no time to predict.
TEST_CASE("count: a block that does not fit on an SM has no predicted time (null in JSON, 'none' in text)") {
  const std::string args = "count --algo v1 --sram 524288 --br auto --bc auto --dtype fp32 --seq 8192 --d 64";
  const nlohmann::json j = run_json(args + " --json");
  CHECK(j.at("grid").at("fits_on_sm") == false);
  const std::uint64_t br = j.at("config").at("b_r"), bc = j.at("config").at("b_c");
  CHECK(j.at("sram").at("peak_bytes") == (br * 64 + 2 * bc * 64 + br * bc) * 4);
  CHECK(j.at("sram").at("peak_bytes").get<std::uint64_t>() > 233472);
  for (const char* key : {"time_s", "tflops", "peak_fraction", "bound"}) CHECK(j.at("predicted").at(key).is_null());
  const CliResult r = run_cli(args);
  CHECK(r.code == 0);
  CHECK(r.out.find("Predicted time on h200: none: a thread block does not fit on an SM") != std::string::npos);
  // a block that fits keeps its prediction
  CHECK(run_json("count --algo v1 --seq 8192 --d 64 --json").at("predicted").at("time_s").is_number());
}
