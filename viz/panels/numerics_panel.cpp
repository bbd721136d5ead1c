// numerics_panel.cpp — with numerics on, the running row max m and row sum l of the current Q
// block after the current step of the playback (numerics.hpp, every block traced).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include <imgui.h>

#include "panels/help.hpp"
#include "panels/panels.hpp"

namespace flashlab::viz {
namespace {

// Finite range of one statistic over every snapshot of the block, so the plot's scale holds still
// while the values move.
template <class Get>
std::pair<float, float> finite_range(const std::vector<StatSnapshot>& snaps, Get get) {
  float lo = std::numeric_limits<float>::infinity(), hi = -lo;
  for (const StatSnapshot& s : snaps)
    for (float v : get(s))
      if (std::isfinite(v)) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
  if (!(lo <= hi)) return {0, 1};
  if (lo == hi) return {lo - 1, hi + 1};
  return {lo, hi};
}

void plot(const char* label, const std::vector<float>& values, std::pair<float, float> range, const char* help) {
  std::vector<float> shown(values);
  int missing = 0;
  for (float& v : shown)
    if (!std::isfinite(v)) {
      v = range.first;
      ++missing;
    }
  char overlay[96];
  std::snprintf(overlay, sizeof overlay, "%s over rows: scale %.3g .. %.3g", label, range.first, range.second);
  ImGui::PlotLines(label, shown.data(), int(shown.size()), 0, overlay, range.first, range.second,
                   {ImGui::GetContentRegionAvail().x - 40, 70});
  item_help(help);
  if (missing > 0) ImGui::TextDisabled("%d row(s) with no visible key yet (m = -inf, l = 0)", missing);
}

}  // namespace

void PlaybackPanel::draw_numerics(const Session& s) {
  if (stats_generation_ != s.generation()) {
    stats_generation_ = s.generation();
    const Problem p = s.problem();
    stats_.start([p] { return run_numerics(p); });
  }
  stats_.poll();
  const StatResult* r = stats_.result();
  if (!r) {
    ImGui::TextDisabled("computing m and l of every Q block...");
    return;
  }
  if (!r->history) {
    ImGui::TextWrapped("numerics off: %s", r->error.c_str());
    return;
  }
  const StepView* step = track_->last();
  const std::int64_t i = step && step->i >= 0 ? step->i : track_->executor().resident().q_block;
  const StatSnapshot* snap = step && i >= 0 ? r->history->at(i, step->block, step->step) : nullptr;
  if (!snap) {
    ImGui::TextDisabled("no Q block has statistics at this step");
    return;
  }
  ImGui::Text("Q block %lld after step %u", static_cast<long long>(i), snap->step);
  if (snap->j >= 0) {
    ImGui::SameLine();
    ImGui::Text("(K/V block %lld)", static_cast<long long>(snap->j));
  }
  const auto& all = r->history->snapshots(i);
  plot("m", snap->m, finite_range(all, [](const StatSnapshot& x) { return x.m; }),
       "m: the running row max of S over the keys seen so far, one value per row of Q_i (fp32).");
  plot("l", snap->l, finite_range(all, [](const StatSnapshot& x) { return x.l; }),
       "l: the running row sum of exp(S - m) over the keys seen so far, rescaled by exp(m_old - m_new) "
       "whenever m grows (fp32).");
}

}  // namespace flashlab::viz
