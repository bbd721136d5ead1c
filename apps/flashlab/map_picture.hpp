// map_picture.hpp — `flashlab count --map FILE.png`: the block-skip map of one configuration as a
// picture, drawn by the viewer's own map_image (viz/model) in the viewer's class colours
// (viz/model/palette.hpp), with a legend and the configuration written under it.
#pragma once

#include <cstdint>
#include <string>

#include "flashlab/config/config.hpp"
#include "model/image.hpp"

namespace flashlab::cli {

/// Layout, so that a reader (or a test) can find tile (i, j): the map's top-left corner is at
/// (kMapMargin, kMapMargin); tile (i, j) is the square of map_cell_px(T_r, T_c) pixels whose
/// top-left corner is (kMapMargin + j * cell, kMapMargin + i * cell) — row i (Q block) downwards,
/// column j (K/V block) rightwards. From kMapGapFrom pixels per tile on, the last column and row
/// of each square are background, so that neighbouring tiles of one class stay apart. Above
/// kMapSide tiles a side, a pixel is the average colour of the tiles it covers (viz shrink_grid).
inline constexpr int kMapMargin = 8, kMapSide = 640, kMapMaxCell = 40, kMapGapFrom = 8;

/// Pixels per tile: kMapSide / max(T_r, T_c), clamped to [1, kMapMaxCell].
int map_cell_px(std::int64_t t_r, std::int64_t t_c);

/// The map's scale in words, for `count --map`'s "map: wrote" line: "N px per tile" while every
/// tile has its own pixels (T_r, T_c <= kMapSide); above kMapSide tiles a side, "R x C tiles per
/// px" (R = T_r / min(T_r, kMapSide), C likewise, to 0.1) and how a pixel is coloured: the mean of
/// its tiles, or, above viz::kBoxFilterLimit tiles, the tile at its centre (viz shrink_grid).
std::string map_scale(std::int64_t t_r, std::int64_t t_c);

/// The picture: the T_r x T_c map (full, partial, skipped, and skipped-but-computed where the
/// schedule computes a tile with no visible element: block skip off, or standard attention), a
/// legend of the four colours, and the configuration (config_line) below it. Runs p's schedule
/// once (viz::TileAnalysis) to know which tiles it computes.
viz::Image map_picture(const Problem& p);

}  // namespace flashlab::cli
