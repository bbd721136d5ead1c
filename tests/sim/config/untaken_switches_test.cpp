// Switches an algorithm does not take (config.hpp untaken_switch, without_untaken_switches): what the
// viewer does when the algorithm changes under switches set for another one (viz/panels/
// config_panel.cpp), and what a command running several algorithms does for each. Expected values
// from the rule's statement (docs/model.md "Variants"): V1 and V2 take --order, --grid, --rescale,
// --warp-split and --block-skip; V3 takes --block-skip only; standard attention none.
#include <doctest/doctest.h>

#include "flashlab/config/config.hpp"
#include "flashlab/contract/error.hpp"
#include "flashlab/schedule/resolve.hpp"

using namespace flashlab;

namespace {

Config all_switches(Algo a) {
  Config c;
  c.algo = a;
  c.order = LoopOrder::kv_outer;
  c.grid = GridKind::q_block;
  c.rescale = Rescale::step;
  c.split = WarpSplit::split_k;
  c.block_skip = true;
  return c;
}

}  // namespace

TEST_CASE("switches an algorithm does not take: refused as given, dropped by without_untaken_switches") {
  // standard attention takes none: refused, then every one dropped and the config resolves
  Config s = all_switches(Algo::standard);
  CHECK_THROWS_AS(resolve(s), ConfigError);
  const Config s2 = without_untaken_switches(s, Untaken::all);
  CHECK_FALSE(s2.order.has_value());
  CHECK_FALSE(s2.grid.has_value());
  CHECK_FALSE(s2.rescale.has_value());
  CHECK_FALSE(s2.split.has_value());
  CHECK_FALSE(s2.block_skip.has_value());
  CHECK_NOTHROW(resolve(s2));
  // V3 takes block skip (on) only
  Config v = all_switches(Algo::v3);
  CHECK_THROWS_AS(resolve(v), ConfigError);
  const Config v2 = without_untaken_switches(v, Untaken::all);
  CHECK_FALSE(v2.order.has_value());
  CHECK_FALSE(v2.grid.has_value());
  CHECK_FALSE(v2.rescale.has_value());
  CHECK_FALSE(v2.split.has_value());
  REQUIRE(v2.block_skip.has_value());
  CHECK(*v2.block_skip);
  CHECK_NOTHROW(resolve(v2));
  // V1 takes all five: nothing dropped
  const Config one = without_untaken_switches(all_switches(Algo::v1), Untaken::all);
  CHECK(one.order == LoopOrder::kv_outer);
  CHECK(one.grid == GridKind::q_block);
  CHECK(one.rescale == Rescale::step);
  CHECK(one.split == WarpSplit::split_k);
  CHECK(one.block_skip == true);
}
