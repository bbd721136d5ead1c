// grid_view.hpp — a grid of cells drawn as one texture with axes in tokens: the block-skip map
// (cells = tiles of B_r x B_c tokens) and the selected tile (cells = elements). Hover and click
// are hit-tested against the cells; tokens past N_q or N_k in a ragged last tile are shaded.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include <imgui.h>

namespace flashlab::viz {

struct GridAxes {
  std::int64_t rows = 1, cols = 1;              // cells
  std::int64_t row_tokens = 1, col_tokens = 1;  // tokens per cell: B_r x B_c for tiles, 1 x 1 for elements
  std::int64_t row_origin = 0, col_origin = 0;  // token index of the first row / column (axis labels)
  std::int64_t row_valid = 1, col_valid = 1;    // tokens that exist (N_q, N_k; rows(i), cols(j))
  bool short_labels = true;                      // "32k" (format_tokens) or every digit
};

/// Where a grid lands on screen: the cells' rectangle (padding tokens included), token aspect
/// kept (each side at least 32 pixels), margins for the axis labels on the left and top.
struct GridLayout {
  ImVec2 min{0, 0}, max{0, 0};  // the cells' screen rectangle
  ImVec2 cell{1, 1};            // one cell's size in pixels (may be below 1)
  std::int64_t rows = 1, cols = 1;
  int pixel_width() const { return int(max.x - min.x + 0.5f); }
  int pixel_height() const { return int(max.y - min.y + 0.5f); }
  ImVec2 cell_min(std::int64_t i, std::int64_t j) const;
  ImVec2 cell_max(std::int64_t i, std::int64_t j) const;
  ImVec2 cell_center(std::int64_t i, std::int64_t j) const;
  /// Cell (i, j) under screen point p, if any.
  std::optional<std::pair<std::int64_t, std::int64_t>> cell_at(ImVec2 p) const;
  /// Screen x of column token t / y of row token t (tokens from the grid's origin).
  float x_of(double col_token) const;
  float y_of(double row_token) const;
  double row_tokens = 1, col_tokens = 1;
};

/// Lays a grid out in the `avail` pixels below-right of `origin` (the cursor position).
GridLayout grid_layout(const GridAxes& ax, ImVec2 origin, ImVec2 avail);

/// Left and top margins that grid_layout reserves for the labels.
inline constexpr float kGridLeftMargin = 44.0f;
inline constexpr float kGridTopMargin = 18.0f;

struct GridHit {
  std::optional<std::pair<std::int64_t, std::int64_t>> hovered;
  bool clicked = false;  // left click on the hovered cell
};

/// Draws texture `tex` over the layout's cells, the padding shade and the token axes, and claims
/// the area as one item (`id`). Returns the hovered cell and whether it was clicked.
GridHit draw_grid(const char* id, const GridLayout& lay, const GridAxes& ax, ImTextureID tex);

/// Outlines cells [i0, i1] x [j0, j1] (inclusive) in colour `col` (IM_COL32 packing).
void outline_cells(const GridLayout& lay, std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1,
                   std::uint32_t col, float thickness);

}  // namespace flashlab::viz
