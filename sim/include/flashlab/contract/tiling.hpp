// tiling.hpp — tiles, masks and tile classes (host + device).
//
// Notation (FA1 paper §3.1, FA2 paper §3.1): N_q queries, N_k keys, head dim d, blocks of B_r
// query rows and B_c key columns; T_r = ceil(N_q/B_r), T_c = ceil(N_k/B_c); tile (i, j) is
// Q block i x K/V block j, of rows(i) x cols(j) elements (the last tiles may be ragged).
//
// Every mask of the design is a band on the diagonal offset c - r (row r, key column c):
//   visible(r, c)  <=>  lo <= c - r <= hi.
//   none                : lo = -inf, hi = +inf
//   causal (top-left)   : hi = 0                       (FA1, PyTorch is_causal: c <= r)
//   causal bottom-right : hi = N_k - N_q               (FA2 >= 2.1: c <= r + N_k - N_q)
//   window(left, right) : lo = N_k - N_q - left, hi = N_k - N_q + right   (bottom-right aligned)
// Over a tile, c - r takes every integer of one interval, so a tile is exactly one of full (all
// elements visible), partial (some) or skipped (none).
#pragma once

#include <cstdint>

#include "flashlab/contract/hd.hpp"

namespace flashlab {

/// Mask kinds of docs/model.md "Tiles and masks".
enum class MaskKind : std::uint8_t { none = 0, causal_tl = 1, causal_br = 2, window = 3 };

/// A mask as configured. `left`, `right` (keys, >= 0) are used by `window` only.
struct Mask {
  MaskKind kind = MaskKind::none;
  std::int64_t left = 0;
  std::int64_t right = 0;
};

/// Stand-ins for -inf / +inf offsets; far from overflow when sizes (< 2^40) are added.
inline constexpr std::int64_t kNoLowerBound = -(std::int64_t(1) << 62);
inline constexpr std::int64_t kNoUpperBound = (std::int64_t(1) << 62);

/// The visible band of diagonal offsets: visible(r, c) <=> lo <= c - r <= hi.
struct Band {
  std::int64_t lo = kNoLowerBound;
  std::int64_t hi = kNoUpperBound;
};

/// Band of a mask for N_q queries and N_k keys (see the table in the file comment).
FL_HD Band make_band(const Mask& mask, std::int64_t n_q, std::int64_t n_k) {
  const std::int64_t offset = n_k - n_q;  // bottom-right alignment of the diagonal
  Band b;
  switch (mask.kind) {
    case MaskKind::none: break;
    case MaskKind::causal_tl: b.hi = 0; break;
    case MaskKind::causal_br: b.hi = offset; break;
    case MaskKind::window: b.lo = offset - mask.left; b.hi = offset + mask.right; break;
  }
  return b;
}

/// True when key column c is visible from query row r.
FL_HD bool visible(const Band& b, std::int64_t r, std::int64_t c) {
  const std::int64_t diff = c - r;
  return diff >= b.lo && diff <= b.hi;
}

/// Visible keys of row r: the interval [first, last] (empty when first > last).
struct KeyRange {
  std::int64_t first;
  std::int64_t last;
  FL_HD bool empty() const { return first > last; }
  FL_HD std::int64_t count() const { return empty() ? 0 : last - first + 1; }
};

FL_HD KeyRange row_keys(const Band& b, std::int64_t n_k, std::int64_t r) {
  const std::int64_t lo = r + b.lo, hi = r + b.hi;
  return KeyRange{lo > 0 ? lo : 0, hi < n_k - 1 ? hi : n_k - 1};
}

/// Tile classes (docs/model.md "Tiles and masks"): full = every element visible, partial = some, skipped = none.
enum class TileClass : std::uint8_t { full = 0, partial = 1, skipped = 2 };

/// The tiling of one (batch, head) problem. All sizes in elements.
struct Tiling {
  std::int64_t n_q = 0, n_k = 0, d = 0, b_r = 0, b_c = 0;

  FL_HD std::int64_t t_r() const { return (n_q + b_r - 1) / b_r; }  // T_r = ceil(N_q / B_r)
  FL_HD std::int64_t t_c() const { return (n_k + b_c - 1) / b_c; }  // T_c = ceil(N_k / B_c)
  /// rows(i) = min(B_r, N_q - i*B_r): query rows of Q block i.
  FL_HD std::int64_t rows(std::int64_t i) const {
    const std::int64_t left = n_q - i * b_r;
    return left < b_r ? left : b_r;
  }
  /// cols(j) = min(B_c, N_k - j*B_c): keys of K/V block j.
  FL_HD std::int64_t cols(std::int64_t j) const {
    const std::int64_t left = n_k - j * b_c;
    return left < b_c ? left : b_c;
  }
};

/// Class of tile (i, j): c - r over the tile spans [j*B_c - (i*B_r + rows-1), j*B_c + cols-1 - i*B_r].
FL_HD TileClass tile_class(const Tiling& t, const Band& b, std::int64_t i, std::int64_t j) {
  const std::int64_t r0 = i * t.b_r, r1 = r0 + t.rows(i) - 1;
  const std::int64_t c0 = j * t.b_c, c1 = c0 + t.cols(j) - 1;
  const std::int64_t min_diff = c0 - r1, max_diff = c1 - r0;
  if (max_diff < b.lo || min_diff > b.hi) return TileClass::skipped;
  if (min_diff >= b.lo && max_diff <= b.hi) return TileClass::full;
  return TileClass::partial;
}

/// K/V blocks [first, last] of Q block i that hold at least one visible element (the loop bounds
/// of a block-skipping kernel, FA2 §3.1.1 "causal masking"). Empty when first > last.
struct BlockRange {
  std::int64_t first;
  std::int64_t last;
  FL_HD bool empty() const { return first > last; }
};

FL_HD BlockRange visible_col_blocks(const Tiling& t, const Band& b, std::int64_t i) {
  const std::int64_t r0 = i * t.b_r, r1 = r0 + t.rows(i) - 1;
  // keys visible from some row of the block: c in [r0 + lo, r1 + hi] intersected with [0, N_k).
  std::int64_t c_lo = r0 + b.lo, c_hi = r1 + b.hi;
  if (c_lo < 0) c_lo = 0;
  if (c_hi > t.n_k - 1) c_hi = t.n_k - 1;
  if (c_lo > c_hi) return BlockRange{1, 0};
  return BlockRange{c_lo / t.b_c, c_hi / t.b_c};
}

/// Q blocks [first, last] that see at least one key of K/V block j (V1's inner-loop bounds).
FL_HD BlockRange visible_row_blocks(const Tiling& t, const Band& b, std::int64_t j) {
  const std::int64_t c0 = j * t.b_c, c1 = c0 + t.cols(j) - 1;
  // rows r with some c in [c0, c1] and lo <= c - r <= hi: r in [c0 - hi, c1 - lo].
  std::int64_t r_lo = c0 - b.hi, r_hi = c1 - b.lo;
  if (r_lo < 0) r_lo = 0;
  if (r_hi > t.n_q - 1) r_hi = t.n_q - 1;
  if (r_lo > r_hi) return BlockRange{1, 0};
  return BlockRange{r_lo / t.b_r, r_hi / t.b_r};
}

}  // namespace flashlab
