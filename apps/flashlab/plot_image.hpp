// plot_image.hpp — a line plot on log-log axes drawn into a picture by PLplot (its memcairo
// driver: anti-aliased lines and text into memory, no file and no window). Used by
// `flashlab sweep --plot`; the picture is written by PngOutput.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/image.hpp"

namespace flashlab::cli {

/// How the tick labels of an axis read: plain integers, or bytes in binary units ("16 KiB").
enum class TickUnit : std::uint8_t { plain, bytes };

struct PlotSeries {
  std::string label;      // legend text (UTF-8)
  std::uint32_t colour;   // viz::rgba
  std::vector<double> x, y;  // same length; every value finite and > 0 (log axes)
  bool dashed = false;    // a reference curve: dashed, no markers
};

struct Plot {
  std::string title, subtitle, x_label, y_label;  // UTF-8; the subtitle is a second, smaller title line
  TickUnit x_unit = TickUnit::plain, y_unit = TickUnit::bytes;
  std::vector<PlotSeries> series;
};

/// Smallest and largest picture side accepted by plot_image, in pixels.
inline constexpr int kPlotMinSide = 320, kPlotMaxSide = 4096;

/// The plot in a width x height picture on a white background: log2 axes with ticks at powers of
/// two, each series a line (markers at its points unless dashed), the legend to the right of the
/// plot area. Throws std::invalid_argument for a size outside [kPlotMinSide, kPlotMaxSide], an
/// empty plot, or a value that is not finite and > 0; std::runtime_error when PLplot's memcairo
/// driver is not installed (Debian: plplot-driver-cairo).
viz::Image plot_image(const Plot& plot, int width, int height);

}  // namespace flashlab::cli
