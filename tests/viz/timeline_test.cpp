// The timeline panel's layout (viz/model/timeline_layout.hpp) on hand-built Timelines, every
// position by closed form: x = x0 + width (t - t0) / span; and the panel over the simulator's
// timeline() of V3 and V2 on one config (headless ImGui).
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <string>

#include <imgui.h>

#include "headless.hpp"
#include "model/palette.hpp"
#include "model/timeline_layout.hpp"
#include "model/timeline_pair.hpp"
#include "panels/panels.hpp"
#include "../common/approx.hpp"

using namespace flashlab;
using namespace flashlab::viz;

namespace {

constexpr double us = 1e-6;

TimelineLane agent(const char* name, std::uint8_t a) { return {LaneKind::agent, name, a, 0, HwUnit::tensor}; }
TimelineLane unit(HwUnit u) { return {LaneKind::unit, std::string(to_string(u)), 0, 0, u}; }

// One tile (0, 0) of V3 with one consumer warpgroup: the producer loads K_0 over [0, 2] us while the
// consumer waits for it, then GEMM0 [2, 4] on the consumer and the tensor cores, softmax [4, 7];
// the SM ends at 10 us; the ring (2 stages) holds 1 stage from 0, 2 from 2 us, none from 7 us.
Timeline one_tile() {
  Timeline t;
  t.v3 = true;
  t.lanes = {agent("producer", 1), agent("consumer 0", 2), unit(HwUnit::tensor)};
  t.intervals = {
      {0 * us, 2 * us, 0, Phase::load_k, 0, 0, 0},
      {0 * us, 2 * us, 1, Phase::wait_full, 0, 0, 0},
      {2 * us, 4 * us, 1, Phase::gemm0, 0, 0, 0},
      {4 * us, 7 * us, 1, Phase::softmax, 0, 0, 0},
      {2 * us, 4 * us, 2, Phase::gemm0, 0, 0, 0},
  };
  t.stages = 2;
  t.ring = {{0 * us, 1}, {2 * us, 2}, {7 * us, 0}};
  t.time_s = 10 * us;
  return t;
}

const IntervalRect& rect_of(const TimelineLayout& l, std::size_t interval) {
  for (const IntervalRect& r : l.rects)
    if (r.interval == interval) return r;
  FAIL("interval " << interval << " has no rectangle");
  return l.rects.front();
}

}  // namespace

TEST_CASE("timeline layout: rows per lane, each interval at x = x0 + width (t - t0) / span") {
  const Timeline t = one_tile();
  const TimeView v = TimeView::whole(t.time_s, 100, 500);  // 50 pixels per us
  const TimelineLayout l = layout_timeline(t, v, 20, 15);
  REQUIRE(l.rows.size() == 4);  // 3 lanes and the ring
  CHECK(l.rows[1].label == "consumer 0");
  CHECK(l.rows[1].y0 == 35.0f);
  CHECK(l.rows[3].lane == -1);
  CHECK(l.rows[3].label == "K/V ring");
  CHECK(l.height == 60.0f);
  REQUIRE(l.rects.size() == 5);
  // GEMM0 on consumer 0: 2..4 us -> 200..300 px, its row 35..50 less 1 pixel each side
  const IntervalRect& g = rect_of(l, 2);
  CHECK(g.x0 == flashlab::testing::approx(200));
  CHECK(g.x1 == flashlab::testing::approx(300));
  CHECK(g.y0 == 36.0f);
  CHECK(g.y1 == 49.0f);
  CHECK(g.colour == palette::phase_colour(Phase::gemm0));
  // the wait for K_0 (a bubble): 0..2 us -> 100..200 px, the middle half of the row (15 / 4 = 3.75)
  const IntervalRect& w = rect_of(l, 1);
  CHECK(w.x0 == flashlab::testing::approx(100));
  CHECK(w.x1 == flashlab::testing::approx(200));
  CHECK(w.y0 == flashlab::testing::approx(38.75));
  CHECK(w.y1 == flashlab::testing::approx(46.25));
  CHECK(w.colour == palette::phase_colour(Phase::wait_full));
  // the same GEMM0 on the tensor lane lies at the same x
  CHECK(rect_of(l, 4).x0 == flashlab::testing::approx(200));
  // the ring: 1 of 2 stages over 0..2 us, 2 over 2..7 us; none from 7 us (no bar). Its row is
  // 65..80; the bar fills (80 - 1) - 13 * full / 2 up to 79.
  REQUIRE(l.ring.size() == 2);
  CHECK(l.ring[0].x0 == flashlab::testing::approx(100));
  CHECK(l.ring[0].x1 == flashlab::testing::approx(200));
  CHECK(l.ring[0].y0 == flashlab::testing::approx(79 - 6.5));
  CHECK(l.ring[1].x1 == flashlab::testing::approx(450));
  CHECK(l.ring[1].y0 == flashlab::testing::approx(79 - 13));
  // hit-testing: the middle of GEMM0 on consumer 0; nothing after 7 us on it
  const auto hit = rect_at(l, 250, 42);
  REQUIRE(hit);
  CHECK(l.rects[*hit].interval == 2);
  CHECK_FALSE(rect_at(l, 480, 42));
}

TEST_CASE("timeline colours: each wait's cause its own colour, none a work phase's") {
  const Phase waits[] = {Phase::wait_full, Phase::wait_empty, Phase::wait_barrier, Phase::wait_mma};
  std::set<std::uint32_t> colours;
  for (int p = 0; p < kPhaseCount; ++p) colours.insert(palette::phase_colour(Phase(p)));
  CHECK(colours.size() == std::size_t(kPhaseCount));  // twelve phases, twelve colours
  int n = 0;
  for (int p = 0; p < kPhaseCount; ++p) n += palette::is_wait(Phase(p));
  CHECK(n == 4);
  for (Phase ph : waits) {
    CHECK(palette::is_wait(ph));
    CHECK_FALSE(wait_cause(ph).empty());
  }
  CHECK(wait_cause(Phase::gemm0).empty());
  // the legend lists what the timeline has, in Phase order
  const std::vector<Phase> present = phases_present(one_tile());
  CHECK(present == std::vector<Phase>{Phase::gemm0, Phase::softmax, Phase::load_k, Phase::wait_full});
}

TEST_CASE("timeline zoom and pan: the time under the mouse stays, the window stays in [0, end]") {
  const Timeline t = one_tile();
  TimeView v = TimeView::whole(t.time_s, 100, 500);
  v.zoom(2, 200);  // about t = 2 us, 1/5 of the way across: span 5 us, t0 = 2 - 5 / 5 = 1 us
  CHECK(v.t0_s == flashlab::testing::approx(1 * us));
  CHECK(v.t1_s == flashlab::testing::approx(6 * us));
  CHECK(v.x_of(2 * us) == flashlab::testing::approx(200));
  const TimelineLayout l = layout_timeline(t, v, 0, 15);
  // 100 pixels per us from 1 us: GEMM0 2..4 us -> 200..400; softmax 4..7 clipped at 6 us -> 400..600;
  // K_0's load 0..2 clipped at 1 us -> 100..200
  CHECK(rect_of(l, 2).x0 == flashlab::testing::approx(200));
  CHECK(rect_of(l, 2).x1 == flashlab::testing::approx(400));
  CHECK(rect_of(l, 3).x1 == flashlab::testing::approx(600));
  CHECK(rect_of(l, 0).x0 == flashlab::testing::approx(100));
  CHECK(rect_of(l, 0).x1 == flashlab::testing::approx(200));
  v.pan(50);  // 50 of 500 pixels of a 5 us window: 0.5 us later
  CHECK(v.t0_s == flashlab::testing::approx(1.5 * us));
  v.pan(1e6);  // past the end: the window ends at 10 us
  CHECK(v.t1_s == flashlab::testing::approx(10 * us));
  CHECK(v.t0_s == flashlab::testing::approx(5 * us));
  v.zoom(0.01, 300);  // out past the whole range: the whole range
  CHECK(v.t0_s == flashlab::testing::approx(0));
  CHECK(v.t1_s == flashlab::testing::approx(10 * us));
  // an interval wholly left of the window is not laid out
  v.zoom(10, 600);  // about 10 us: [9, 10] us
  const TimelineLayout right = layout_timeline(t, v, 0, 15);
  CHECK(right.rects.empty());
}

TEST_CASE("timeline layout: intervals under a pixel merge, one lane's rectangles never overlap") {
  // 1,024 back-to-back intervals of 1/1024 s over 1 s and 512 pixels: half a pixel each. Interval k
  // spans [k/2, (k+1)/2] px; it starts a rectangle when its end crosses into a pixel column the lane's
  // last rectangle has not reached: k = 0 and every odd k (ends at a whole pixel): 1 + 512 rectangles.
  Timeline t;
  t.lanes = {agent("block 0", 0)};
  for (int k = 0; k < 1024; ++k)
    t.intervals.push_back({k / 1024.0, (k + 1) / 1024.0, 0, k % 2 ? Phase::step : Phase::wait_mma, 0, k, 0});
  t.time_s = 1;
  const TimelineLayout l = layout_timeline(t, TimeView::whole(1, 0, 512), 0, 15);
  CHECK(l.rects.size() == 513);
  std::size_t merged = 0;
  for (std::size_t k = 0; k < l.rects.size(); ++k) {
    merged += l.rects[k].merged;
    if (k > 0) CHECK(l.rects[k].x0 >= l.rects[k - 1].x1);
  }
  CHECK(merged == 1024);
  CHECK(l.rects.back().x1 == flashlab::testing::approx(512));
  CHECK(interval_summary(t, l.rects[1].interval, l.rects[1].merged).find("2 intervals in this pixel") != std::string::npos);
  // overlapping intervals on one lane (a sloppy input) are laid side by side, not over each other
  Timeline o;
  o.lanes = {agent("block 0", 0)};
  o.intervals = {{0, 0.5, 0, Phase::step, 0, 0, 0}, {0.25, 1, 0, Phase::step, 0, 1, 0}};
  o.time_s = 1;
  const TimelineLayout lo = layout_timeline(o, TimeView::whole(1, 0, 100), 0, 15);
  REQUIRE(lo.rects.size() == 2);
  CHECK(lo.rects[1].x0 == flashlab::testing::approx(50));
  CHECK(lo.rects[1].x1 == flashlab::testing::approx(100));
}

TEST_CASE("timeline tooltips and ticks: what, tile (i, j), start and end in us, cause") {
  const Timeline t = one_tile();
  CHECK(interval_summary(t, 2) == "gemm0 on consumer 0, tile (0, 0) of (batch, head) 0\nstart 2.00 us, end 4.00 us (2.00 us)");
  CHECK(interval_summary(t, 1) ==
        "wait-full on consumer 0, tile (0, 0) of (batch, head) 0\nstart 0.00 us, end 2.00 us (2.00 us)\n"
        "cause: waiting for the stage's K_j / V_j load to land (full mbarrier)");
  // 10 us over 500 px with ticks >= 70 px apart: >= 1.4 us, so every 2 us
  const std::vector<double> ticks = time_ticks(TimeView::whole(t.time_s, 0, 500), 70);
  REQUIRE(ticks.size() == 6);
  for (std::size_t k = 0; k < ticks.size(); ++k) CHECK(ticks[k] == flashlab::testing::approx(2e-6 * double(k)));
}

TEST_CASE("tiles of two tilings meet by their tokens (V3's 128 x 176 against the map's 128 x 64)") {
  // V3's tile (1, 2): queries 128..255, keys 352..527; the map's K/V blocks 5 (320..383) to 8 (512..575)
  const TokenBox v3 = tile_tokens(1, 2, 128, 176);
  CHECK(v3.q0 == 128);
  CHECK(v3.k1 == 528);
  CHECK(overlap(v3, tile_tokens(1, 5, 128, 64)));
  CHECK(overlap(v3, tile_tokens(1, 8, 128, 64)));
  CHECK_FALSE(overlap(v3, tile_tokens(1, 4, 128, 64)));  // keys 256..319
  CHECK_FALSE(overlap(v3, tile_tokens(1, 9, 128, 64)));  // keys 576..639
  CHECK_FALSE(overlap(v3, tile_tokens(0, 5, 128, 64)));  // queries 0..127
  // a V2 step interval (j = -1: its thread block's Q block) covers every key of its rows
  CHECK(overlap(tile_tokens(1, -1, 128, 64), tile_tokens(1, 1000, 128, 64)));
}

TEST_CASE("V3 and V2 on one time scale: one view, the longer run's range, the same time at the same x") {
  TimelinePair pair;
  pair.sides[0].timeline = one_tile();  // 10 us
  Timeline v2;
  v2.lanes = {agent("block 0", 0)};
  v2.intervals = {{2 * us, 4 * us, 0, Phase::step, 0, 0, 0}};
  v2.time_s = 4 * us;
  pair.sides[1].algo = Algo::v2;
  pair.sides[1].timeline = v2;
  CHECK(pair.end_s() == flashlab::testing::approx(10 * us));
  const TimeView v = TimeView::whole(pair.end_s(), 100, 500);
  const TimelineLayout a = layout_timeline(*pair.sides[0].timeline, v, 0, 15);
  const TimelineLayout b = layout_timeline(*pair.sides[1].timeline, v, 100, 15);
  // V2's step 2..4 us lies under V3's GEMM0 2..4 us: 200..300 px in both panes
  CHECK(rect_of(b, 0).x0 == flashlab::testing::approx(rect_of(a, 2).x0));
  CHECK(rect_of(b, 0).x1 == flashlab::testing::approx(300));
  CHECK(partner_algo(Config{}) == Algo::v2);
}

TEST_CASE("the timeline panel lays out V3 over V2 from the simulator, off the UI thread") {
  test::Headless ui;
  Config c;  // N = 1024, d = 64: FA3's 192 x 192 tile beside V2's default
  Session s(c);
  TimelinePanel panel;
  TileRef selected;
  auto draw = [&] {
    ImGui::SetNextWindowPos({0, 0});
    ImGui::SetNextWindowSize({900, 700});
    ImGui::Begin("timeline");
    panel.draw(s, selected, nullptr);
    ImGui::End();
  };
  ImGui::GetIO().MousePos = {-1000, -1000};
  ui.frame(draw);
  panel.wait();
  ui.frame(draw);
  const TimelinePair* pair = panel.job.result();
  REQUIRE(pair);
  for (const TimelineSide& side : pair->sides) {
    INFO(side.error);
    REQUIRE(side.timeline);
    CHECK(side.timeline->time_s > 0);
  }
  CHECK(pair->sides[0].algo == Algo::v3);
  CHECK(pair->sides[0].b_r == 192);
  CHECK(pair->sides[0].timeline->lanes.front().name == "producer");
  CHECK(pair->sides[1].algo == Algo::v2);
  // one view over both: the whole range is the longer SM's time
  CHECK(panel.view.end_s == flashlab::testing::approx(std::max(pair->sides[0].timeline->time_s, pair->sides[1].timeline->time_s)));
  CHECK(panel.view.t1_s == flashlab::testing::approx(panel.view.end_s));
  // hover a softmax of V3's consumer warpgroup 0 on tile (i, j): its tooltip; a click selects the map's
  // tile holding the tile's first token, (i 192 / B_r, j 192 / B_c) of V2's tiling
  const Timeline& v3 = *pair->sides[0].timeline;
  const IntervalRect* soft = nullptr;
  for (const IntervalRect& r : panel.layouts[0].rects)
    if (v3.intervals[r.interval].what == Phase::softmax && v3.lanes[std::size_t(v3.intervals[r.interval].lane)].name == "consumer 0" &&
        r.x1 - r.x0 >= 3 && r.merged == 1) {
      soft = &r;
      break;
    }
  REQUIRE(soft);
  const TimelineInterval iv = v3.intervals[soft->interval];
  const ImVec2 at{std::floor((soft->x0 + soft->x1) / 2), std::floor((soft->y0 + soft->y1) / 2)};
  ImGui::GetIO().MousePos = at;
  ui.frame(draw);
  const std::string tile = "tile (" + std::to_string(iv.i) + ", " + std::to_string(iv.j) + ")";
  CHECK(panel.tooltip.rfind("softmax on consumer 0, " + tile, 0) == 0);
  const Tiling& map = s.problem().tiling;
  const TileRef expect{iv.i * 192 / map.b_r, iv.j * 192 / map.b_c};
  CHECK(panel.tooltip.find("click: select tile (" + std::to_string(expect.i) + ", " + std::to_string(expect.j) + ")") !=
        std::string::npos);
  ImGui::GetIO().MouseDown[0] = true;
  ui.frame(draw);
  ImGui::GetIO().MouseDown[0] = false;
  ui.frame(draw);
  CHECK(selected == expect);
  // the mouse wheel zooms both panes about the mouse: 1.25 x narrower, the time under it kept
  const double before = panel.view.span_s(), t_at = panel.view.t_of(at.x);
  ImGui::GetIO().MouseWheel = 1;
  ui.frame(draw);
  ImGui::GetIO().MouseWheel = 0;
  CHECK(panel.view.span_s() == flashlab::testing::approx(before / 1.25));
  CHECK(panel.view.t_of(at.x) == flashlab::testing::approx(t_at));

  // a changed config starts a new job; the SM out of range is clamped to the last
  c.n_q = c.n_k = 2048;
  REQUIRE(s.apply(c));
  panel.sm = 100000;
  ui.frame(draw);
  CHECK(panel.sm == int(s.problem().gpu.sms) - 1);
  panel.wait();
  ui.frame(draw);
  ui.frame(draw);
  REQUIRE(panel.job.result());
  CHECK(panel.job.result()->sides[1].timeline->sm == s.problem().gpu.sms - 1);
}
