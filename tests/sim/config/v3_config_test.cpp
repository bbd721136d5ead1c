// V3's configuration: FA3's tile per d (hopper/tile_size.h), its switches and their errors.
#include <doctest/doctest.h>

#include <string>

#include "flashlab/contract/error.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "../../common/config_helpers.hpp"

using namespace flashlab;

namespace {

Config v3(std::int64_t d, MaskKind m = MaskKind::none) {
  Config c;
  c.algo = Algo::v3;
  c.d = d;
  c.mask = Mask{m, 0, 0};
  return c;
}

// The field of the ConfigError resolve(c) throws ("" when it accepts c).
std::string refused_field(const Config& c) {
  try {
    resolve(c);
  } catch (const ConfigError& e) {
    return e.field();
  }
  return "";
}

}  // namespace

// Dao-AILab/flash-attention hopper/tile_size.h tile_size_fwd_sm90, element size 2, headdim_v = d,
// read off the file by hand: {kBlockM, kBlockN} and MmaPV_is_RS.
TEST_CASE("FA3's forward tile per head dim, no mask and causal, as hopper/tile_size.h lists it") {
  struct Row {
    std::int64_t d, b_r, b_c, b_c_causal;
    bool rs, rs_causal;
  };
  const Row rows[] = {{64, 192, 192, 128, false, true},  {96, 192, 144, 144, false, false},
                      {128, 128, 176, 128, true, true},  {192, 128, 112, 112, true, true},
                      {256, 128, 80, 80, true, true}};
  for (const Row& r : rows) {
    CAPTURE(r.d);
    const Fa3Tile none = fa3_forward_tile(r.d, MaskKind::none), causal = fa3_forward_tile(r.d, MaskKind::causal_br);
    CHECK(none.b_r == r.b_r);
    CHECK(none.b_c == r.b_c);
    CHECK(fa3_p_in_registers(r.d, none.b_c) == r.rs);
    CHECK(causal.b_r == r.b_r);
    CHECK(causal.b_c == r.b_c_causal);
    CHECK(fa3_p_in_registers(r.d, causal.b_c) == r.rs_causal);
    const Problem p = resolve(v3(r.d));
    CHECK(p.tiling.b_r == r.b_r);
    CHECK(p.tiling.b_c == r.b_c);
  }
  CHECK_THROWS_AS(fa3_forward_tile(257, MaskKind::none), ConfigError);
}

TEST_CASE("FA3's defaults: 2 stages, warp specialization, overlap, persistent, and ping-pong with 2+ warpgroups up to d = 128") {
  const Problem p64 = resolve(v3(64)), p128 = resolve(v3(128)), p256 = resolve(v3(256));
  CHECK(p128.hopper.stages == 2);
  CHECK(p128.hopper.warp_specialize);
  CHECK(p128.hopper.intra_overlap);
  CHECK(p128.hopper.scheduler == TileScheduler::persistent);
  CHECK(p64.hopper.pingpong);    // 192 rows: 3 consumer warpgroups, d <= 128
  CHECK(p128.hopper.pingpong);   // 128 rows: 2
  CHECK(!p256.hopper.pingpong);  // d > 128: UseSchedulerBarrier off
  // warps: 4 per consumer warpgroup (B_r / 64) and the producer warpgroup's 4
  CHECK(p64.warps == 16);
  CHECK(p128.warps == 12);
  Config c = v3(128);
  c.warp_specialize = false;
  CHECK(resolve(c).warps == 8);
  CHECK(resolve(c).consumer_groups() == 2);
}

TEST_CASE("V3's switches: the values given win, bad values and combinations name their field") {
  Config c = v3(128);
  c.b_c = 128;  // 3 stages of 176 keys would not fit: (128 + 6 x 176) x 128 x 2 > 227 KiB
  c.stages = 3;
  c.pingpong = false;
  c.intra_overlap = false;
  c.scheduler = TileScheduler::grid;
  const Problem p = resolve(c);
  CHECK(p.hopper == HopperSwitches{.warp_specialize = true, .stages = 3, .pingpong = false, .intra_overlap = false,
                                   .scheduler = TileScheduler::grid});
  CHECK_THROWS_AS(parse_stages("0"), ConfigError);
  CHECK_THROWS_AS(parse_stages("4"), ConfigError);
  CHECK_THROWS_AS(parse_scheduler("dynamic"), ConfigError);
  CHECK_THROWS_AS(parse_on_off("pingpong", "yes"), ConfigError);

  Config other = test::small(Algo::v2, 256, 256, 64, 64, 64);
  other.stages = 2;
  CHECK(refused_field(other) == "stages");  // a switch of --algo v3 only
  other = test::small(Algo::v1, 256, 256, 64, 64, 64);
  other.scheduler = TileScheduler::grid;
  CHECK(refused_field(other) == "scheduler");

  Config one = v3(128);
  one.b_r = 64;
  one.pingpong = true;
  CHECK(refused_field(one) == "pingpong");  // one consumer warpgroup has no partner
  Config big = v3(256);
  big.stages = 3;  // Q 64 KiB + 3 x 2 x 40 KiB > 227 KiB
  CHECK(refused_field(big) == "br x bc");
  for (auto [field, edit] : std::initializer_list<std::pair<const char*, void (*)(Config&)>>{
           {"dtype", [](Config& x) { x.dtype = Dtype::fp32; }},
           {"pass", [](Config& x) { x.pass = Pass::backward; }},
           {"d", [](Config& x) { x.d = 512; }},
           {"br", [](Config& x) { x.b_r = 96; }},
           {"bc", [](Config& x) { x.b_c = 72; }},
           {"order", [](Config& x) { x.order = LoopOrder::kv_outer; }},
           {"warps", [](Config& x) { x.warps = 4; }},
           {"br/bc", [](Config& x) { x.auto_blocks = true; }},
           {"gpu", [](Config& x) { x.gpu = "a100"; }},  // FA3's schedule is Hopper's
           {"block-skip", [](Config& x) { x.block_skip = false; }}}) {
    Config x = v3(128);
    edit(x);
    CHECK_MESSAGE(refused_field(x) == field, field);
  }
  Config h100 = v3(128);
  h100.gpu = "h100";  // the other Hopper preset
  CHECK_NOTHROW(resolve(h100));
}
