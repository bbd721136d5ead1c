// Tiling, masks and tile classes against brute force over every element.
#include <doctest/doctest.h>

#include <random>

#include "flashlab/contract/tiling.hpp"
#include "../../common/mask_definition.hpp"

using namespace flashlab;
using flashlab::test::visible_by_definition;

namespace {

Mask random_mask(std::mt19937_64& g) {
  switch (g() % 4) {
    case 0: return {};
    case 1: return {MaskKind::causal_tl, 0, 0};
    case 2: return {MaskKind::causal_br, 0, 0};
    default: return {MaskKind::window, std::int64_t(g() % 40), std::int64_t(g() % 40)};
  }
}

}  // namespace

TEST_CASE("tile classes equal brute force over every element (random ragged configs, all masks)") {
  std::mt19937_64 g(12345);
  int partial_seen = 0, skipped_seen = 0, full_seen = 0;
  for (int trial = 0; trial < 400; ++trial) {
    Tiling t{std::int64_t(1 + g() % 150), std::int64_t(1 + g() % 150), 8, std::int64_t(1 + g() % 40),
             std::int64_t(1 + g() % 40)};
    const Mask m = random_mask(g);
    const Band b = make_band(m, t.n_q, t.n_k);
    for (std::int64_t i = 0; i < t.t_r(); ++i) {
      std::int64_t first_j = -1, last_j = -1;
      for (std::int64_t j = 0; j < t.t_c(); ++j) {
        std::int64_t vis = 0;
        for (std::int64_t r = i * t.b_r; r < i * t.b_r + t.rows(i); ++r)
          for (std::int64_t c = j * t.b_c; c < j * t.b_c + t.cols(j); ++c) {
            const bool v = visible_by_definition(m, t.n_q, t.n_k, r, c);
            REQUIRE(v == visible(b, r, c));
            vis += v;
          }
        const std::int64_t elems = t.rows(i) * t.cols(j);
        const TileClass expect = vis == 0 ? TileClass::skipped : vis == elems ? TileClass::full : TileClass::partial;
        REQUIRE(tile_class(t, b, i, j) == expect);
        (expect == TileClass::partial ? partial_seen : expect == TileClass::full ? full_seen : skipped_seen)++;
        if (vis > 0) {
          if (first_j < 0) first_j = j;
          last_j = j;
        }
      }
      // the loop bounds of a block-skipping kernel: exactly the non-skipped K/V blocks
      const BlockRange br = visible_col_blocks(t, b, i);
      if (first_j < 0) {
        CHECK(br.empty());
      } else {
        CHECK(br.first == first_j);
        CHECK(br.last == last_j);
      }
    }
  }
  // the random configs exercised every class
  CHECK(partial_seen > 0);
  CHECK(full_seen > 0);
  CHECK(skipped_seen > 0);
}

TEST_CASE("visible_row_blocks are exactly the Q blocks that see K/V block j") {
  std::mt19937_64 g(777);
  for (int trial = 0; trial < 300; ++trial) {
    Tiling t{std::int64_t(1 + g() % 120), std::int64_t(1 + g() % 120), 8, std::int64_t(1 + g() % 33),
             std::int64_t(1 + g() % 33)};
    const Mask m = random_mask(g);
    const Band b = make_band(m, t.n_q, t.n_k);
    for (std::int64_t j = 0; j < t.t_c(); ++j) {
      std::int64_t first = -1, last = -1;
      for (std::int64_t i = 0; i < t.t_r(); ++i) {
        bool any = false;
        for (std::int64_t r = i * t.b_r; r < i * t.b_r + t.rows(i) && !any; ++r)
          for (std::int64_t c = j * t.b_c; c < j * t.b_c + t.cols(j); ++c)
            if (visible_by_definition(m, t.n_q, t.n_k, r, c)) {
              any = true;
              break;
            }
        if (any) {
          if (first < 0) first = i;
          last = i;
        }
      }
      const BlockRange br = visible_row_blocks(t, b, j);
      if (first < 0) {
        CHECK(br.empty());
      } else {
        CHECK(br.first == first);
        CHECK(br.last == last);
      }
    }
  }
}

TEST_CASE("row_keys gives each row's visible keys, and empty rows only where the mask allows") {
  std::mt19937_64 g(99);
  for (int trial = 0; trial < 300; ++trial) {
    const std::int64_t n_q = 1 + g() % 90, n_k = 1 + g() % 90;
    const Mask m = random_mask(g);
    const Band b = make_band(m, n_q, n_k);
    for (std::int64_t r = 0; r < n_q; ++r) {
      std::int64_t first = -1, last = -1, n = 0;
      for (std::int64_t c = 0; c < n_k; ++c)
        if (visible_by_definition(m, n_q, n_k, r, c)) {
          if (first < 0) first = c;
          last = c;
          ++n;
        }
      const KeyRange k = row_keys(b, n_k, r);
      CHECK(k.count() == n);
      if (n > 0) {
        CHECK(k.first == first);
        CHECK(k.last == last);
      }
    }
  }
}

TEST_CASE("T_r, T_c, rows(i), cols(j) on a ragged tiling") {
  const Tiling t{100, 33, 16, 64, 32};  // N_q = 100, N_k = 33
  CHECK(t.t_r() == 2);
  CHECK(t.t_c() == 2);
  CHECK(t.rows(0) == 64);
  CHECK(t.rows(1) == 36);
  CHECK(t.cols(0) == 32);
  CHECK(t.cols(1) == 1);
}
