// sweep_plot.cpp — see sweep_plot.hpp.
#include "sweep_plot.hpp"

#include <algorithm>
#include <string>

#include "model/palette.hpp"

namespace flashlab::cli {
namespace {

const char* algo_label(Algo a) {
  switch (a) {
    case Algo::standard: return "standard";
    case Algo::v1: return "V1";
    case Algo::v2: return "V2";
    case Algo::v3: return "V3";
  }
  return "?";
}

// The viewer's line colours (viz palette), except standard attention's light grey, which is drawn
// for a dark window and would vanish on the plot's white page.
std::uint32_t algo_colour(Algo a) {
  return a == Algo::standard ? viz::rgba(110, 110, 110) : viz::palette::algo_colour(a);
}

std::string x_label(Axis axis) {
  switch (axis) {
    case Axis::n: return "N = N_q = N_k (tokens)";
    case Axis::d: return "head dimension d";
    case Axis::br: return "B_r (rows of a tile)";
    case Axis::bc: return "B_c (columns of a tile)";
    case Axis::sram: return "SRAM capacity M (bytes)";
  }
  return "";
}

// "name = v" when every sample has the same value of `field`, else "".
template <class Field>
std::string fixed(const std::vector<SweepSample>& samples, const char* name, Field field) {
  const std::int64_t v = field(samples.front());
  for (const SweepSample& s : samples)
    if (field(s) != v) return "";
  return std::string(name) + " = " + std::to_string(v);
}

}  // namespace

SweepSample sweep_sample(std::int64_t value, const Problem& p, std::uint64_t hbm_bytes) {
  const Tiling& t = p.tiling;
  return SweepSample{value, p.algo, t.n_q, t.n_k, t.d, t.b_r, t.b_c, hbm_bytes};
}

Plot sweep_plot(Axis axis, const Problem& first, const std::vector<SweepSample>& samples) {
  Plot plot;
  plot.x_label = x_label(axis);
  plot.x_unit = axis == Axis::sram ? TickUnit::bytes : TickUnit::plain;
  plot.y_label = first.bh() > 1 ? "HBM bytes, read + written (all batch x heads)" : "HBM bytes, read + written";
  plot.y_unit = TickUnit::bytes;
  std::string shape;
  for (const std::string& part :
       {fixed(samples, "N_q", [](const SweepSample& s) { return s.n_q; }),
        fixed(samples, "N_k", [](const SweepSample& s) { return s.n_k; }),
        fixed(samples, "d", [](const SweepSample& s) { return s.d; }),
        fixed(samples, "B_r", [](const SweepSample& s) { return s.b_r; }),
        fixed(samples, "B_c", [](const SweepSample& s) { return s.b_c; })})
    if (!part.empty()) shape += part + ", ";
  plot.title = "HBM traffic against " + x_label(axis).substr(0, x_label(axis).find(" ("));
  if (axis == Axis::sram) plot.title += ", and FA1 Theorem 2's Θ(N²d²/M)";
  plot.subtitle = shape + "mask " + to_string(first.mask) + ", " + std::string(to_string(first.dtype));
  if (first.bh() > 1) plot.subtitle += ", batch " + std::to_string(first.batch) + " x heads " + std::to_string(first.heads);

  for (Algo a : {Algo::standard, Algo::v1, Algo::v2}) {
    PlotSeries s{algo_label(a), algo_colour(a), {}, {}};
    for (const SweepSample& p : samples)
      if (p.algo == a) s.x.push_back(double(p.value)), s.y.push_back(double(p.hbm_bytes));
    if (!s.x.empty()) plot.series.push_back(std::move(s));
  }
  if (axis == Axis::sram && !samples.empty()) {
    // FA1 Theorem 2: Θ(N²d²/M) HBM accesses. N and d are fixed here, so the curve is c / M; c puts
    // it through V1's first point, so that V1's distance from it shows the constant drifting.
    const auto v1 = std::find_if(samples.begin(), samples.end(), [](const SweepSample& s) { return s.algo == Algo::v1; });
    const SweepSample& anchor = v1 != samples.end() ? *v1 : samples.front();
    const double c = double(anchor.hbm_bytes) * double(anchor.value);
    PlotSeries ref{"Θ(N²d²/M)", viz::rgba(0, 150, 110), {}, {}, true};
    for (const SweepSample& p : samples)
      if (p.algo == anchor.algo) ref.x.push_back(double(p.value)), ref.y.push_back(c / double(p.value));
    plot.series.push_back(std::move(ref));
  }
  return plot;
}

}  // namespace flashlab::cli
