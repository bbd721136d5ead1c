// map_picture.cpp — see map_picture.hpp. Text is stb_easy_font's quads filled into the image.
#include "map_picture.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <stb_easy_font.h>

#include "model/map_image.hpp"
#include "model/palette.hpp"
#include "model/tile_analysis.hpp"
#include "report.hpp"

namespace flashlab::cli {
namespace {

constexpr std::uint32_t kBackground = viz::rgba(255, 255, 255);
constexpr std::uint32_t kText = viz::rgba(20, 20, 24);
constexpr int kTextScale = 2;                     // stb_easy_font pixels are drawn 2 x 2
constexpr int kLineHeight = 12 * kTextScale;      // glyphs are 7 units tall, plus spacing
constexpr int kSwatch = 14;

void fill(viz::Image& img, int x0, int y0, int x1, int y1, std::uint32_t colour) {
  x0 = std::max(x0, 0), y0 = std::max(y0, 0), x1 = std::min(x1, img.width), y1 = std::min(y1, img.height);
  for (int y = y0; y < y1; ++y)
    std::fill_n(img.pixels.begin() + std::ptrdiff_t(y) * img.width + x0, std::max(0, x1 - x0), colour);
}

int text_width(const std::string& s) {
  std::string copy = s;
  return stb_easy_font_width(copy.data()) * kTextScale;
}

// stb_easy_font gives axis-aligned quads (4 vertices of 16 bytes: x, y, z floats, colour);
// each is filled at kTextScale.
void draw_text(viz::Image& img, int x, int y, const std::string& s) {
  std::string copy = s;
  std::vector<char> buffer(copy.size() * 300 + 64);  // ~270 bytes per character (stb_easy_font.h)
  const int quads = stb_easy_font_print(0, 0, copy.data(), nullptr, buffer.data(), int(buffer.size()));
  for (int q = 0; q < quads; ++q) {
    const float* v0 = reinterpret_cast<const float*>(buffer.data() + std::size_t(q) * 64);
    const float* v2 = reinterpret_cast<const float*>(buffer.data() + std::size_t(q) * 64 + 32);
    fill(img, x + int(v0[0] * kTextScale), y + int(v0[1] * kTextScale), x + int(v2[0] * kTextScale),
         y + int(v2[1] * kTextScale), kText);
  }
}

// config_line's "; "-separated parts packed into lines at most `width` pixels wide.
std::vector<std::string> wrap(const std::string& text, int width) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find("; ", start), text.size());
    const std::string part = text.substr(start, end - start);
    if (!lines.empty() && text_width(lines.back() + "; " + part) <= width)
      lines.back() += "; " + part;
    else
      lines.push_back(part);
    start = end + 2;
  }
  return lines;
}

}  // namespace

int map_cell_px(std::int64_t t_r, std::int64_t t_c) {
  return int(std::clamp<std::int64_t>(kMapSide / std::max<std::int64_t>({t_r, t_c, 1}), 1, kMapMaxCell));
}

std::string map_scale(std::int64_t t_r, std::int64_t t_c) {
  if (std::max(t_r, t_c) <= kMapSide) return std::to_string(map_cell_px(t_r, t_c)) + " px per tile";
  const auto per_px = [](std::int64_t tiles) {  // tiles / pixels on one side, one decimal
    const std::int64_t px = std::min<std::int64_t>(tiles, kMapSide), tenths = (tiles * 10 + px / 2) / px;
    return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10);
  };
  return per_px(t_r) + " x " + per_px(t_c) + " tiles per px, " +
         (t_r * t_c > viz::kBoxFilterLimit ? "each px the colour of the tile at its centre"
                                           : "each px the mean colour of its tiles");
}

viz::Image map_picture(const Problem& p) {
  const viz::TileAnalysis analysis(p);
  const std::int64_t t_r = p.tiling.t_r(), t_c = p.tiling.t_c();
  const viz::Image tiles = viz::map_image(analysis, viz::MapMode::classes, viz::Metric::hbm_bytes, kMapSide, kMapSide);
  const int cell = map_cell_px(t_r, t_c), gap = cell >= kMapGapFrom ? 1 : 0;
  const int map_w = tiles.width * cell, map_h = tiles.height * cell;

  const struct {
    std::uint32_t colour;
    const char* label;
  } legend[] = {{viz::palette::full, "full: every element visible"},
                {viz::palette::partial, "partial: some visible"},
                {viz::palette::skipped, "skipped: none visible, not computed"},
                {viz::palette::computed_skipped, "skipped but computed (block skip off)"}};
  int legend_w = 0;
  for (const auto& item : legend) legend_w = std::max(legend_w, kSwatch + 8 + text_width(item.label));
  const std::string axes = "tile (i, j): row i = Q block 0.." + std::to_string(t_r - 1) + " downwards, column j = K/V block 0.." +
                           std::to_string(t_c - 1) + " rightwards";
  const int text_w = std::max({map_w, legend_w, text_width(axes), 480});
  const std::vector<std::string> config = wrap(config_line(p), text_w);

  viz::Image img;
  img.width = 2 * kMapMargin + text_w;
  img.height = kMapMargin + map_h + kMapMargin + int(std::size(legend) + 1 + config.size()) * kLineHeight + kMapMargin;
  img.pixels.assign(std::size_t(img.width) * std::size_t(img.height), kBackground);
  for (int y = 0; y < map_h; ++y)
    for (int x = 0; x < map_w; ++x) {
      const bool edge = gap && (x % cell == cell - 1 || y % cell == cell - 1);
      img.pixels[std::size_t(kMapMargin + y) * std::size_t(img.width) + std::size_t(kMapMargin + x)] =
          edge ? kBackground : tiles.at(x / cell, y / cell);
    }
  int y = kMapMargin + map_h + kMapMargin;
  for (const auto& item : legend) {
    fill(img, kMapMargin, y + 2, kMapMargin + kSwatch, y + 2 + kSwatch, item.colour);
    draw_text(img, kMapMargin + kSwatch + 8, y + 2, item.label);
    y += kLineHeight;
  }
  for (const std::string& line : config) {
    draw_text(img, kMapMargin, y + 2, line);
    y += kLineHeight;
  }
  draw_text(img, kMapMargin, y + 2, axes);
  return img;
}

}  // namespace flashlab::cli
