// The deal of a launch's thread blocks to the SMs' slots (sim/src/time/block_deal.hpp) against a list
// scheduler written here, and past kDealtExactly blocks against the bounds any greedy deal obeys.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "../../../sim/src/time/block_deal.hpp"
#include "../../common/approx.hpp"

using namespace flashlab::time_detail;

namespace {

/// Brute force: each block, in order, to the slot that frees first (the lowest on a tie).
double list_schedule(const std::vector<double>& dur, std::int64_t bh, std::int64_t slots) {
  std::vector<double> finish(std::size_t(slots), 0.0);
  for (std::int64_t g = 0; g < std::int64_t(dur.size()) * bh; ++g) {
    auto q = std::min_element(finish.begin(), finish.end());
    *q += dur[std::size_t(g % std::int64_t(dur.size()))];
  }
  return *std::max_element(finish.begin(), finish.end());
}

}  // namespace

TEST_CASE("deal: the latest finish of a list schedule, and past kDealtExactly blocks within one block of it") {
  const std::vector<double> dur = {3.0, 1.0, 2.5, 0.5, 4.0};  // a (batch, head)'s five blocks
  for (std::int64_t slots : {1, 7, 132, 396})
    for (std::int64_t bh : {1, 3, 100, 1000}) {
      CAPTURE(slots);
      CAPTURE(bh);
      CHECK(deal(dur, bh, slots).first == flashlab::testing::approx(list_schedule(dur, bh, slots)));
      CHECK(deal(dur, bh, slots).second == flashlab::testing::approx(11.0 * double(bh)));
    }
  // past kDealtExactly blocks: the brute force is still cheap at twice it, and any greedy deal ends
  // within one block (4.0) of it; 10^12 pairs keep W / slots <= makespan <= W / slots + 4
  const std::int64_t bh = 2 * kDealtExactly / 5 + 3;
  CHECK(std::abs(deal(dur, bh, 396).first - list_schedule(dur, bh, 396)) <= 4.0);
  const std::int64_t huge = 1'000'000'000'000;
  const double w = 11.0 * double(huge) / 396;
  CHECK(deal(dur, huge, 396).first >= w * (1 - 1e-12));
  CHECK(deal(dur, huge, 396).first <= w + 4.0);
  CHECK(deal(dur, huge, 396).second == flashlab::testing::approx(11.0 * double(huge)));
}

TEST_CASE("deal_persistent: static in closed form, longest-first past kDealtExactly tiles within one tile of the tile by tile deal") {
  const std::vector<double> dur = {1.0, 2.0, 3.0, 4.0};  // causal: Q block i's tile ~ i + 1
  const std::int64_t bh = kDealtExactly / 2;  // twice kDealtExactly tiles
  for (bool longest_first : {false, true}) {
    CAPTURE(longest_first);
    // the tile by tile deal: thread block c takes tiles c, c + 132, ... (static) or the first free
    // (longest first), here written out
    std::vector<double> finish(132, 0.5);
    for (std::int64_t t = 0; t < 4 * bh; ++t) {
      const double d = dur[std::size_t(longest_first ? 3 - t % 4 : t % 4)];
      if (longest_first) *std::min_element(finish.begin(), finish.end()) += d;
      else finish[std::size_t(t % 132)] += d;
    }
    const double exact = *std::max_element(finish.begin(), finish.end());
    const auto [makespan, busy] = deal_persistent(dur, bh, 132, longest_first, 0.5);
    if (longest_first) CHECK(std::abs(makespan - exact) <= 4.0);
    else CHECK(makespan == flashlab::testing::approx(exact));  // static: in closed form, not extrapolated
    // 132 is a multiple of T_r = 4: static thread block c always takes Q block c mod 4, so block 3 (of
    // those on Q block 3, one of the 4 bh mod 132 = 8 with a tile more) ends last at 0.5 + 4 x its
    // ceil((4 bh - 3) / 132) tiles: an uneven deal that spreading work over the blocks would even out
    if (!longest_first) CHECK(makespan == flashlab::testing::approx(0.5 + 4.0 * double((4 * bh - 3 + 131) / 132)));
    CHECK(busy == flashlab::testing::approx(10.0 * double(bh) + 132 * 0.5));
  }
}

TEST_CASE("deal_shared: processor sharing in closed form") {
  // one SM, two blocks sharing it: alone they take 1 and 2, side by side 1.6 and 3.0. A ends at 1.6,
  // when B has done 1.6 / 3.0 of its work; the rest, alone, takes (1 - 1.6 / 3) x 2: B ends at 2.5333
  const std::vector<std::vector<double>> two = {{1.0, 2.0}, {1.6, 3.0}};
  CHECK(deal_shared(two, {1, 1}, 1, 1, 2).first == flashlab::testing::approx(1.6 + (1 - 1.6 / 3.0) * 2.0));
  // busy: k x the time the SM holds a block
  CHECK(deal_shared(two, {1, 1}, 1, 1, 2).second == flashlab::testing::approx(2 * (1.6 + (1 - 1.6 / 3.0) * 2.0)));
  // 4 SMs of 2 slots, 11 equal blocks (1 alone, 1.5 two at a time): a full wave of 8 ends at 1.5, and
  // the last 3 — fewer than the SMs — go one per SM, each alone: 2.5 (three SMs' worth of two: 3.0)
  const std::vector<std::vector<double>> equal = {{1.0}, {1.5}};
  CHECK(deal_shared(equal, {4}, 11, 4, 2).first == flashlab::testing::approx(2.5));
  // 8 + 6 blocks of 4 steps: at 1.5 SMs 0 and 1 take one each while 6 and 5 are left (no fewer than
  // the SMs), SMs 2 and 3 one each with 4 and 3 left; then 2 are left, fewer than the SMs, so the next
  // goes a step (1.5 / 4) later: to SMs 2 and 3 at 1.875, first in line. SMs 0, 1: a block alone, 2.5.
  // SMs 2, 3: A alone 0.375 of its work by 1.875, then shared: its 0.625 left at 1 / 1.5 ends at
  // 2.8125, when B has done 0.625 and ends its 0.375 alone at 3.1875
  CHECK(deal_shared(equal, {4}, 14, 4, 2).first == flashlab::testing::approx(3.1875));
}

TEST_CASE("deal_shared: one block per SM deals as the list schedule does") {
  // k = 1: an SM runs one block at a time at its own pace, so the shared deal is deal()'s, SM by SM
  const std::vector<double> dur = {3.0, 1.0, 2.5, 0.5, 4.0};
  for (std::int64_t sms : {1, 7, 132})
    for (std::int64_t bh : {1, 3, 100}) {
      CAPTURE(sms);
      CAPTURE(bh);
      CHECK(deal_shared({dur}, {2, 1, 2, 1, 3}, bh, sms, 1).first == flashlab::testing::approx(deal(dur, bh, sms).first));
    }
}
