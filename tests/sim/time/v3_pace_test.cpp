// The pace of V3's consumer instruction streams in the timeline (sim/src/time/v3_pace.hpp): its
// constants are the line scripts/gpu/v3_kernel/stalls_table.py fits to the PC samples
// (tests/data/gpu_v3/v3_pace_h100.json; ctest v3_stalls_table checks that file against the raw
// pages), and the pace against its closed form.
#include <doctest/doctest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "../../../sim/src/time/v3_pace.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "../../common/approx.hpp"

using namespace flashlab;

TEST_CASE("V3 pace: the timeline's cycles per compiled instruction are the PC samples' line") {
  std::ifstream in(std::string(FLASHLAB_TEST_DATA) + "/gpu_v3/v3_pace_h100.json");
  REQUIRE(in);
  const nlohmann::json j = nlohmann::json::parse(in);
  CHECK(time_detail::kPaceBase == flashlab::testing::approx(j.at("c0").get<double>()).epsilon(1e-9));
  CHECK(time_detail::kPacePerOther == flashlab::testing::approx(j.at("c1").get<double>()).epsilon(1e-9));
  CHECK(j.at("points").size() == 7);
}

TEST_CASE("V3 pace: seconds per estimated instruction (closed form on the h200 preset)") {
  Config c;
  c.algo = Algo::v3;
  c.n_q = c.n_k = 4096;
  c.d = 128;
  c.gpu = "h200";
  const Problem ws = resolve(c);
  c.warp_specialize = false, c.pingpong = false;
  const Problem inline_loads = resolve(c);
  // 959.9 TFLOP/s over 132 SMs at 4,096 FLOP a cycle: 1.7754 GHz
  const double clock = ws.gpu.wgmma_flops.value() / (4096.0 * 132.0);
  CHECK(clock == flashlab::testing::approx(1.7754e9).epsilon(1e-3));
  CHECK(time_detail::pace_s(ws, 0.0) == flashlab::testing::approx(1.33 * 2.729 / clock).epsilon(1e-12));
  CHECK(time_detail::pace_s(ws, 2.0) == flashlab::testing::approx(1.33 * (2.729 + 2 * 1.182) / clock).epsilon(1e-12));
  CHECK(time_detail::pace_s(inline_loads, 1.0) ==
        flashlab::testing::approx(1.58 * (2.729 + 1.182) / clock).epsilon(1e-12));
}
