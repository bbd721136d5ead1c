// image.hpp — an RGBA picture of a grid of cells (tiles of the block-skip map, elements of one
// tile), shrunk to the pixels available. Cells smaller than a pixel are averaged, never dropped,
// so a million-tile map is one texture of at most a few hundred thousand pixels.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace flashlab::viz {

/// A colour packed as bytes r, g, b, a in memory order (the layout of ImGui's IM_COL32 and of
/// glTexImage2D(GL_RGBA, GL_UNSIGNED_BYTE) on little-endian machines).
constexpr std::uint32_t rgba(std::uint32_t r, std::uint32_t g, std::uint32_t b, std::uint32_t a = 255) {
  return r | (g << 8) | (b << 16) | (a << 24);
}
constexpr std::uint32_t channel(std::uint32_t c, int k) { return (c >> (8 * k)) & 0xFFu; }

/// Pixels row-major, top row first: (height, width).
struct Image {
  int width = 0, height = 0;
  std::vector<std::uint32_t> pixels;
  std::uint32_t at(int x, int y) const { return pixels[std::size_t(y) * std::size_t(width) + std::size_t(x)]; }
};

/// Grids with more cells than this are point-sampled (the cell at each pixel's centre) instead of
/// averaged, so that no rebuild walks more than 2^24 cells.
inline constexpr std::int64_t kBoxFilterLimit = std::int64_t(1) << 24;

/// The picture of a rows x cols grid in at most max_w x max_h pixels. When the grid fits, pixel
/// (x, y) is cell (y, x). Otherwise pixel (x, y) covers cells [y*rows/H, (y+1)*rows/H) x
/// [x*cols/W, (x+1)*cols/W) and takes their mean colour (a box filter; above kBoxFilterLimit
/// cells, the colour of the cell at the range's centre). `colour_of(i, j)` gives cell (i, j).
template <class ColourOf>
Image shrink_grid(std::int64_t rows, std::int64_t cols, int max_w, int max_h, ColourOf colour_of) {
  Image img;
  if (rows <= 0 || cols <= 0 || max_w <= 0 || max_h <= 0) return img;
  img.width = int(std::min<std::int64_t>(cols, max_w));
  img.height = int(std::min<std::int64_t>(rows, max_h));
  img.pixels.assign(std::size_t(img.width) * std::size_t(img.height), 0);
  const std::int64_t W = img.width, H = img.height;
  auto col0 = [&](std::int64_t x) { return x * cols / W; };
  auto row0 = [&](std::int64_t y) { return y * rows / H; };
  const bool sample = rows * cols > kBoxFilterLimit;
  std::vector<std::uint64_t> sum(std::size_t(W) * 4);
  for (std::int64_t y = 0; y < H; ++y) {
    std::uint32_t* out = img.pixels.data() + std::size_t(y * W);
    const std::int64_t i0 = row0(y), i1 = row0(y + 1);
    if (sample) {
      const std::int64_t i = (i0 + i1 - 1) / 2;
      for (std::int64_t x = 0; x < W; ++x) out[x] = colour_of(i, (col0(x) + col0(x + 1) - 1) / 2);
      continue;
    }
    std::fill(sum.begin(), sum.end(), 0);
    for (std::int64_t i = i0; i < i1; ++i)
      for (std::int64_t x = 0; x < W; ++x)
        for (std::int64_t j = col0(x), j1 = col0(x + 1); j < j1; ++j) {
          const std::uint32_t c = colour_of(i, j);
          for (int k = 0; k < 4; ++k) sum[std::size_t(x * 4 + k)] += channel(c, k);
        }
    for (std::int64_t x = 0; x < W; ++x) {
      const std::uint64_t n = std::uint64_t((i1 - i0) * (col0(x + 1) - col0(x)));
      std::uint32_t c = 0;
      for (int k = 0; k < 4; ++k) c |= std::uint32_t((sum[std::size_t(x * 4 + k)] + n / 2) / n) << (8 * k);
      out[x] = c;
    }
  }
  return img;
}

}  // namespace flashlab::viz
