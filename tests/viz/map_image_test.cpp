// The pictures of the block-skip map and of one tile, against classes and owners derived by hand.
#include <doctest/doctest.h>

#include <cmath>

#include "flashlab/config/config.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "model/map_image.hpp"
#include "model/palette.hpp"
#include "model/tile_analysis.hpp"

using namespace flashlab;
using namespace flashlab::viz;

namespace {

Problem problem(Algo a, std::int64_t n_q, std::int64_t n_k, std::int64_t b_r, std::int64_t b_c, Mask m) {
  Config c;
  c.algo = a;
  c.n_q = n_q;
  c.n_k = n_k;
  c.d = 64;
  c.b_r = b_r;
  c.b_c = b_c;
  c.mask = m;
  return resolve(c);
}

constexpr Mask kCausal{MaskKind::causal_tl, 0, 0};

}  // namespace

TEST_CASE("shrink_grid copies a grid that fits and averages cells smaller than a pixel") {
  const auto dark = rgba(0, 0, 0), light = rgba(200, 100, 50);
  auto checker = [&](std::int64_t i, std::int64_t j) { return (i + j) % 2 ? light : dark; };
  const Image same = shrink_grid(4, 4, 10, 10, checker);
  REQUIRE(same.width == 4);
  REQUIRE(same.height == 4);
  CHECK(same.at(1, 0) == light);
  CHECK(same.at(1, 1) == dark);
  // 4 x 4 cells into 2 x 2 pixels: each pixel holds 2 dark and 2 light cells -> (100, 50, 25)
  const Image half = shrink_grid(4, 4, 2, 2, checker);
  REQUIRE(half.width == 2);
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 2; ++x) CHECK(half.at(x, y) == rgba(100, 50, 25));
  // 1 x 3 cells into 2 pixels: pixel 0 covers column 0, pixel 1 columns 1 and 2 (x * 3 / 2 bounds)
  const Image row = shrink_grid(1, 3, 2, 2, [&](std::int64_t, std::int64_t j) { return j == 0 ? light : j == 1 ? dark : light; });
  REQUIRE(row.width == 2);
  CHECK(row.at(0, 0) == light);
  CHECK(row.at(1, 0) == rgba(100, 50, 25));
}

// Case R4 (the same config as tests/sim/numerics/cases_test.cpp): N = 256, B_r = B_c = 64, top-left causal: the diagonal tiles (i, i) are partial
// (c - r spans [-63, 63] and hi = 0), tiles below it full (c - r <= 64 j + 63 - 64 i <= -1),
// tiles above it skipped (c - r >= 64 j - 64 i - 63 >= 1).
TEST_CASE("map colours of R4: diagonal partial, below full, above skipped (V2) or computed anyway (V1)") {
  for (Algo a : {Algo::v2, Algo::v1}) {
    const TileAnalysis an(problem(a, 256, 256, 64, 64, kCausal));
    const Image img = map_image(an, MapMode::classes, Metric::hbm_bytes, 400, 400);
    REQUIRE(img.width == 4);
    REQUIRE(img.height == 4);
    // V2 skips tiles with no visible element; V1 (block skip off by default) computes them
    const auto above = a == Algo::v2 ? palette::skipped : palette::computed_skipped;
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        CAPTURE(i);
        CAPTURE(j);
        CHECK(img.at(j, i) == (j < i ? palette::full : j == i ? palette::partial : above));
      }
  }
}

// Ragged tiles: N_q = 200, N_k = 300, B_r = 64, B_c = 128, bottom-right causal: hi = N_k - N_q = 100.
// rows(3) = 8, cols(2) = 44. Over tile (i, j), c - r spans
// [128 j - (64 i + rows(i) - 1), 128 j + cols(j) - 1 - 64 i]:
//   i = 0: [-63, 127] partial, [65, 255] partial, [193, 299] skipped
//   i = 1: [-127, 63] full,    [1, 191] partial,  [129, 235] skipped
//   i = 2: [-191, -1] full,    [-63, 127] partial, [65, 171] partial
//   i = 3: [-199, -65] full,   [-71, 63] full,    [57, 107] partial
TEST_CASE("map colours of a ragged bottom-right causal config") {
  const TileAnalysis an(problem(Algo::v2, 200, 300, 64, 128, Mask{MaskKind::causal_br, 0, 0}));
  const Image img = map_image(an, MapMode::classes, Metric::hbm_bytes, 100, 100);
  REQUIRE(img.width == 3);
  REQUIRE(img.height == 4);
  const char* expected[4] = {"PPS", "FPS", "FPP", "FFP"};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j) {
      CAPTURE(i);
      CAPTURE(j);
      const char e = expected[i][j];
      CHECK(img.at(j, i) == (e == 'F' ? palette::full : e == 'P' ? palette::partial : palette::skipped));
    }
}

// The million-tile map: N = 131072, B = 128, top-left causal, 1024 x 1024 tiles shrunk to 256 x 256
// pixels. Pixel (k, k) covers tiles [4k, 4k + 4)^2: 4 partial (the diagonal), 6 full (below),
// 6 skipped (above); its colour is their mean, rounded.
TEST_CASE("a million tiles average into the pixels that show them") {
  const TileAnalysis an(problem(Algo::v2, 131072, 131072, 128, 128, kCausal));
  const Image img = map_image(an, MapMode::classes, Metric::hbm_bytes, 256, 256);
  REQUIRE(img.width == 256);
  REQUIRE(img.height == 256);
  auto mean = [](int k) {
    const std::uint32_t sum = 4 * channel(palette::partial, k) + 6 * channel(palette::full, k) + 6 * channel(palette::skipped, k);
    return (sum + 8) / 16;
  };
  const std::uint32_t diagonal = rgba(mean(0), mean(1), mean(2), mean(3));
  for (int k : {0, 1, 100, 255}) CHECK(img.at(k, k) == diagonal);
  CHECK(img.at(0, 255) == palette::full);     // bottom-left: every tile full
  CHECK(img.at(255, 0) == palette::skipped);  // top-right: every tile skipped
}

// V2 visits Q block by Q block, K/V blocks in order, skipping the tiles above the diagonal of R4:
// (0,0)=0; (1,0)=1 (1,1)=2; (2,0)=3 (2,1)=4 (2,2)=5; (3,0)=6 ... (3,3)=9.
TEST_CASE("heat map of the visit order: first tile darkest, last tile brightest, skipped tiles grey") {
  const TileAnalysis an(problem(Algo::v2, 256, 256, 64, 64, kCausal));
  CHECK(an.metric(Metric::visit_order, 2, 1) == 4);
  CHECK(an.metric(Metric::visit_order, 3, 3) == 9);
  CHECK(an.metric_range(Metric::visit_order) == std::pair{0.0, 9.0});
  const Image img = map_image(an, MapMode::heat, Metric::visit_order, 4, 4);
  CHECK(img.at(0, 0) == palette::heat(0));
  CHECK(img.at(3, 3) == palette::heat(1));
  CHECK(img.at(1, 2) == palette::heat(4.0 / 9.0));
  CHECK(img.at(3, 0) == palette::skipped);
}

// Tile (1, 1) of R4 with 4 warps: element (r, c) of the tile is visible iff c <= r (top-left causal
// on the diagonal tile). Split-Q: warp w owns rows [16 w, 16 w + 16). Split-K with 3 warps: columns
// [0, 21), [21, 42), [42, 64) (floor(w * 64 / 3)).
TEST_CASE("tile mask: visible elements in their owning warp's colour, masked ones dark") {
  Config c;
  c.n_q = c.n_k = 256;
  c.b_r = c.b_c = 64;
  c.mask = kCausal;
  c.warps = 4;
  const Problem q = resolve(c);
  const Image img = tile_mask_image(q, 1, 1, 64, 64);
  REQUIRE(img.width == 64);
  CHECK(img.at(0, 0) == palette::warp_colour(0));
  CHECK(img.at(1, 0) == palette::masked_element);
  CHECK(img.at(10, 20) == palette::warp_colour(1));
  CHECK(img.at(63, 63) == palette::warp_colour(3));
  CHECK(img.at(40, 47) == palette::warp_colour(2));
  CHECK(img.at(48, 47) == palette::masked_element);

  c.warps = 3;
  c.split = WarpSplit::split_k;
  const Problem k = resolve(c);
  const Image col = tile_mask_image(k, 1, 1, 64, 64);
  CHECK(col.at(20, 63) == palette::warp_colour(0));
  CHECK(col.at(21, 63) == palette::warp_colour(1));
  CHECK(col.at(41, 63) == palette::warp_colour(1));
  CHECK(col.at(42, 63) == palette::warp_colour(2));
  CHECK(col.at(42, 41) == palette::masked_element);
}

// The released V2 backward (FA2's kernels): one thread block per K/V block j walks the Q blocks from
// the last visible one down; each visited tile adds rows(i) x d x 4 bytes to dQacc with atomics.
// R4's causal 4 x 4 tiles, column by column: (3,0)=0 (2,0)=1 (1,0)=2 (0,0)=3; (3,1)=4 (2,1)=5
// (1,1)=6; (3,2)=7 (2,2)=8; (3,3)=9.
TEST_CASE("backward heat maps: visit order down each K/V column, dQ atomics on every visited tile") {
  Config c;
  c.algo = Algo::v2;
  c.n_q = c.n_k = 256;
  c.d = 64;
  c.b_r = c.b_c = 64;
  c.mask = kCausal;
  c.pass = Pass::backward;
  const TileAnalysis an(resolve(c));
  CHECK(an.metric(Metric::visit_order, 3, 0) == 0);
  CHECK(an.metric(Metric::visit_order, 0, 0) == 3);
  CHECK(an.metric(Metric::visit_order, 3, 1) == 4);
  CHECK(an.metric(Metric::visit_order, 3, 3) == 9);
  CHECK(an.metric(Metric::atomic_bytes, 2, 1) == 64.0 * 64 * 4);
  CHECK(std::isnan(an.metric(Metric::atomic_bytes, 0, 3)));  // skipped: not computed
  CHECK(an.metric_range(Metric::atomic_bytes) == std::pair{64.0 * 64 * 4, 64.0 * 64 * 4});
  // the forward adds nothing atomically
  c.pass = Pass::forward;
  const TileAnalysis fwd(resolve(c));
  CHECK(fwd.metric(Metric::atomic_bytes, 2, 1) == 0);
}
