// The timeline, event by event (flashlab/time/timeline.hpp; issue 27 item 2): closed forms worked by
// hand on crafted V3 tiles (the engine, sim/src/time/timeline_detail.hpp lay_v3), the step-by-step
// layout against predict_time's own block time, and the invariants of every timeline (no overlap on
// a unit lane, busy + idle causes = 1, one stream's intervals back to back).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "../../../sim/src/time/timeline_detail.hpp"
#include "../../common/config_helpers.hpp"
#include "flashlab/contract/error.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "flashlab/time/timeline.hpp"
#include "../../common/approx.hpp"

using namespace flashlab;
using time_detail::V3TileStep;
using time_detail::V3Tiles;

namespace {

Problem v3(std::int64_t n, std::int64_t d, std::int64_t b_r, std::int64_t b_c, bool pingpong, bool overlap, int stages,
           bool causal = false) {
  Config c = test::small(Algo::v3, n, n, d, b_r, b_c, causal ? Mask{MaskKind::causal_tl, 0, 0} : Mask{});
  c.heads = 4;
  c.pingpong = pingpong;
  c.intra_overlap = overlap;
  c.stages = stages;
  return resolve(c);
}

/// One Q block of n K/V steps whose per-warpgroup times are: each GEMM `a` seconds, the softmax `s`
/// (its latency floor, with iota = 1), nothing else; loads of no bytes (each lands one round trip
/// after its issue).
V3Tiles crafted(const Problem& p, int n, double a, double s) {
  const double groups = double(p.tiling.b_r / 64), sms = double(p.gpu.sms);
  V3Tiles tiles(1);
  tiles[0].push_back({.level = Level::outer_begin});
  for (int k = 0; k < n; ++k) {
    V3TileStep st{.level = Level::inner, .j = n - 1 - k};
    st.work.gemm0_flops = a * groups * p.gpu.wgmma_flops.value() / sms;
    st.work.flops = 2 * st.work.gemm0_flops;
    st.work.warp_instructions = s * p.gpu.clock_hz.value();  // floor = warp_instructions * iota / clock
    tiles[0].push_back(st);
  }
  return tiles;
}

std::vector<TimelineInterval> lane_spans(const time_detail::Laid& l, const std::string& name) {
  std::vector<TimelineInterval> out;
  for (const auto& sp : l.spans)
    if (l.lanes[std::size_t(sp.iv.lane)].name == name) out.push_back(sp.iv);
  std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.start_s < y.start_s; });
  return out;
}

void check_invariants(const Timeline& t) {
  REQUIRE(t.time_s > 0);
  // no two intervals of one unit lane overlap
  for (std::size_t lane = 0; lane < t.lanes.size(); ++lane) {
    if (t.lanes[lane].kind != LaneKind::unit) continue;
    double last = 0;
    for (const TimelineInterval& iv : t.intervals) {
      if (std::size_t(iv.lane) != lane) continue;
      CHECK(iv.start_s >= last - 1e-15);
      last = iv.end_s;
    }
  }
  // busy + idle causes = 1 for each unit
  for (const UnitUse& u : t.units) {
    double sum = u.busy;
    for (const IdleCause& c : u.idle) sum += c.fraction;
    CAPTURE(to_string(u.unit));
    CHECK(sum == flashlab::testing::approx(1.0).epsilon(1e-9));
  }
  double path = 0;
  for (const CriticalPart& c : t.critical_path) path += c.fraction;
  CHECK(path == flashlab::testing::approx(1.0).epsilon(1e-9));
}

}  // namespace

TEST_CASE("timeline: two ping-pong warpgroups whose softmax equals their GEMMs keep the tensor cores busy") {
  // 2 consumer warpgroups, ping-pong and intra-warpgroup overlap (FA3's defaults), T_c = 3, each GEMM
  // a = 1 us, softmax 2a, loads instant. By hand, in the compiled loop's order (GEMM0_k and GEMM1_(k-1)
  // issued in one turn, both waited for before softmax_k): WG0 GEMM0_0 [0,1], WG1 GEMM0_0 [1,2]; WG0
  // softmax [1,3], then GEMM0_1 [3,4] and GEMM1_0 [4,5], softmax [5,7]; WG1 softmax [2,4], its GEMM0_1
  // [5,6] and GEMM1_0 [6,7], softmax [7,9]; WG0 [7,8], [8,9], softmax [9,11]; WG1 [9,10], [10,11],
  // softmax [11,13]; the last GEMM1s (outside the turns) WG0's [11,12], WG1's [13,14]. The tensor lane:
  // 12 GEMMs, idle in [2,3] (the first softmax) and [12,13] (WG1's last softmax): 14a in all, busy 12/14.
  const Problem p = v3(1024, 64, 128, 64, true, true, 2);
  const double a = 1e-6;
  const time_detail::Laid l = time_detail::lay_v3(p, true, crafted(p, 3, a, 2 * a), {{0, 0}}, 0.0, 1.0);
  CHECK(l.time_s == flashlab::testing::approx(14 * a).epsilon(1e-9));
  const auto tensor = lane_spans(l, "tensor");
  REQUIRE(tensor.size() == 12);
  double busy = 0;
  for (const auto& iv : tensor) busy += iv.end_s - iv.start_s;
  CHECK(busy / l.time_s == flashlab::testing::approx(12.0 / 14.0).epsilon(1e-9));
  CHECK(tensor[1].end_s == flashlab::testing::approx(2 * a).epsilon(1e-9));
  CHECK(tensor[2].start_s == flashlab::testing::approx(3 * a).epsilon(1e-9));
  for (std::size_t k = 3; k < 11; ++k) CHECK(tensor[k].start_s == flashlab::testing::approx(tensor[k - 1].end_s).epsilon(1e-9));
  CHECK(tensor[11].start_s == flashlab::testing::approx(13 * a).epsilon(1e-9));
}

TEST_CASE("timeline: one stage serialises the K load's round trip with GEMM0 (closed form)") {
  // one consumer warpgroup (B_r = 64), no intra-warpgroup overlap, GEMMs a, softmax a, round trip 3a,
  // T_c = 3. Two stages: K_0..V_1 issued at 0, K_2 after K_0's release at 4a, lands at 7a; the three
  // steps run back to back from 3a, 3a each: 12a. One stage: K_{k+1} is issued when GEMM0_k ends, so
  // step k starts at (k + 1) 3a + k a; the last GEMM1 waits for V_2 (issued at 10a, lands 13a): 14a.
  const double a = 1e-6;
  const Problem two = v3(1024, 64, 64, 64, false, false, 2), one = v3(1024, 64, 64, 64, false, false, 1);
  CHECK(time_detail::lay_v3(two, true, crafted(two, 3, a, a), {{0, 0}}, 3 * a, 1.0).time_s ==
        flashlab::testing::approx(12 * a).epsilon(1e-9));
  CHECK(time_detail::lay_v3(one, true, crafted(one, 3, a, a), {{0, 0}}, 3 * a, 1.0).time_s ==
        flashlab::testing::approx(14 * a).epsilon(1e-9));
}

TEST_CASE("timeline: each V3 load, store and wait names its tensor (the CSV's last column)") {
  // 2 stages, ping-pong, intra-warpgroup overlap: the producer waits on K's and V's empty barriers
  const Problem p = v3(1024, 64, 128, 128, true, true, 2);
  const Timeline t = timeline(p, make_schedule(p), {});
  std::string producer_waits;
  for (const TimelineInterval& iv : t.intervals) {
    CAPTURE(to_string(iv.what));
    switch (iv.what) {
      case Phase::load_q: CHECK(iv.tensor == 'Q'); break;
      case Phase::load_k: CHECK(iv.tensor == 'K'); break;
      case Phase::load_v: CHECK(iv.tensor == 'V'); break;
      case Phase::store_o: CHECK(iv.tensor == 'O'); break;
      case Phase::wait_full:
      case Phase::wait_empty: CHECK(std::string("QKV").find(iv.tensor) != std::string::npos); break;
      default: CHECK(iv.tensor == 0);  // work and the other waits are for no one tensor
    }
    if (iv.what == Phase::wait_empty && t.lanes[std::size_t(iv.lane)].name == "producer" && iv.tensor &&
        producer_waits.find(iv.tensor) == std::string::npos)
      producer_waits += iv.tensor;
  }
  std::sort(producer_waits.begin(), producer_waits.end());
  CHECK(producer_waits.find("KV") != std::string::npos);  // the two waits the CSV could not tell apart
}

TEST_CASE("timeline: a single stream's time is the sum of its intervals") {
  // one consumer warpgroup: its lane runs from 0 to its end with no gap (work and waits back to back)
  const Problem p = v3(2048, 64, 64, 128, false, true, 2);
  const Timeline t = timeline(p, make_schedule(p));
  check_invariants(t);
  double sum = 0, end = 0;
  for (const TimelineInterval& iv : t.intervals)
    if (t.lanes[std::size_t(iv.lane)].name == "consumer 0") sum += iv.end_s - iv.start_s, end = std::max(end, iv.end_s);
  CHECK(sum == flashlab::testing::approx(end).epsilon(1e-9));
  CHECK(end <= t.time_s);
}

TEST_CASE("timeline: V2's step-by-step layout is predict_time's block time") {
  for (const bool causal : {false, true}) {
    Config c = test::small(Algo::v2, 4096, 4096, 64, 128, 128, causal ? Mask{MaskKind::causal_tl, 0, 0} : Mask{});
    c.heads = 16;
    const Problem p = resolve(c);
    const Timeline t = timeline(p, make_schedule(p));
    const Modelled m = model(p);
    CAPTURE(causal);
    CHECK(t.time_s == flashlab::testing::approx(m.time.launches[0].blocks_s).epsilon(1e-9));  // the busiest SM
    CHECK(t.analytic_s == flashlab::testing::approx(t.time_s).epsilon(1e-9));
    check_invariants(t);
  }
}

TEST_CASE("timeline: FA3's defaults at d = 128, N = 16k on the busiest SM") {
  Config c = test::small(Algo::v3, 16384, 16384, 128, 128, 176);
  c.heads = 16;
  const Problem p = resolve(c);
  const Timeline t = timeline(p, make_schedule(p));
  check_invariants(t);
  CHECK(t.tiles == (16 * 128 + 131) / 132);  // 2,048 tiles dealt round robin to 132 SMs: 16 on the busiest
  CHECK(t.stages == 2);
  for (const RingSample& r : t.ring) CHECK((r.full >= 0 && r.full <= 4));  // K and V buffers of 2 stages
  CHECK(t.ring.back().full == 0);
  TimelineOptions few;
  few.max_intervals = 100;
  const Timeline cut = timeline(p, make_schedule(p), few);
  CHECK(cut.truncated);
  CHECK(cut.intervals.size() == 100);
  CHECK(cut.time_s == t.time_s);
  few.sm = 132;
  CHECK_THROWS_AS(timeline(p, make_schedule(p), few), ConfigError);
}
