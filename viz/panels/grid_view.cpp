// grid_view.cpp — see grid_view.hpp.
#include "panels/grid_view.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "model/format.hpp"
#include "model/palette.hpp"

namespace flashlab::viz {

ImVec2 GridLayout::cell_min(std::int64_t i, std::int64_t j) const {
  return {min.x + float(j) * cell.x, min.y + float(i) * cell.y};
}
ImVec2 GridLayout::cell_max(std::int64_t i, std::int64_t j) const { return cell_min(i + 1, j + 1); }
ImVec2 GridLayout::cell_center(std::int64_t i, std::int64_t j) const {
  return {min.x + (float(j) + 0.5f) * cell.x, min.y + (float(i) + 0.5f) * cell.y};
}

std::optional<std::pair<std::int64_t, std::int64_t>> GridLayout::cell_at(ImVec2 p) const {
  if (p.x < min.x || p.y < min.y || p.x >= max.x || p.y >= max.y) return std::nullopt;
  const auto j = std::min(cols - 1, std::int64_t((p.x - min.x) / cell.x));
  const auto i = std::min(rows - 1, std::int64_t((p.y - min.y) / cell.y));
  return std::pair{i, j};
}

float GridLayout::x_of(double t) const { return min.x + float(t / col_tokens) * cell.x; }
float GridLayout::y_of(double t) const { return min.y + float(t / row_tokens) * cell.y; }

GridLayout grid_layout(const GridAxes& ax, ImVec2 origin, ImVec2 avail) {
  GridLayout lay;
  lay.rows = ax.rows;
  lay.cols = ax.cols;
  lay.row_tokens = double(ax.row_tokens);
  lay.col_tokens = double(ax.col_tokens);
  const float aw = std::max(32.0f, avail.x - kGridLeftMargin - 4), ah = std::max(32.0f, avail.y - kGridTopMargin - 4);
  const double wt = double(ax.cols) * double(ax.col_tokens), ht = double(ax.rows) * double(ax.row_tokens);
  const double scale = std::min(double(aw) / wt, double(ah) / ht);
  const float w = std::clamp(float(std::floor(wt * scale)), std::min(32.0f, aw), aw);
  const float h = std::clamp(float(std::floor(ht * scale)), std::min(32.0f, ah), ah);
  lay.min = {std::floor(origin.x + kGridLeftMargin), std::floor(origin.y + kGridTopMargin)};
  lay.max = {lay.min.x + w, lay.min.y + h};
  lay.cell = {w / float(ax.cols), h / float(ax.rows)};
  return lay;
}

GridHit draw_grid(const char* id, const GridLayout& lay, const GridAxes& ax, ImTextureID tex) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddImage(tex, lay.min, lay.max);
  // tokens that do not exist (past N_q / N_k in a ragged last tile)
  const double row_end = double(ax.rows * ax.row_tokens), col_end = double(ax.cols * ax.col_tokens);
  if (double(ax.col_valid) < col_end)
    dl->AddRectFilled({lay.x_of(double(ax.col_valid)), lay.min.y}, lay.max, palette::padding);
  if (double(ax.row_valid) < row_end)
    dl->AddRectFilled({lay.min.x, lay.y_of(double(ax.row_valid))}, lay.max, palette::padding);

  const ImU32 text = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const float fh = ImGui::GetFontSize();
  const float right_edge = ImGui::GetWindowPos().x + ImGui::GetWindowWidth() - 2;
  auto label = [&](std::int64_t t) { return ax.short_labels ? format_tokens(t) : std::to_string(t); };
  for (std::int64_t t : token_ticks(std::int64_t(col_end), lay.max.x - lay.min.x, 56)) {
    const float x = lay.x_of(double(t));
    dl->AddLine({x, lay.min.y - 4}, {x, lay.min.y}, text);
    const std::string s = label(ax.col_origin + t);
    const float tw = ImGui::CalcTextSize(s.c_str()).x;
    if (x + tw / 2 < right_edge) dl->AddText({x - tw / 2, lay.min.y - 4 - fh}, text, s.c_str());
  }
  for (std::int64_t t : token_ticks(std::int64_t(row_end), lay.max.y - lay.min.y, fh * 1.6f)) {
    const float y = lay.y_of(double(t));
    dl->AddLine({lay.min.x - 4, y}, {lay.min.x, y}, text);
    const std::string s = label(ax.row_origin + t);
    const float tw = ImGui::CalcTextSize(s.c_str()).x;
    dl->AddText({lay.min.x - 6 - tw, y - fh / 2}, text, s.c_str());
  }

  ImGui::SetCursorScreenPos(lay.min);
  ImGui::InvisibleButton(id, {std::max(1.0f, lay.max.x - lay.min.x), std::max(1.0f, lay.max.y - lay.min.y)});
  GridHit hit;
  if (ImGui::IsItemHovered()) {
    hit.hovered = lay.cell_at(ImGui::GetIO().MousePos);
    hit.clicked = hit.hovered && ImGui::IsItemClicked(ImGuiMouseButton_Left);
  }
  return hit;
}

void outline_cells(const GridLayout& lay, std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1,
                   std::uint32_t col, float thickness) {
  ImVec2 a = lay.cell_min(i0, j0), b = lay.cell_max(i1, j1);
  // keep outlines of sub-pixel cells visible
  if (b.x - a.x < 3) {
    a.x -= 1;
    b.x += 1;
  }
  if (b.y - a.y < 3) {
    a.y -= 1;
    b.y += 1;
  }
  ImGui::GetWindowDrawList()->AddRect(a, b, col, 0, 0, thickness);
}

}  // namespace flashlab::viz
