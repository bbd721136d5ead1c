// `flashlab explain`: the walk from V1 to V2 one switch at a time. Each step must be exactly the
// variant `count` runs with the same switches (docs/model.md "Variants"), in the seed's order.
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "run_cli.hpp"
#include "../common/approx.hpp"

namespace {

const std::string kShape = " --nq 512 --nk 512 --d 64 --br 64 --bc 64 --heads 4 --dtype fp16";

}  // namespace

TEST_CASE("explain: six steps from V1 to V2, each the count of the same switches") {
  const nlohmann::json e = run_json("explain" + kShape + " --json");
  const nlohmann::json& steps = e.at("steps");
  REQUIRE(steps.size() == 6);
  // The switches each step turns on, cumulatively, and count's flags for the same variant.
  const std::vector<std::string> names{"v1", "order", "grid", "rescale", "warp_split", "block_skip"};
  const std::vector<std::string> flags{
      "--algo v1",
      "--algo v1 --order q-outer",
      "--algo v1 --order q-outer --grid qblock",
      "--algo v1 --order q-outer --grid qblock --rescale delayed",
      "--algo v1 --order q-outer --grid qblock --rescale delayed --warp-split split-q",
      "--algo v2"};  // every switch turned: V2 itself
  for (std::size_t k = 0; k < steps.size(); ++k) {
    CAPTURE(k);
    const nlohmann::json& s = steps[k];
    CHECK(s.at("step") == names[k]);
    const nlohmann::json c = run_json("count " + flags[k] + kShape + " --json");
    CHECK(s.at("predicted").at("time_s").get<double>() == flashlab::testing::approx(c.at("predicted").at("time_s").get<double>()));
    CHECK(s.at("figures").at("hbm_total_bytes") == c.at("hbm").at("total_bytes"));
    CHECK(s.at("figures").at("grid_blocks") == c.at("grid").at("blocks"));
    CHECK(s.at("switches").at("order") == c.at("config").at("order"));
    CHECK(s.at("switches").at("grid") == c.at("config").at("grid"));
  }
  // What the walk must show (docs/model.md "Variants"): the Q outer order stops O_i's round trips
  // (fewer HBM bytes), the grid over Q blocks multiplies the thread blocks by T_r = 8, delayed
  // rescaling removes operations, split-Q removes the warps' shared-memory reductions.
  const auto fig = [&](std::size_t k, const char* key) { return steps[k].at("figures").at(key).get<double>(); };
  CHECK(fig(1, "hbm_total_bytes") < fig(0, "hbm_total_bytes"));
  CHECK(fig(2, "grid_blocks") == 8 * fig(1, "grid_blocks"));
  CHECK(fig(3, "ops_all") < fig(2, "ops_all"));
  CHECK(fig(3, "warp_smem_bytes") > 0);
  CHECK(fig(4, "warp_smem_bytes") == 0);
  // no mask: block skip skips nothing
  CHECK(fig(5, "hbm_total_bytes") == fig(4, "hbm_total_bytes"));
}

TEST_CASE("explain: the table names each step and what moved, a switch flag is refused") {
  const CliResult r = run_cli("explain" + kShape);
  INFO(r.err);
  REQUIRE(r.code == 0);
  for (const char* s : {"V1 (FA1 Algorithm 1)", "+ Q outer loop: O_i on chip", "+ one block per Q block",
                        "+ delayed rescaling", "+ split-Q warps", "+ block skip = V2 (FA2 Alg. 1)",
                        "What each step changes:", "grid blocks 4 -> 32"})
    CHECK(r.out.find(s) != std::string::npos);
  const CliResult bad = run_cli("explain" + kShape + " --order q-outer");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("order = q-outer: not with explain") != std::string::npos);
}
