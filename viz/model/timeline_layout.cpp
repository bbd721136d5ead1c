// timeline_layout.cpp — see timeline_layout.hpp.
#include "model/timeline_layout.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "model/palette.hpp"

namespace flashlab::viz {
namespace {

std::string us(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f us", s * 1e6);
  return buf;
}

void clamp_window(TimeView& v) {
  const double end = std::max(v.end_s, TimeView::kMinSpan_s);
  double span = std::clamp(v.span_s(), TimeView::kMinSpan_s, end);
  if (!(span > 0)) span = end;
  double t0 = std::clamp(v.t0_s, 0.0, end - span);
  v.t0_s = t0;
  v.t1_s = t0 + span;
}

}  // namespace

TimeView TimeView::whole(double end_s, float x0, float width) {
  TimeView v;
  v.end_s = end_s > 0 ? end_s : 1e-6;
  v.t0_s = 0;
  v.t1_s = v.end_s;
  v.x0 = x0;
  v.width = std::max(width, 1.0f);
  return v;
}

void TimeView::zoom(double factor, double x) {
  if (!(factor > 0)) return;
  const double t = t_of(x);
  const double span = std::max(span_s() / factor, kMinSpan_s);
  const double f = (x - x0) / double(width);  // where t sits in the window, kept
  t0_s = t - f * span;
  t1_s = t0_s + span;
  clamp_window(*this);
}

void TimeView::pan(double pixels) {
  const double dt = pixels / double(width) * span_s();
  t0_s += dt;
  t1_s += dt;
  clamp_window(*this);
}

TimelineLayout layout_timeline(const Timeline& t, const TimeView& v, float y0, float row_h) {
  TimelineLayout out;
  float y = y0;
  for (std::size_t k = 0; k < t.lanes.size(); ++k, y += row_h) out.rows.push_back({std::int32_t(k), t.lanes[k].name, y, y + row_h});
  const bool ring = t.stages > 0 && !t.ring.empty();
  if (ring) {
    out.rows.push_back({-1, "K/V ring", y, y + row_h});
    y += row_h;
  }
  out.height = y - y0;

  const double left = v.x0, right = double(v.x0) + double(v.width);
  std::vector<double> lane_end(t.lanes.size(), left);    // right edge of each lane's last rectangle
  std::vector<std::ptrdiff_t> last(t.lanes.size(), -1);  // its index in out.rects
  for (std::size_t k = 0; k < t.intervals.size(); ++k) {
    const TimelineInterval& iv = t.intervals[k];
    if (iv.lane < 0 || std::size_t(iv.lane) >= t.lanes.size()) continue;
    if (iv.end_s < v.t0_s || iv.start_s > v.t1_s) continue;
    const auto lane = std::size_t(iv.lane);
    double a = std::max(v.x_of(iv.start_s), left), b = std::min(v.x_of(iv.end_s), right);
    a = std::max(a, lane_end[lane]);
    if (b < a) b = a;
    const std::uint32_t colour = palette::phase_colour(iv.what);
    // within the pixel column where the lane's last rectangle ends: merged into it
    if (last[lane] >= 0 && std::floor(b) <= std::floor(lane_end[lane]) && b - a < 1) {
      IntervalRect& r = out.rects[std::size_t(last[lane])];
      r.x1 = float(std::max(double(r.x1), b));
      ++r.merged;
      lane_end[lane] = r.x1;
      continue;
    }
    const LaneRow& row = out.rows[lane];
    const bool wait = palette::is_wait(iv.what);
    // a wait (a bubble) is drawn in the middle half of its row, work from edge to edge less 1 pixel
    const float h = row.y1 - row.y0, inset = wait ? h / 4 : 1.0f;
    last[lane] = std::ptrdiff_t(out.rects.size());
    out.rects.push_back({float(a), float(b), row.y0 + inset, row.y1 - inset, colour, k, 1});
    lane_end[lane] = b;
  }

  if (ring) {
    const LaneRow& row = out.rows.back();
    const float h = row.y1 - row.y0 - 2;
    for (std::size_t k = 0; k < t.ring.size(); ++k) {
      const double s0 = t.ring[k].t_s, s1 = k + 1 < t.ring.size() ? t.ring[k + 1].t_s : t.time_s;
      if (s1 < v.t0_s || s0 > v.t1_s || t.ring[k].full <= 0) continue;
      const double a = std::max(v.x_of(s0), left), b = std::min(v.x_of(s1), right);
      const float top = row.y1 - 1 - h * float(std::min(t.ring[k].full, t.stages)) / float(t.stages);
      out.ring.push_back({float(a), float(b), top, row.y1 - 1, t.ring[k].full});
    }
  }
  return out;
}

std::optional<std::size_t> rect_at(const TimelineLayout& l, float x, float y) {
  for (std::size_t k = l.rects.size(); k-- > 0;) {
    const IntervalRect& r = l.rects[k];
    // a rectangle under a pixel wide is hit over its whole pixel
    if (x >= r.x0 && x < std::max(r.x1, r.x0 + 1) && y >= r.y0 && y < r.y1) return k;
  }
  return std::nullopt;
}

std::string wait_cause(Phase ph) {
  switch (ph) {
    case Phase::wait_full: return "waiting for the stage's K_j / V_j load to land (full mbarrier)";
    case Phase::wait_empty: return "waiting for the consumers to release a stage (empty mbarrier)";
    case Phase::wait_barrier: return "waiting for the other consumer warpgroup's GEMMs (ping-pong named barrier)";
    case Phase::wait_mma: return "waiting for its own wgmma group to finish (wgmma.wait_group)";
    default: return "";
  }
}

std::string interval_summary(const Timeline& t, std::size_t k, std::size_t merged) {
  const TimelineInterval& iv = t.intervals.at(k);
  std::string s = std::string(to_string(iv.what));
  if (iv.lane >= 0 && std::size_t(iv.lane) < t.lanes.size()) s += " on " + t.lanes[std::size_t(iv.lane)].name;
  if (iv.i >= 0 || iv.j >= 0) {
    s += ", tile (" + std::to_string(iv.i) + ", " + std::to_string(iv.j) + ")";
    if (iv.bh >= 0) s += " of (batch, head) " + std::to_string(iv.bh);
  }
  s += "\nstart " + us(iv.start_s) + ", end " + us(iv.end_s) + " (" + us(iv.end_s - iv.start_s) + ")";
  if (const std::string c = wait_cause(iv.what); !c.empty()) s += "\ncause: " + c;
  // appended piece by piece: GCC 12 warns falsely (-Wrestrict) on "\n" + std::string
  if (merged > 1) s.append("\n").append(std::to_string(merged)).append(" intervals in this pixel: zoom in to see each");
  return s;
}

std::vector<double> time_ticks(const TimeView& v, double min_spacing) {
  std::vector<double> out;
  const double span = v.span_s();
  if (!(span > 0) || v.width <= 0) return out;
  const double min_dt = span * min_spacing / double(v.width);
  double step = std::pow(10.0, std::floor(std::log10(min_dt)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (step * m >= min_dt) {
      step *= m;
      break;
    }
  for (double k = std::ceil(v.t0_s / step); k * step <= v.t1_s * (1 + 1e-12); k += 1) out.push_back(k * step);
  return out;
}

std::vector<Phase> phases_present(const Timeline& t) {
  bool seen[kPhaseCount] = {};
  for (const TimelineInterval& iv : t.intervals) seen[int(iv.what)] = true;
  std::vector<Phase> out;
  for (int p = 0; p < kPhaseCount; ++p)
    if (seen[p]) out.push_back(Phase(p));
  return out;
}

TokenBox tile_tokens(std::int64_t i, std::int64_t j, std::int64_t b_r, std::int64_t b_c) {
  constexpr std::int64_t all = std::int64_t(1) << 62;
  return {i * b_r, (i + 1) * b_r, j < 0 ? 0 : j * b_c, j < 0 ? all : (j + 1) * b_c};
}

bool overlap(const TokenBox& a, const TokenBox& b) {
  return a.q0 < b.q1 && b.q0 < a.q1 && a.k0 < b.k1 && b.k0 < a.k1;
}

}  // namespace flashlab::viz
