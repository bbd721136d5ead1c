// block_map_panel.cpp — the T_r x T_c block-skip map: tiles coloured full / partial / skipped, or
// a heat map of one per-tile metric; axes in tokens; hover shows a tile's statistics, a click
// selects it; during playback the tiles resident in SRAM are outlined.
#include <string>

#include <imgui.h>

#include "flashlab/report/format.hpp"
#include "model/palette.hpp"
#include "panels/help.hpp"
#include "panels/panels.hpp"

namespace flashlab::viz {
namespace {

void swatch(std::uint32_t colour, const std::string& label, const char* help) {
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float h = ImGui::GetTextLineHeight();
  ImGui::GetWindowDrawList()->AddRectFilled(p, {p.x + h, p.y + h}, colour);
  ImGui::Dummy({h, h});
  ImGui::SameLine();
  ImGui::TextUnformatted(label.c_str());
  item_help(help);
  ImGui::SameLine(0, 14);
}

void class_legend(const TileAnalysis& a) {
  const Counters& k = a.totals();
  const auto bh = std::uint64_t(a.problem().bh());
  const std::uint64_t visited = k.tiles.visited / bh, full = k.tiles.full / bh, partial = k.tiles.partial / bh,
                      skipped = k.tiles.skipped / bh;
  // tiles of the skipped class that the schedule computes anyway (block skip off, or standard)
  const std::uint64_t computed_skipped = visited - full - partial;
  swatch(palette::full, "full " + report::group_digits(full), "Full tile: every element (r, c) is visible, no masking needed inside it.");
  swatch(palette::partial, "partial " + report::group_digits(partial),
         "Partial tile: some elements are masked; the tile is computed and the mask applied element by element.");
  swatch(palette::skipped, "skipped " + report::group_digits(skipped - computed_skipped),
         "Skipped tile: no element is visible and the schedule does not visit it (block skip).");
  if (computed_skipped > 0)
    swatch(palette::computed_skipped, "computed anyway " + report::group_digits(computed_skipped),
           "A tile with no visible element that the schedule still computes: block skip off (V1's dense "
           "kernel) or standard attention, which computes all of S.");
  ImGui::NewLine();
}

void heat_legend(const TileAnalysis& a, Metric m) {
  const auto [lo, hi] = a.metric_range(m);
  const bool bytes = m == Metric::hbm_bytes;
  auto label = [&](double v) { return bytes ? report::human_bytes(v) : report::group_digits(std::uint64_t(v)); };
  const std::string l = label(lo), h = label(hi);
  ImGui::TextUnformatted(l.c_str());
  ImGui::SameLine();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float w = 160, hh = ImGui::GetTextLineHeight();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  for (int k = 0; k < 16; ++k)
    dl->AddRectFilledMultiColor({p.x + w * float(k) / 16, p.y}, {p.x + w * float(k + 1) / 16, p.y + hh},
                                palette::heat(k / 16.0), palette::heat((k + 1) / 16.0),
                                palette::heat((k + 1) / 16.0), palette::heat(k / 16.0));
  ImGui::Dummy({w, hh});
  item_help(describe(m).data());
  ImGui::SameLine();
  ImGui::TextUnformatted(h.c_str());
  ImGui::SameLine(0, 14);
  swatch(palette::skipped, "not computed", "Tiles the schedule does not compute have no value.");
  ImGui::NewLine();
}

}  // namespace

void BlockMapPanel::draw(const Session& s, TextureSink& sink, const Track* track) {
  const TileAnalysis& a = s.analysis();
  const Tiling& t = a.tiling();
  if (selected.i >= t.t_r() || selected.j >= t.t_c()) selected = {};

  int m = int(mode);
  ImGui::RadioButton("classes", &m, 0);
  item_help("Colour each tile (i, j) by its class: full (all visible), partial (some) or skipped (none visible).");
  ImGui::SameLine();
  ImGui::RadioButton("heat map", &m, 1);
  item_help("Colour each tile by a per-tile metric of the schedule (one (batch, head)).");
  mode = MapMode(m);
  if (mode == MapMode::heat) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(140);
    if (ImGui::BeginCombo("metric", to_string(metric).data())) {
      for (int k = 0; k < kMetricCount; ++k)
        if (ImGui::Selectable(to_string(Metric(k)).data(), metric == Metric(k))) metric = Metric(k);
      ImGui::EndCombo();
    }
    item_help(describe(metric).data());
  }
  ImGui::TextDisabled("T_r x T_c = %s x %s tiles of B_r x B_c = %lld x %lld tokens", report::group_digits(std::uint64_t(t.t_r())).c_str(),
                      report::group_digits(std::uint64_t(t.t_c())).c_str(), static_cast<long long>(t.b_r),
                      static_cast<long long>(t.b_c));
  if (mode == MapMode::heat && !a.has_tile_stats()) {
    ImGui::TextDisabled("heat map: at most %s tiles; showing classes", report::group_digits(std::uint64_t(kTileStatsLimit)).c_str());
  }
  if (mode == MapMode::heat && a.has_tile_stats()) heat_legend(a, metric);
  else class_legend(a);
  if (const Problem& sp = a.problem(); sp.splits > 1) {
    swatch(palette::split, "split-KV: " + std::to_string(sp.splits) + " splits of " +
                               std::to_string(split_range(sp, 0).end) + " K/V blocks",
           "Each outlined column range is one split: a thread block per (Q block, split) walks its K/V blocks and "
           "writes a partial O and L in fp32; a second launch, flash_combine, merges them by their log-sum-exp "
           "(docs/model.md \"Split-KV\").");
    ImGui::NewLine();
  }

  const GridAxes ax{t.t_r(), t.t_c(), t.b_r, t.b_c, 0, 0, t.n_q, t.n_k};
  layout = grid_layout(ax, ImGui::GetCursorScreenPos(), ImGui::GetContentRegionAvail());
  const int w = layout.pixel_width(), h = layout.pixel_height();
  const TextureSlot::Key key{std::int64_t(s.generation()), std::int64_t(mode), std::int64_t(metric), w, h};
  const ImTextureID tex = texture.get(sink, key, [&] { return map_image(a, mode, metric, w, h); });
  const GridHit hit = draw_grid("##block-map", layout, ax, tex);
  // split-KV: each split's K/V blocks outlined (a thread block per (Q block, split) walks one)
  const Problem& p = a.problem();
  if (p.splits > 1)
    for (std::int64_t sp = 0; sp < p.splits; ++sp)
      if (const SplitRange r = split_range(p, sp); !r.empty())
        outline_cells(layout, 0, t.t_r() - 1, r.first, r.end - 1, palette::split, 2.0f);

  if (const StepView* step = track ? track->last() : nullptr; step) {
    const Resident r = track->executor().resident();
    if (r.q_block >= 0) outline_cells(layout, r.q_block, r.q_block, 0, t.t_c() - 1, palette::resident, 1.5f);
    if (r.kv_block >= 0) outline_cells(layout, 0, t.t_r() - 1, r.kv_block, r.kv_block, palette::resident, 1.5f);
    if (step->i >= 0 && step->j >= 0) outline_cells(layout, step->i, step->i, step->j, step->j, palette::resident, 3.0f);
  }
  if (selected.valid()) outline_cells(layout, selected.i, selected.i, selected.j, selected.j, palette::selected, 2.5f);

  hovered = hit.hovered ? TileRef{hit.hovered->first, hit.hovered->second} : TileRef{};
  tooltip.clear();
  if (hovered.valid()) {
    std::string& tip = tooltip;
    tip = tile_summary(a, hovered.i, hovered.j);
    if (mode == MapMode::heat && a.has_tile_stats()) {
      const double v = a.metric(metric, hovered.i, hovered.j);
      tip.append("\n").append(to_string(metric)).append(": ").append(v == v ? report::group_digits(std::uint64_t(v)) : "-");
    }
    tip += "\n(click to select)";
    ImGui::SetTooltip("%s", tip.c_str());
    if (hit.clicked) selected = hovered;
  }
}

}  // namespace flashlab::viz
