// map_image.hpp — the pictures of the block-skip map and of one tile's elements.
#pragma once

#include <cstdint>
#include <vector>

#include "flashlab/config/config.hpp"
#include "model/image.hpp"
#include "model/tile_analysis.hpp"

namespace flashlab::viz {

/// classes: full / partial / skipped (and skipped-but-computed when block skip is off);
/// heat: a per-tile Metric from dark (smallest) to yellow (largest), not-computed tiles dark grey.
enum class MapMode : std::uint8_t { classes = 0, heat = 1 };

/// The T_r x T_c map in at most max_w x max_h pixels (shrink_grid: sub-pixel tiles averaged).
/// Heat falls back to classes when the analysis keeps no per-tile records.
Image map_image(const TileAnalysis& a, MapMode mode, Metric metric, int max_w, int max_h);

/// Owner of each local row (split-Q) or local column (split-K) of tile (i, j): the warp w whose
/// warps.hpp warp_slice holds it. Size rows(i) for split-Q, cols(j) for split-K.
std::vector<int> warp_owners(const Problem& p, std::int64_t i, std::int64_t j);

/// The rows(i) x cols(j) elements of tile (i, j) in at most max_w x max_h pixels: a visible
/// element (tiling.hpp visible) in the colour of the warp that owns it (warp_owners), a masked
/// one palette::masked_element.
Image tile_mask_image(const Problem& p, std::int64_t i, std::int64_t j, int max_w, int max_h);

}  // namespace flashlab::viz
