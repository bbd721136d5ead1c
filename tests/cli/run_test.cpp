// `flashlab run`: numerics through the command line. Values checked here are derived by hand
// (shared/cases R1); the error columns come from the numerics library and are checked against
// its own tolerances by the result column.
#include <doctest/doctest.h>

#include "run_cli.hpp"

namespace {

// The snapshots of one algorithm taken on a tile (j >= 0), as (m, l) pairs per step.
std::vector<std::pair<std::vector<float>, std::vector<float>>> tile_steps(const nlohmann::json& steps) {
  std::vector<std::pair<std::vector<float>, std::vector<float>>> out;
  for (const auto& s : steps)
    if (s.at("j").get<std::int64_t>() >= 0) out.emplace_back(s.at("m"), s.at("l"));
  return out;
}

}  // namespace

TEST_CASE("run --steps, cases R1: bottom-right causal, N_q = 2 < N_k = 5, Q = K = 0, V_j = j") {
  // Every logit is 0, so m = 0 once a key is seen and l counts the visible keys seen so far.
  // Row 0 sees keys 0..3, row 1 keys 0..4; K/V blocks of 2 keys: after j = 0, 1, 2 the running
  // l is [2, 2], [4, 4], [4, 5] (L = [ln 4, ln 5]).
  const nlohmann::json j = run_json(
      "run --algo v1,v2 --nq 2 --nk 5 --d 1 --br 2 --bc 2 --dtype fp32 --mask causal-br --q zero --k zero "
      "--v index --steps 0 --json");
  for (const char* algo : {"v1", "v2"}) {
    CAPTURE(algo);
    const nlohmann::json& r = j.at("results").at(algo);
    CHECK(r.at("within") == true);
    CHECK(r.at("finite") == true);
    CHECK(r.at("max_abs_L").get<double>() < 1e-6);
    const auto steps = tile_steps(j.at("steps").at(algo));
    REQUIRE(steps.size() == 3);
    const std::vector<std::vector<float>> l{{2, 2}, {4, 4}, {4, 5}};
    for (std::size_t k = 0; k < 3; ++k) {
      CHECK(steps[k].first == std::vector<float>{0, 0});
      CHECK(steps[k].second == l[k]);
    }
  }
}

TEST_CASE("run --algo all: the three algorithms within tolerance on a ragged, windowed fp16 config") {
  const CliResult r = run_cli("run --algo all --nq 200 --nk 300 --d 48 --br 64 --bc 32 --mask window:40,10 "
                              "--dtype fp16 --seed 7");
  INFO(r.out, r.err);
  REQUIRE(r.code == 0);
  for (const char* algo : {"standard ", "v1 ", "v2 "}) CHECK(r.out.find(algo) != std::string::npos);
  std::size_t oks = 0;
  for (std::size_t at = r.out.find(" ok\n"); at != std::string::npos; at = r.out.find(" ok\n", at + 1)) ++oks;
  CHECK(oks == 3);
  CHECK(r.out.find("FAIL") == std::string::npos);
}

TEST_CASE("run --steps I --rows R prints R rows of Q block I") {
  const CliResult r = run_cli("run --seq 256 --d 32 --br 64 --bc 64 --steps 2 --rows 2");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("Q block 2 (rows 128..191)") != std::string::npos);
  CHECK(r.out.find("m[128]") != std::string::npos);
  CHECK(r.out.find("l[129]") != std::string::npos);
  CHECK(r.out.find("m[130]") == std::string::npos);
}
