// sweep_panel.cpp — HBM bytes of the current config against block size B (B_r = B_c = B) or SRAM
// size M (auto blocks), for standard attention, V1 and V2, drawn with the window's draw list on a
// log scale. FA1 Theorem 2: Θ(N² d² / M) HBM accesses for FlashAttention, Θ(N d + N²) for standard.
#include <algorithm>
#include <cmath>
#include <string>

#include <imgui.h>

#include "flashlab/report/format.hpp"
#include "flashlab/report/metrics.hpp"
#include "model/palette.hpp"
#include "panels/help.hpp"
#include "panels/panels.hpp"

namespace flashlab::viz {
namespace {

constexpr Algo kAlgos[] = {Algo::standard, Algo::v1, Algo::v2};
constexpr const char* kAlgoNames[] = {"standard", "V1", "V2"};

std::string x_label(SweepAxis axis, std::int64_t x) {
  return axis == SweepAxis::block ? "B = " + std::to_string(x) : "M = " + report::human_bytes(double(x), 0);
}

// Whether point x is the current config (its B_r = B_c = x, or its M = x).
bool is_current(const Problem& p, const Config& c, SweepAxis axis, std::int64_t x) {
  if (axis == SweepAxis::block) return p.tiling.b_r == x && p.tiling.b_c == x;
  return c.auto_blocks && p.sram_capacity == x;
}

// The tooltip of point `pt`: each algorithm's HBM bytes and tiles, or why it was not run.
void point_tooltip(const SweepPoint& pt, SweepAxis axis) {
  std::string tip = x_label(axis, pt.x);
  for (std::size_t n = 0; n < 3; ++n) {
    tip += std::string("\n") + kAlgoNames[n] + ": ";
    tip += pt.hbm[n] ? report::human_bytes(double(*pt.hbm[n])) + " (" + std::to_string(pt.b_r[n]) + " x " +
                           std::to_string(pt.b_c[n]) + " tiles)"
                     : "not run: " + pt.why[n];
  }
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 36);
  ImGui::TextUnformatted(tip.c_str());
  ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
}

// One coloured line and name per algorithm, on one row.
void legend(ImDrawList* dl) {
  for (std::size_t n = 0; n < 3; ++n) {
    const ImVec2 q = ImGui::GetCursorScreenPos();
    const float lh = ImGui::GetTextLineHeight();
    dl->AddRectFilled({q.x, q.y + lh / 2 - 1}, {q.x + 18, q.y + lh / 2 + 2}, palette::algo_colour(kAlgos[n]));
    ImGui::Dummy({20, lh});
    ImGui::SameLine();
    ImGui::TextUnformatted(kAlgoNames[n]);
    ImGui::SameLine(0, 16);
  }
}

// One line per point with a missing algorithm: which, and why on hover.
void missing_points(const std::vector<SweepPoint>& pts, SweepAxis axis) {
  for (const SweepPoint& pt : pts) {
    std::string names, why;
    for (std::size_t n = 0; n < 3; ++n)
      if (!pt.hbm[n]) {
        names.append(names.empty() ? "" : ", ").append(kAlgoNames[n]);
        why.append(why.empty() ? "" : "\n").append(kAlgoNames[n]).append(": ").append(pt.why[n]);
      }
    if (names.empty()) continue;
    ImGui::TextDisabled("%s: not run for %s (hover for why)", x_label(axis, pt.x).c_str(), names.c_str());
    item_help(why.c_str());
  }
}

// HBM bytes per algorithm against the swept value on a log2 axis, the current config marked, with
// a tooltip per point, the legend and the points an algorithm could not run.
void plot(const std::vector<SweepPoint>& pts, SweepAxis axis, const Problem& p, const Config& c) {
  double lo = 1e300, hi = 0;
  for (const SweepPoint& pt : pts)
    for (const auto& v : pt.hbm)
      if (v && *v > 0) lo = std::min(lo, double(*v)), hi = std::max(hi, double(*v));
  if (hi <= 0) {
    ImGui::TextDisabled("no point of this sweep is valid for the current config");
    return;
  }
  // a log2 axis; ticks at powers of two bytes, every `step` doublings so that at most 8 are drawn
  const double ylo = std::floor(std::log2(lo)), yhi = std::max(ylo + 1, std::ceil(std::log2(hi)));
  double step = 10;
  for (double s : {1.0, 2.0, 5.0})
    if ((yhi - ylo) / s <= 8) {
      step = s;
      break;
    }
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float left = 72, w = std::max(120.0f, ImGui::GetContentRegionAvail().x - left - 16), h = 220;
  const ImVec2 a{o.x + left, o.y + 8}, b{a.x + w, a.y + h};
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 grid = ImGui::GetColorU32(ImGuiCol_Border), text = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  auto xs = [&](std::size_t k) { return a.x + w * (pts.size() > 1 ? float(k) / float(pts.size() - 1) : 0.5f); };
  auto ys = [&](double v) { return b.y - h * float((std::log2(v) - ylo) / (yhi - ylo)); };
  for (double e = std::ceil(ylo / step) * step; e <= yhi; e += step) {
    const float y = ys(std::exp2(e));
    dl->AddLine({a.x, y}, {b.x, y}, grid);
    const std::string s = report::human_bytes(std::exp2(e), 0);
    dl->AddText({a.x - 6 - ImGui::CalcTextSize(s.c_str()).x, y - 7}, text, s.c_str());
  }
  for (std::size_t k = 0; k < pts.size(); ++k) {
    const float x = xs(k);
    dl->AddLine({x, a.y}, {x, b.y}, is_current(p, c, axis, pts[k].x) ? palette::selected : grid);
    const std::string s = axis == SweepAxis::block ? std::to_string(pts[k].x) : report::human_bytes(double(pts[k].x), 0);
    dl->AddText({x - ImGui::CalcTextSize(s.c_str()).x / 2, b.y + 4}, text, s.c_str());
  }
  for (std::size_t n = 0; n < 3; ++n) {
    const ImU32 col = palette::algo_colour(kAlgos[n]);
    for (std::size_t k = 0; k < pts.size(); ++k) {
      if (!pts[k].hbm[n]) continue;
      const ImVec2 q{xs(k), ys(double(*pts[k].hbm[n]))};
      dl->AddCircleFilled(q, 3.5f, col);
      if (k + 1 < pts.size() && pts[k + 1].hbm[n]) dl->AddLine(q, {xs(k + 1), ys(double(*pts[k + 1].hbm[n]))}, col, 2);
    }
  }
  ImGui::SetCursorScreenPos(a);
  ImGui::InvisibleButton("##sweep-plot", {w, h + 20});
  if (ImGui::IsItemHovered() && !pts.empty()) {
    const float t = (ImGui::GetIO().MousePos.x - a.x) / w * float(pts.size() - 1);
    const auto k = std::size_t(std::clamp(std::lround(t), 0L, long(pts.size() - 1)));
    point_tooltip(pts[k], axis);
  }
  legend(dl);
  ImGui::TextDisabled("(green line: the current config)");
  missing_points(pts, axis);
}

}  // namespace

void SweepPanel::draw(const Session& s) {
  int ax = int(axis);
  ImGui::RadioButton("block size B", &ax, 0);
  item_help("x: square tiles B_r = B_c = B. Larger tiles mean fewer passes over K and V (V2) or over Q and O (V1).");
  ImGui::SameLine();
  ImGui::RadioButton("SRAM size M", &ax, 1);
  item_help("x: SRAM capacity M with the V1 paper's block sizes B_c = ceil(M/(4d)), B_r = min(B_c, d) (FA1 Alg. 1 "
            "line 1); HBM accesses fall as Θ(N² d² / M) (FA1 Theorem 2). Points whose tiles exceed M are left out.");
  axis = SweepAxis(ax);
  if (generation_ != s.generation() || job_axis_ != axis) {
    generation_ = s.generation();
    job_axis_ = axis;
    const Config c = s.valid_config();
    const SweepAxis a = axis;
    job.start([c, a] { return sweep_hbm(c, a); });
  }
  job.poll();
  ImGui::PushTextWrapPos(0);
  const report::Metric& m = report::metric(kSweepMetric);
  ImGui::TextDisabled("%s (all heads) by %s", m.label.c_str(), to_string(axis).data());
  item_help(m.help.c_str());
  ImGui::PopTextWrapPos();
  const std::vector<SweepPoint>* pts = job.result();
  if (!pts) {
    ImGui::TextDisabled("counting each point with the simulator...");
    return;
  }
  plot(*pts, axis, s.problem(), s.valid_config());
}

}  // namespace flashlab::viz
