// compare_panel.cpp — V1 (FA1 Alg. 1) and V2 (FA2 Alg. 1) side by side on the same config, moved
// in step by one playback clock, with their totals and the ratio V1 / V2 of each.
#include <algorithm>
#include <string>

#include <imgui.h>

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
  ImGui::TextDisabled("block skip %s, %s", p.block_skip ? "on" : "off", to_string(p.split).data());
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
  ratio_table(comparison);
}

void ComparePanel::sync(const Session& s) {
  if (generation_ == s.generation()) return;
  generation_ = s.generation();
  comparison.reset(s.valid_config());
}

}  // namespace flashlab::viz
