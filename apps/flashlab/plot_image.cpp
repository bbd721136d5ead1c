// plot_image.cpp — see plot_image.hpp. PLplot is used through its C API, one plot per
// plinit/plend; values are plotted as log2(value) on linear axes so that major ticks fall on
// powers of two and label themselves (plslabelfunc).
#include "plot_image.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include <plplot.h>

#include "flashlab/report/format.hpp"

namespace flashlab::cli {
namespace {

constexpr std::uint32_t kWhite = viz::rgba(255, 255, 255), kInk = viz::rgba(30, 30, 34),
                        kGrid = viz::rgba(225, 225, 230);
constexpr int kMaxTicks = 8;
// The x axis's room per labelled tick: a label such as "128 KiB" is about 65 px wide at the tick
// character size below (plschr 0.9), so neighbours closer than this run into each other.
constexpr double kTickLabelPx = 80;
constexpr double kPlotLeft = 0.15, kPlotRight = 0.76;  // the plot area's x extent (plvpor)
constexpr const char* kMarker = "#(840)";  // a Hershey open circle

bool has_memcairo() {
  std::array<const char*, 128> menu{}, names{};
  const char** m = menu.data();
  const char** n = names.data();
  int count = int(names.size());
  plgDevs(&m, &n, &count);
  for (int k = 0; k < count; ++k)
    if (std::strcmp(n[k], "memcairo") == 0) return true;
  return false;
}

// PLplot's colour map 0 entry `index` set to an Image colour.
void set_colour(int index, std::uint32_t c) {
  plscol0(index, PLINT(viz::channel(c, 0)), PLINT(viz::channel(c, 1)), PLINT(viz::channel(c, 2)));
}

// Tick label of log2 value `e` (ticks fall on whole powers of two): 2^e as an integer with digit
// groups, or in binary byte units ("512 MiB").
void tick_label(PLINT axis, PLFLT e, char* label, PLINT length, PLPointer data) {
  const auto* units = static_cast<const std::array<TickUnit, 2>*>(data);
  const TickUnit unit = (*units)[axis == PL_Y_AXIS ? 1 : 0];
  const long k = std::lround(e);
  std::string text;
  if (std::abs(e - double(k)) > 1e-9 || k < 0 || k > 62) {
    text = "2^" + std::to_string(k);
  } else if (unit == TickUnit::bytes) {
    text = report::human_bytes(std::ldexp(1.0, int(k)), 0);
  } else {
    text = report::group_digits(std::uint64_t(1) << k);
  }
  std::snprintf(label, std::size_t(length), "%s", text.c_str());
}

// Major tick spacing (whole powers of two) for a log2 span with at most `ticks` steps.
double tick_step(double span, int ticks = kMaxTicks) { return std::max(1.0, std::ceil(span / ticks)); }

// log2 of every series' points, and their range.
struct LogPoints {
  std::vector<std::vector<PLFLT>> xs, ys;  // log2 of each series' values
  double x_lo = INFINITY, x_hi = -INFINITY, y_lo = INFINITY, y_hi = -INFINITY;
};

// The plot's points on log2 axes; throws std::invalid_argument for a series whose x and y differ
// in length, a value that is not finite and > 0, or no point at all.
LogPoints log_points(const Plot& plot) {
  LogPoints out;
  for (const PlotSeries& s : plot.series) {
    if (s.x.size() != s.y.size()) throw std::invalid_argument("plot series " + s.label + ": x and y differ in length");
    auto& lx = out.xs.emplace_back();
    auto& ly = out.ys.emplace_back();
    for (std::size_t k = 0; k < s.x.size(); ++k) {
      if (!(std::isfinite(s.x[k]) && s.x[k] > 0 && std::isfinite(s.y[k]) && s.y[k] > 0))
        throw std::invalid_argument("plot series " + s.label + ": a value that is not finite and > 0");
      lx.push_back(std::log2(s.x[k]));
      ly.push_back(std::log2(s.y[k]));
      out.x_lo = std::min(out.x_lo, lx.back()), out.x_hi = std::max(out.x_hi, lx.back());
      out.y_lo = std::min(out.y_lo, ly.back()), out.y_hi = std::max(out.y_hi, ly.back());
    }
  }
  if (!(out.x_lo <= out.x_hi)) throw std::invalid_argument("plot: no points");
  return out;
}

// The frame on the axes [x0, x1] x [y0, y1] (log2): the plot area, the grid under the lines, the
// axes with power-of-two ticks labelled in `units` (x labels as many as fit in `width` pixels),
// the axis labels, the title and the subtitle.
void draw_frame(const Plot& plot, int width, std::array<TickUnit, 2>& units, double x0, double x1, double y0,
                double y1) {
  plvpor(kPlotLeft, kPlotRight, 0.12, 0.86);
  // as many x labels as fit side by side in the plot area's width, at most kMaxTicks
  const int x_ticks = std::clamp(int((kPlotRight - kPlotLeft) * width / kTickLabelPx), 2, kMaxTicks);
  plwind(x0, x1, y0, y1);
  plslabelfunc(tick_label, &units);
  plcol0(2);
  plbox("g", tick_step(x1 - x0, x_ticks), 0, "g", tick_step(y1 - y0), 0);  // the grid under the lines
  plcol0(1);
  plbox("bcnsto", tick_step(x1 - x0, x_ticks), 0, "bcnstvo", tick_step(y1 - y0), 0);
  plmtex("b", 3.0, 0.5, 0.5, plot.x_label.c_str());
  plmtex("l", 7.5, 0.5, 0.5, plot.y_label.c_str());
  plschr(0, 1.1);
  plmtex("t", 2.6, 0.5, 0.5, plot.title.c_str());
  plschr(0, 0.8);
  plmtex("t", 1.0, 0.5, 0.5, plot.subtitle.c_str());
  plschr(0, 0.9);
}

// The series, data first and reference curves (dashed) over them, and the legend to the right.
void draw_series(const Plot& plot, const LogPoints& pts) {
  const PLINT n = PLINT(plot.series.size());
  std::vector<PLINT> opts(n), text_colours(n, 1), line_colours(n), styles(n), symbol_colours(n), symbol_counts(n, 1);
  std::vector<PLFLT> line_widths(n, 2.0), symbol_scales(n, 1.0);
  std::vector<const char*> texts(n), symbols(n);
  for (PLINT k = 0; k < n; ++k) {
    const PlotSeries& s = plot.series[std::size_t(k)];
    set_colour(3 + k, s.colour);
    opts[std::size_t(k)] = s.dashed ? PL_LEGEND_LINE : (PL_LEGEND_LINE | PL_LEGEND_SYMBOL);
    line_colours[std::size_t(k)] = symbol_colours[std::size_t(k)] = 3 + k;
    styles[std::size_t(k)] = s.dashed ? 2 : 1;
    texts[std::size_t(k)] = s.label.c_str();
    symbols[std::size_t(k)] = s.dashed ? "" : kMarker;
  }
  for (const bool dashed : {false, true})  // reference curves last, dashed over the data
    for (PLINT k = 0; k < n; ++k) {
      const PlotSeries& s = plot.series[std::size_t(k)];
      if (s.dashed != dashed) continue;
      const auto& x = pts.xs[std::size_t(k)];
      const auto& y = pts.ys[std::size_t(k)];
      plcol0(3 + k);
      plwidth(2.0);
      pllsty(dashed ? 2 : 1);
      plline(PLINT(x.size()), x.data(), y.data());
      if (!dashed) plstring(PLINT(x.size()), x.data(), y.data(), kMarker);
    }
  pllsty(1);
  plwidth(1);
  PLFLT legend_w = 0, legend_h = 0;
  pllegend(&legend_w, &legend_h, PL_LEGEND_BACKGROUND, PL_POSITION_RIGHT | PL_POSITION_OUTSIDE | PL_POSITION_TOP,
           0.02, -0.25, 0.06, 0, 0, 1, 0, 0, n, opts.data(), 0.5, 0.8, 2.0, 0.0, text_colours.data(), texts.data(),
           nullptr, nullptr, nullptr, nullptr, line_colours.data(), styles.data(), line_widths.data(),
           symbol_colours.data(), symbol_scales.data(), symbol_counts.data(), symbols.data());
}

}  // namespace

viz::Image plot_image(const Plot& plot, int width, int height) {
  if (width < kPlotMinSide || width > kPlotMaxSide || height < kPlotMinSide || height > kPlotMaxSide)
    throw std::invalid_argument("plot size " + std::to_string(width) + " x " + std::to_string(height) +
                                " outside " + std::to_string(kPlotMinSide) + ".." + std::to_string(kPlotMaxSide));
  const LogPoints pts = log_points(plot);
  if (!has_memcairo())
    throw std::runtime_error("PLplot's memcairo driver is not installed (Debian: apt-get install plplot-driver-cairo)");
  // Axes: whole powers of two around the data, at least one step wide.
  const double x0 = std::floor(pts.x_lo - 0.25), x1 = std::max(std::ceil(pts.x_hi + 0.25), x0 + 1);
  const double y0 = std::floor(pts.y_lo - 0.25), y1 = std::max(std::ceil(pts.y_hi + 0.25), y0 + 1);

  viz::Image img;
  img.width = width, img.height = height;
  img.pixels.assign(std::size_t(width) * std::size_t(height), kWhite);  // memcairo draws over it
  std::array<TickUnit, 2> units{plot.x_unit, plot.y_unit};
  plsdev("memcairo");
  plsmema(width, height, img.pixels.data());
  set_colour(0, kWhite);  // background (the legend's box)
  set_colour(1, kInk);
  set_colour(2, kGrid);
  plinit();
  pladv(0);
  plschr(0, 0.9);
  draw_frame(plot, width, units, x0, x1, y0, y1);
  draw_series(plot, pts);
  plend();
  // memcairo leaves the alpha of the pixels it draws as cairo computed it; the picture is opaque.
  for (std::uint32_t& p : img.pixels) p |= viz::rgba(0, 0, 0, 255);
  return img;
}

}  // namespace flashlab::cli
