// compare_panel.cpp — V1 (FA1 Alg. 1) and V2 (FA2 Alg. 1) side by side on the same config, moved
// in step by one playback clock, with their totals and the ratio V1 / V2 of each; below them, why
// V2 is faster: the predicted time of each step from V1 to V2 as a bar (`flashlab explain`).
#include <algorithm>
#include <string>
#include <vector>

#include <imgui.h>

#include "flashlab/config/reference_tile.hpp"
#include "flashlab/report/format.hpp"
#include "flashlab/report/metrics.hpp"
#include "model/palette.hpp"
#include "panels/help.hpp"
#include "panels/panels.hpp"

namespace flashlab::viz {
namespace {

void side_view(const char* id, const char* title, const CompareSide& side, std::uint64_t generation,
               TextureSlot& slot, TextureSink& sink, ImVec2 size) {
  ImGui::BeginChild(id, size);
  ImGui::TextWrapped("%s", title);
  if (!side.analysis) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.45f, 0.4f, 1.0f));
    ImGui::TextWrapped("Invalid for this algorithm: %s", side.error.c_str());
    ImGui::PopStyleColor();
    ImGui::EndChild();
    return;
  }
  const TileAnalysis& a = *side.analysis;
  const Problem& p = a.problem();
  ImGui::TextDisabled("tile %s x %s x %d, grid %s; block skip %s, %s", report::group_digits(std::uint64_t(p.tiling.b_r)).c_str(),
                      report::group_digits(std::uint64_t(p.tiling.b_c)).c_str(), p.warps,
                      report::group_digits(std::uint64_t(a.figures().counters.grid_blocks)).c_str(), p.block_skip ? "on" : "off",
                      to_string(p.split).data());
  item_help("Each algorithm's own defaults unless the config sets them: V1 computes every tile (the V1 paper's "
            "dense kernel) with split-K warps; V2 skips tiles with no visible element and splits rows (split-Q).");
  const Track& track = *side.track;
  const Cost& now = track.executor().cost_one_head();
  ImGui::Text("step %s / %s, HBM %s", report::group_digits(track.position()).c_str(), report::group_digits(track.total_steps()).c_str(),
              report::human_bytes(double(now.read_bytes() + now.write_bytes())).c_str());
  item_help("Steps run so far and the HBM bytes (read + written, one (batch, head)) they moved.");

  const Tiling& t = a.tiling();
  const GridAxes ax{t.t_r(), t.t_c(), t.b_r, t.b_c, 0, 0, t.n_q, t.n_k};
  const GridLayout lay = grid_layout(ax, ImGui::GetCursorScreenPos(), ImGui::GetContentRegionAvail());
  const int w = lay.pixel_width(), h = lay.pixel_height();
  const ImTextureID tex = slot.get(sink, {std::int64_t(generation), w, h}, [&] {
    return map_image(a, MapMode::classes, Metric::hbm_bytes, w, h);
  });
  const GridHit hit = draw_grid(id, lay, ax, tex);
  if (const StepView* s = track.last(); s) {
    const Resident r = track.executor().resident();
    if (r.q_block >= 0) outline_cells(lay, r.q_block, r.q_block, 0, t.t_c() - 1, palette::resident, 1.5f);
    if (r.kv_block >= 0) outline_cells(lay, 0, t.t_r() - 1, r.kv_block, r.kv_block, palette::resident, 1.5f);
    if (s->i >= 0 && s->j >= 0) outline_cells(lay, s->i, s->i, s->j, s->j, palette::resident, 3.0f);
  }
  if (hit.hovered) ImGui::SetTooltip("%s", tile_summary(a, hit.hovered->first, hit.hovered->second).c_str());
  ImGui::EndChild();
}

// Under the two maps: both walk the config's one tile, so that they move in step; where no tile is
// given, say which tile V1's own kernel runs (reference_tile.hpp), as `flashlab compare` uses it.
void tile_note(const Config& c) {
  if (!uses_reference_tiles(c)) return;
  const ReferenceTile v1 = reference_tile(Algo::v1, c.d), v2 = reference_tile(Algo::v2, c.d);
  ImGui::TextDisabled("both on %s (%lld x %lld); %s runs %lld x %lld x %d (%s): flashlab compare puts each on its own",
                      v2.why.c_str(), static_cast<long long>(v2.b_r), static_cast<long long>(v2.b_c), v1.kernel.c_str(),
                      static_cast<long long>(v1.b_r), static_cast<long long>(v1.b_c), v1.warps, v1.why.c_str());
}

void ratio_table(const Comparison& c) {
  if (!c.v1().analysis || !c.v2().analysis) return;
  if (!ImGui::BeginTable("ratios", 4, ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp))
    return;
  ImGui::TableSetupColumn("whole run (all heads)");
  ImGui::TableSetupColumn("V1");
  ImGui::TableSetupColumn("V2");
  ImGui::TableSetupColumn("V1 / V2");
  ImGui::TableHeadersRow();
  const report::Figures &v1 = c.v1().analysis->figures(), &v2 = c.v2().analysis->figures();
  for (std::string_view key : compare_keys()) {
    const report::Metric& m = report::metric(key);
    const report::Value a = m.value(v1), b = m.value(v2);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(report::label_of(m, v2.problem).c_str());
    item_help(m.help.c_str());
    for (const report::Value& v : {a, b}) {
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(report::human(m, v).c_str());
    }
    ImGui::TableNextColumn();
    const std::string r = a.none() || b.none() ? "-" : report::ratio(a.as_double(), b.as_double());
    ImGui::TextUnformatted(r.c_str());
  }
  ImGui::EndTable();
}

// "  (V1: the walk's start)" on V1's bar; "  (2.22x faster than V1)" or "  (1.07x slower than V1)" on the
// others (issue 24: V1's bar read "1.00x faster than V1").
std::string speed_note(double t0, double t, bool first) {
  if (first) return "  (V1: the walk's start)";
  if (t0 <= 0 || t <= 0) return "";
  return t <= t0 ? "  (" + report::ratio(t0, t) + " faster than V1)" : "  (" + report::ratio(t, t0) + " slower than V1)";
}

// One bar per step of the walk from V1 to V2, its length the predicted time over V1's; the tooltip
// says what the step costs (bound, bytes per level, grid, waves).
void walk_bars(const std::vector<WalkBar>& bars) {
  double t0 = 0, longest = 0;
  for (const WalkBar& b : bars)
    if (b.figures) {
      if (t0 == 0) t0 = b.figures->time.time_s;
      longest = std::max(longest, b.figures->time.time_s);
    }
  if (longest <= 0) ImGui::TextDisabled("no step of the walk runs this config (hover a step for why)");
  float label_w = 0;
  for (const WalkBar& b : bars) label_w = std::max(label_w, ImGui::CalcTextSize(b.step.what.c_str()).x);
  for (const WalkBar& b : bars) {
    ImGui::TextUnformatted(b.step.what.c_str());
    ImGui::SameLine(label_w + ImGui::GetStyle().ItemSpacing.x * 2);
    if (!b.figures) {
      ImGui::TextDisabled("not run (hover for why)");
      item_help(b.why.c_str());
      continue;
    }
    const report::Figures& f = *b.figures;
    const double t = f.time.time_s;
    const std::string overlay = report::human(report::metric("predicted_seconds"), report::value_of("predicted_seconds", f)) +
                                speed_note(t0, t, &b == &bars.front());
    // the two ends in the algorithms' colours (V1 first, V2 last), the variants between in the theme's
    const bool end = &b == &bars.front() || &b == &bars.back();
    if (end) ImGui::PushStyleColor(ImGuiCol_PlotHistogram, palette::algo_colour(&b == &bars.front() ? Algo::v1 : Algo::v2));
    ImGui::ProgressBar(longest > 0 ? float(t / longest) : 0.0f, {-1, 0}, overlay.c_str());
    if (end) ImGui::PopStyleColor();
    if (ImGui::IsItemHovered()) {
      std::string tip = "bound: " + std::string(to_string(f.time.bound));
      for (const char* key : {"predicted_tflops", "hbm_total_bytes", "dram_total_bytes", "grid_blocks", "waves", "ops_all",
                              "warp_smem_bytes", "warp_barriers"}) {
        const report::Metric& m = report::metric(key);
        tip += '\n';  // appended piece by piece: GCC 12 warns falsely (-Wrestrict) on "\n" + std::string
        tip += report::label_of(m, f.problem) + ": " + report::human(m, m.value(f));
      }
      ImGui::SetTooltip("%s", tip.c_str());
    }
  }
  ImGui::TextDisabled("time model (docs/model.md \"Time model\"); the same walk as flashlab explain");
}

}  // namespace

void ComparePanel::draw(const Session& s, Playback& clock, TextureSink& sink) {
  sync(s);
  draw_transport(clock);
  comparison.seek(clock.position());
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float w = avail.x / 2 - 4;
  const ImVec2 side{w, std::clamp(w + 40, 160.0f, std::max(160.0f, avail.y - 230))};
  side_view("##v1", "V1 (FA1 Alg. 1): K/V blocks j outside", comparison.v1(), s.generation(), textures[0],
            sink, side);
  ImGui::SameLine();
  side_view("##v2", "V2 (FA2 Alg. 1): Q blocks i outside", comparison.v2(), s.generation(), textures[1],
            sink, side);
  tile_note(s.valid_config());
  ratio_table(comparison);
  walk.poll();
  ImGui::Separator();
  ImGui::TextUnformatted("Why V2 is faster: predicted time from V1 to V2, one change at a time");
  item_help("Each bar is a schedule of the simulator: V1 with the changes above it turned on (FA2 §3.1 delayed "
            "rescaling, §3.2 the Q outer loop and one thread block per Q block, §3.3 split-Q warps, §3.1.1 block "
            "skip), timed by the time model at the GPU preset's ceilings.");
  if (const std::vector<WalkBar>* bars = walk.result())
    walk_bars(*bars);
  else
    ImGui::TextDisabled("timing each step with the simulator...");
}

void ComparePanel::sync(const Session& s) {
  if (generation_ == s.generation()) return;
  generation_ = s.generation();
  comparison.reset(s.valid_config());
  const Config c = s.valid_config();
  walk.start([c] { return time_walk(c); });
}

}  // namespace flashlab::viz
