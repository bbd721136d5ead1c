// What the panels show, against values derived by hand: tooltips, playback positions, the V1 / V2
// table, the HBM sweep (shared/DESIGN.md worked example), number formats, frame-time figures.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "flashlab/contract/error.hpp"
#include "model/comparison.hpp"
#include "flashlab/report/format.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "model/format.hpp"
#include "model/frame_stats.hpp"
#include "model/hbm_sweep.hpp"
#include "model/playback.hpp"
#include "model/session.hpp"
#include "model/tile_analysis.hpp"
#include "model/time_walk.hpp"
#include "../common/approx.hpp"

using namespace flashlab;
using namespace flashlab::viz;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

Config r4(Algo a) {  // shared/cases R4: N = 256, B = 64, d = 64, fp16, top-left causal
  Config c;
  c.algo = a;
  c.n_q = c.n_k = 256;
  c.d = 64;
  c.b_r = c.b_c = 64;
  c.mask = Mask{MaskKind::causal_tl, 0, 0};
  return c;
}

Config worked_example() {  // shared/DESIGN.md: N = 1024, d = 64, B = 64, no mask, fp16
  Config c;
  c.n_q = c.n_k = 1024;
  c.d = 64;
  c.b_r = c.b_c = 64;
  return c;
}

}  // namespace

// V2 tile (1, 0) of R4: full, the 2nd tile visited (after (0, 0)); its step loads K_0 and V_0,
// 64 x 64 fp16 each = 16,384 bytes, writes nothing; 4 r c d = 1,048,576 FLOPs; r c + r = 4,160 exp.
TEST_CASE("tooltip of a full, a partial and a skipped tile (V2)") {
  const TileAnalysis a(resolve(r4(Algo::v2)));
  const std::string full = tile_summary(a, 1, 0);
  CHECK(has(full, "tile (1, 0): rows(i) x cols(j) = 64 x 64"));
  CHECK(has(full, "queries 64..127, keys 0..63"));
  CHECK(has(full, "class: full, visit #1"));
  CHECK(has(full, "read 16.00 KiB, write 0 B"));  // 16,384 B
  CHECK(has(full, "matmul FLOPs: 1,048,576, exp: 4,160"));
  CHECK(has(tile_summary(a, 2, 2), "class: partial, visit #5"));
  const std::string skipped = tile_summary(a, 0, 3);
  CHECK(has(skipped, "class: skipped, not computed (block skip)"));
  CHECK(has(skipped, "read 0 B, write 0 B"));
}

// R4 in 2 splits of 2 K/V blocks: split 0's thread blocks (0..3) walk columns 0-1 of every Q
// block first, then split 1's (4..7) columns 2-3: tile (2, 2) is split 1's, thread block 4 + 2 = 6,
// visit #7 after split 0's seven tiles (0,0) (1,0) (1,1) (2,0) (2,1) (3,0) (3,1).
TEST_CASE("tooltip of a split-KV tile: its split, K/V blocks and thread block") {
  Config c = r4(Algo::v2);
  c.splits = 2;
  const TileAnalysis a(resolve(c));
  const std::string s = tile_summary(a, 2, 2);
  CHECK(has(s, "class: partial, visit #7"));
  CHECK(has(s, "split 1 of 2 (K/V blocks 2..3): thread block 6"));
  CHECK(has(tile_summary(a, 3, 1), "split 0 of 2 (K/V blocks 0..1): thread block 3"));
  CHECK_FALSE(has(tile_summary(a, 0, 3), "split"));  // skipped: no thread block walks it
}

// V1 tile (1, 0): line 8 reads Q_1, O_1 (8,192 bytes each) and l_1, m_1 (256 bytes each) = 16,896;
// lines 12-13 write O_1, l_1, m_1 = 8,704 bytes. V1 visits K/V block 0's column first: (0,0), (1,0).
TEST_CASE("tooltip of a V1 tile: Q_i, O_i, l_i, m_i in and O_i, l_i, m_i out") {
  const TileAnalysis a(resolve(r4(Algo::v1)));
  const std::string s = tile_summary(a, 1, 0);
  CHECK(has(s, "visit #1"));
  CHECK(has(s, "read 16.50 KiB, write 8.50 KiB"));  // 16,896 B, 8,704 B
  CHECK(has(tile_summary(a, 0, 3), "class: skipped, visit #12"));  // block skip off: computed, last column
}

TEST_CASE("an invalid edit keeps the last valid analysis and reports the field, value and allowed range") {
  Session s(r4(Algo::v2));
  const std::uint64_t g = s.generation();
  Config bad = s.config();
  bad.b_r = 0;
  CHECK_FALSE(s.apply(bad));
  CHECK_FALSE(s.valid());
  CHECK(s.error() == "br = 0: an integer from 1 to 65536");
  CHECK(s.generation() == g);
  CHECK(s.problem().tiling.b_r == 64);
  CHECK(s.config().b_r == 0);  // the panel keeps showing what was typed
  Config good = bad;
  good.b_r = 32;
  CHECK(s.apply(good));
  CHECK(s.valid());
  CHECK(s.generation() == g + 1);
  CHECK(s.problem().tiling.t_r() == 8);
  CHECK_THROWS_AS(Session{bad}, ConfigError);
}

// V2, N = 128, B = 64, no mask: 2 Q blocks, each outer_begin (load Q_i), 2 tiles, outer_end: 8 steps.
TEST_CASE("a track seeks forward and back to the same step") {
  Config c;
  c.n_q = c.n_k = 128;
  c.b_r = c.b_c = 64;
  Track t(resolve(c));
  CHECK(t.total_steps() == 8);
  CHECK(t.last() == nullptr);
  t.seek(6);
  REQUIRE(t.last());
  CHECK(t.last()->level == Level::inner);
  CHECK(t.last()->i == 1);
  CHECK(t.last()->j == 0);
  t.seek(3);  // back: block 0's tile (0, 1)
  CHECK(t.position() == 3);
  CHECK(t.last()->block == 0);
  CHECK(t.last()->step == 2);
  CHECK(t.last()->j == 1);
  CHECK(t.executor().resident().q_block == 0);
  CHECK(t.executor().resident().kv_block == 1);
  t.seek(100);
  CHECK(t.position() == 8);
}

// The released V2 backward at N = 128, B = 64: flash_bwd_dot_do_o (one step per Q block: 2),
// flash_bwd_dq_dk_dv (per K/V block j: K_j, V_j; Q block 1, then Q block 0; dK_j, dV_j: 4 steps,
// 8 in all), flash_bwd_convert_dq (2): 12 steps. Playback walks K/V column block 0 from the
// bottom up.
TEST_CASE("a track plays the backward: a K/V column block's steps, Q blocks from the last down") {
  Config c;
  c.n_q = c.n_k = 128;
  c.b_r = c.b_c = 64;
  c.pass = Pass::backward;
  Track t(resolve(c));
  CHECK(t.total_steps() == 12);
  t.seek(3);  // the main kernel's first step: K/V block 0 loads K_0, V_0
  CHECK(t.last()->launch == 1);
  CHECK(t.last()->level == Level::outer_begin);
  CHECK(t.last()->j == 0);
  t.seek(4);
  CHECK(t.last()->i == 1);
  CHECK(t.last()->j == 0);
  CHECK(t.executor().resident().q_block == 1);
  CHECK(t.executor().resident().kv_block == 0);
  t.seek(5);
  CHECK(t.last()->i == 0);
  t.seek(6);
  CHECK(t.last()->level == Level::outer_end);  // dK_0, dV_0 written
}

// V1's and V2's backward side by side on the worked example (fp16), from the rules of docs/model.md
// "Backward pass": V1 reads 2Nd e + 256 (4 B d e + 2 B 4) = 8,781,824 bytes and writes 3Nd e +
// 256 B d e + 2Nd e = 2,752,512; V2 released reads 2Nd e + 2Nd e + 256 (2 B d e + 2 B 4) + Nd 4 =
// 5,111,808, writes N 4 + Nd 4 + 2Nd e + Nd e = 659,456 and adds 256 B d 4 = 4,194,304 atomically.
TEST_CASE("V1 vs V2 backward on the worked example: the bytes of each, atomics included") {
  Config cfg = worked_example();
  cfg.pass = Pass::backward;
  Comparison c;
  c.reset(cfg);
  REQUIRE(c.v1().analysis);
  REQUIRE(c.v2().analysis);
  const auto value = [](const char* key, const report::Figures& f) { return report::value_of(key, f).as_double(); };
  const report::Figures &v1 = c.v1().analysis->figures(), &v2 = c.v2().analysis->figures();
  CHECK(value("hbm_read_bytes", v1) == 8'781'824);
  CHECK(value("hbm_write_bytes", v1) == 2'752'512);
  CHECK(value("hbm_atomic_bytes", v1) == 0);
  CHECK(value("hbm_read_bytes", v2) == 5'111'808);
  CHECK(value("hbm_write_bytes", v2) == 659'456);
  CHECK(value("hbm_atomic_bytes", v2) == 4'194'304);
  CHECK(value("hbm_total_bytes", v2) == 5'111'808 + 659'456 + 4'194'304);
}

TEST_CASE("the playback clock: speed, carry of fractions, pause at the end, step and scrub") {
  Playback p;
  p.set_total(5);
  p.speed = 10;
  p.advance(1.0);  // not playing: nothing moves
  CHECK(p.position() == 0);
  p.play();
  p.advance(0.25);  // 2.5 steps -> 2, carry 0.5
  CHECK(p.position() == 2);
  p.advance(0.05);  // 0.5 + 0.5 -> 1 more
  CHECK(p.position() == 3);
  p.advance(10);
  CHECK(p.position() == 5);
  CHECK_FALSE(p.playing());
  p.play();  // at the end: from the start again
  CHECK(p.position() == 0);
  p.step(-3);
  CHECK(p.position() == 0);
  CHECK_FALSE(p.playing());
  p.seek(4);
  p.step(-1);
  CHECK(p.position() == 3);
}

// Worked example in bytes (fp16, statistics fp32). V2: reads Q once and K, V once per Q block:
// (65,536 + 16 x 131,072) x 2 = 4,325,376; writes O (131,072) and L (4,096): total 4,460,544.
// V1: reads K, V once (262,144 B), Q_i and O_i per tile (256 x 16,384 B), l_i and m_i per tile
// (256 x 512 B) = 4,587,520; writes O_i, l_i, m_i per tile (256 x 8,704 B) and line 2's O, l, m
// (131,072 + 8,192 B) = 2,367,488: total 6,955,008. Ratio 1.5592...
TEST_CASE("V1 vs V2 on the worked example: totals and ratios") {
  Comparison c;
  c.reset(worked_example());
  REQUIRE(c.v1().analysis);
  REQUIRE(c.v2().analysis);
  const report::Figures &v1 = c.v1().analysis->figures(), &v2 = c.v2().analysis->figures();
  const auto value = [](const char* key, const report::Figures& f) { return report::value_of(key, f).as_double(); };
  const auto& keys = compare_keys();
  CHECK(std::find(keys.begin(), keys.end(), "hbm_total_bytes") != keys.end());
  CHECK(value("hbm_total_bytes", v1) == 6'955'008);
  CHECK(value("hbm_total_bytes", v2) == 4'460'544);
  CHECK(report::ratio(value("hbm_total_bytes", v1), value("hbm_total_bytes", v2)) == "1.56x");
  CHECK(value("hbm_read_bytes", v1) == 4'587'520);
  CHECK(value("hbm_write_bytes", v1) == 2'367'488);
  // V1 divides every O element twice per tile: 2 x 64 x 64 x 256; V2 once per row block: 1024 x 64
  CHECK(std::find(keys.begin(), keys.end(), "ops_div") != keys.end());
  CHECK(value("ops_div", v1) == 2.0 * 64 * 64 * 256);
  CHECK(value("ops_div", v2) == 1024.0 * 64);
  // the warp split (docs/warps.md): V1 split-K waits at 5 barriers per tile (256 tiles), V2 split-Q
  // at 2 per tile and moves nothing through shared memory
  CHECK(value("warp_barriers", v1) == 5.0 * 256);
  CHECK(value("warp_barriers", v2) == 2.0 * 256);
  CHECK(value("warp_smem_bytes", v2) == 0);
  c.seek(5);
  CHECK(c.v1().track->position() == 5);
  CHECK(c.v2().track->position() == 5);
}

// Standard attention (FA1 Alg. 0) on the worked example: 2,293,760 elements read and 2,162,688
// written, all at e_in = 2 bytes (S and P too): 8,912,896 bytes, whatever the block size.
TEST_CASE("HBM sweep over block size: the worked example's point, a point over SRAM, the x values") {
  const Config c = worked_example();
  CHECK(sweep_values(c, SweepAxis::block) == std::vector<std::int64_t>{16, 32, 64, 128, 256, 512, 1024});
  const SweepPoint p = sweep_point(c, SweepAxis::block, 64);
  CHECK(p.hbm[std::size_t(Algo::v2)] == 4'460'544u);
  CHECK(p.hbm[std::size_t(Algo::v1)] == 6'955'008u);
  CHECK(p.hbm[std::size_t(Algo::standard)] == 8'912'896u);
  CHECK(sweep_point(c, SweepAxis::block, 32).hbm[std::size_t(Algo::standard)] == 8'912'896u);
  // B = 512: V1 holds Q_i + K_j + V_j = 3 x 512 x 64 x 2 bytes plus S_ij 512 x 512 x 2 > M =
  // 232,448; V2 keeps S_ij in registers: 196,608 bytes fit. B = 1024: V2's 393,216 bytes do not.
  const SweepPoint big = sweep_point(c, SweepAxis::block, 512);
  CHECK_FALSE(big.hbm[std::size_t(Algo::v1)]);
  CHECK(has(big.why[std::size_t(Algo::v1)], "SRAM capacity"));
  CHECK(big.hbm[std::size_t(Algo::v2)]);
  const SweepPoint bigger = sweep_point(c, SweepAxis::block, 1024);
  CHECK_FALSE(bigger.hbm[std::size_t(Algo::v2)]);
  CHECK(has(bigger.why[std::size_t(Algo::v2)], "SRAM capacity"));
  CHECK(sweep_values(c, SweepAxis::sram).front() == 8 * 1024);
}

// The walk's ends are the algorithms themselves: its first bar is V1's figures and its last V2's,
// whatever the walk does between (HBM bytes: the closed forms of the V1 vs V2 test above).
TEST_CASE("the walk from V1 to V2: six bars, V1's bytes and time first, V2's last, a step that cannot run") {
  const Config c = worked_example();
  const std::vector<WalkBar> bars = time_walk(c);
  REQUIRE(bars.size() == 6);
  for (const WalkBar& b : bars) REQUIRE(b.figures);
  const auto hbm = [](const WalkBar& b) { return report::value_of("hbm_total_bytes", *b.figures).integer; };
  CHECK(hbm(bars.front()) == 6'955'008u);
  CHECK(hbm(bars.back()) == 4'460'544u);
  CHECK(bars[3].step.key == "rescale");
  Config v1 = c, v2 = c;
  v1.algo = Algo::v1;
  v2.algo = Algo::v2;
  CHECK(bars.front().figures->time.time_s == report::measure(resolve(v1)).time.time_s);
  CHECK(bars.back().figures->time.time_s == report::measure(resolve(v2)).time.time_s);
  CHECK(bars.back().figures->time.time_s < bars.front().figures->time.time_s);
  // no mask: block skip skips nothing, so the last step changes no time
  CHECK(bars[5].figures->time.time_s == bars[4].figures->time.time_s);

  // B = 512: V1's split-K warps hold S_ij in SRAM, over M (the sweep test above); split-Q's fit
  Config big = c;
  big.b_r = big.b_c = 512;
  const std::vector<WalkBar> b512 = time_walk(big);
  CHECK_FALSE(b512.front().figures);
  CHECK(has(b512.front().why, "SRAM capacity"));
  CHECK(b512.back().figures);
}

TEST_CASE("token positions and token ticks") {
  CHECK(format_tokens(512) == "512");
  CHECK(format_tokens(32768) == "32k");
  CHECK(format_tokens(1536) == "1.5k");
  CHECK(format_tokens(1000) == "1000");
  // 1024 tokens over 400 pixels, ticks >= 50 px apart: step 128 (50 px), from 0 to 1024
  const auto t = token_ticks(1024, 400, 50);
  REQUIRE(t.size() == 9);
  CHECK(t[1] == 128);
  CHECK(t.back() == 1024);
}

TEST_CASE("frame-time figures: mean, median, nearest-rank p95") {
  const FrameStats s = summarize({4, 1, 100, 2, 3});
  CHECK(s.frames == 5);
  CHECK(s.mean_ms == flashlab::testing::approx(22));
  CHECK(s.median_ms == 3);
  CHECK(s.p95_ms == 100);  // ceil(0.95 x 5) = 5th smallest
  std::vector<double> twenty;
  for (int k = 1; k <= 20; ++k) twenty.push_back(k);
  const FrameStats t = summarize(twenty);
  CHECK(t.median_ms == 10.5);
  CHECK(t.p95_ms == 19);  // ceil(0.95 x 20) = 19th smallest
  CHECK(t.fps() == flashlab::testing::approx(1000 / 10.5));
}

// Issue 9 item 8: `--frames 1` printed "frames 0 ... 0.0 fps" and never the first frame's time.
TEST_CASE("frame report: the first frame's time on its own, then the figures of the frames after it") {
  CHECK(frame_report(812.4, {}) ==
        "first frame 812.40 ms (builds the textures); no frame after it to time (--frames 2 or more)");
  // after it: 4, 1, 100, 2, 3 ms: mean 22, median 3, p95 100 (5th of 5), max 100; 1000/22 = 45.5 fps
  CHECK(frame_report(14000, {4, 1, 100, 2, 3}) ==
        "first frame 14000.00 ms (builds the textures); the 5 frames after it: mean 22.00 ms (45.5 fps), median "
        "3.00 ms, p95 100.00 ms, max 100.00 ms");
  CHECK(frame_report(5, {2}) ==
        "first frame 5.00 ms (builds the textures); the 1 frame after it: mean 2.00 ms (500.0 fps), median 2.00 ms, "
        "p95 2.00 ms, max 2.00 ms");
  CHECK(to_string(summarize({})) == "frames 0: none timed");
}
