// map_image.cpp — see map_image.hpp.
#include "model/map_image.hpp"

#include <cmath>

#include "flashlab/warps/warps.hpp"
#include "model/palette.hpp"

namespace flashlab::viz {

Image map_image(const TileAnalysis& a, MapMode mode, Metric metric, int max_w, int max_h) {
  const Tiling& t = a.tiling();
  if (mode == MapMode::heat && a.has_tile_stats()) {
    const std::vector<double>& grid = a.metric_grid(metric);
    const auto [lo, hi] = a.metric_range(metric);
    const std::int64_t t_c = t.t_c();
    return shrink_grid(t.t_r(), t_c, max_w, max_h, [&](std::int64_t i, std::int64_t j) {
      const double v = grid[std::size_t(i * t_c + j)];
      if (!std::isfinite(v)) return palette::skipped;
      return palette::heat(hi > lo ? (v - lo) / (hi - lo) : 1.0);
    });
  }
  return shrink_grid(t.t_r(), t.t_c(), max_w, max_h, [&](std::int64_t i, std::int64_t j) {
    return palette::tile_colour(a.cls(i, j), a.computed(i, j));
  });
}

std::vector<int> warp_owners(const Problem& p, std::int64_t i, std::int64_t j) {
  const Tiling& t = p.tiling;
  const bool by_rows = p.split == WarpSplit::split_q;
  const std::int64_t block = by_rows ? t.b_r : t.b_c, n = by_rows ? t.rows(i) : t.cols(j);
  std::vector<int> owner(std::size_t(n), -1);
  for (int w = 0; w < p.warps; ++w) {
    const WarpSlice s = warp_slice(w, p.warps, block, n);
    for (std::int64_t k = s.first; k < s.first + s.count; ++k) owner[std::size_t(k)] = w;
  }
  return owner;
}

Image tile_mask_image(const Problem& p, std::int64_t i, std::int64_t j, int max_w, int max_h) {
  const Tiling& t = p.tiling;
  const std::int64_t r0 = i * t.b_r, c0 = j * t.b_c;
  const std::vector<int> owner = warp_owners(p, i, j);
  const bool by_rows = p.split == WarpSplit::split_q;
  return shrink_grid(t.rows(i), t.cols(j), max_w, max_h, [&](std::int64_t r, std::int64_t c) {
    if (!visible(p.band, r0 + r, c0 + c)) return palette::masked_element;
    return palette::warp_colour(owner[std::size_t(by_rows ? r : c)]);
  });
}

}  // namespace flashlab::viz
