// tile_panel.cpp — the selected tile (i, j): its element-level mask (rows(i) x cols(j)), which
// warp owns each row (split-Q) or column (split-K), its non-matmul ops by kind, its HBM bytes by
// tensor and the work of each warp.
#include <algorithm>
#include <cstdio>
#include <string>

#include <imgui.h>

#include "flashlab/warps/warps.hpp"
#include "flashlab/report/format.hpp"
#include "flashlab/report/metrics.hpp"
#include "model/palette.hpp"
#include "panels/help.hpp"
#include "panels/panels.hpp"

namespace flashlab::viz {
namespace {

void warp_legend(const Problem& p, std::int64_t i, std::int64_t j) {
  const bool by_rows = p.split == WarpSplit::split_q;
  const std::int64_t block = by_rows ? p.tiling.b_r : p.tiling.b_c;
  const std::int64_t n = by_rows ? p.tiling.rows(i) : p.tiling.cols(j);
  ImGui::TextUnformatted(by_rows ? "split-Q: warp w owns rows" : "split-K: warp w owns columns");
  help_marker(by_rows ? "split-Q (FA2 §3.3): warp w owns rows [w B_r / W, (w+1) B_r / W) of Q_i, so it "
                        "computes its own rows of S, P and O and no warp waits for another's partial sums."
                      : "split-K (V1): warp w owns columns [w B_c / W, (w+1) B_c / W) of S_ij; the row max, "
                        "row sum and P V need reductions across warps through shared memory.");
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  for (int w = 0; w < p.warps; ++w) {
    const WarpSlice s = warp_slice(w, p.warps, block, n);
    char label[64];
    if (s.count == 0) std::snprintf(label, sizeof label, "warp %d: idle", w);
    else std::snprintf(label, sizeof label, "warp %d: [%lld, %lld)", w, static_cast<long long>(s.first),
                       static_cast<long long>(s.first + s.count));
    const float h = ImGui::GetTextLineHeight();
    if (w > 0) {  // next to the previous warp when it fits
      ImGui::SameLine(0, 12);
      if (ImGui::GetCursorScreenPos().x + h + 8 + ImGui::CalcTextSize(label).x > right) ImGui::NewLine();
    }
    const ImVec2 q = ImGui::GetCursorScreenPos();
    ImGui::GetWindowDrawList()->AddRectFilled(q, {q.x + h, q.y + h}, palette::warp_colour(w));
    ImGui::Dummy({h, h});
    ImGui::SameLine();
    ImGui::TextUnformatted(label);
  }
}

// One row of a table: a catalogue metric's label (its help on hover) and its exact value on the
// tile, digits grouped (the column header names the unit).
void metric_cells(const report::Figures& tile, const std::string& key) {
  const report::Metric& m = report::metric(key);
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(report::label_of(m, tile.problem).c_str());
  item_help(m.help.c_str());
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(report::group_digits(m.value(tile).integer).c_str());
}

void ops_table(const report::Figures& tile) {
  if (!ImGui::BeginTable("ops", 2, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit, {190, 0})) return;
  ImGui::TableSetupColumn("op (one head)");
  ImGui::TableSetupColumn("count");
  ImGui::TableHeadersRow();
  metric_cells(tile, "flops_matmul");
  for (int k = 0; k < kOpKindCount; ++k) metric_cells(tile, "ops_" + std::string(to_string(OpKind(k))));
  ImGui::EndTable();
}

void bytes_table(const report::Figures& tile) {
  if (!ImGui::BeginTable("bytes", 2, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) return;
  ImGui::TableSetupColumn("HBM (one head)");
  ImGui::TableSetupColumn("bytes");
  ImGui::TableHeadersRow();
  for (const char* dir : {"read_", "write_"})
    for (int t = 0; t < kTensorCount; ++t) {
      const std::string key = dir + std::string(to_string(Tensor(t)));
      if (report::value_of(key, tile).integer > 0) metric_cells(tile, key);
    }
  ImGui::EndTable();
}

void warp_table(const std::vector<WarpWork>& work) {
  if (work.empty() || !ImGui::BeginTable("warps", 6, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) return;
  for (const char* h : {"warp", "FLOPs", "exp", "smem write", "smem read", "barriers"}) ImGui::TableSetupColumn(h);
  ImGui::TableHeadersRow();
  for (std::size_t w = 0; w < work.size(); ++w) {
    ImGui::TableNextColumn();
    ImGui::Text("%zu", w);
    for (std::uint64_t v : {work[w].flops, work[w].op(OpKind::exp), work[w].smem_write, work[w].smem_read, work[w].barriers}) {
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(report::group_digits(v).c_str());
    }
  }
  ImGui::EndTable();
  item_help("Each warp's share of the tile's step (warps.hpp): shared-memory bytes are the fp32 partials "
            "that split-K exchanges for the row max, row sum and P V; barriers guard K_j, V_j and the reductions.");
}

}  // namespace

void TilePanel::draw(const Session& s, TileRef tile, TextureSink& sink) {
  const TileAnalysis& a = s.analysis();
  const Problem& p = a.problem();
  if (!tile.valid() || tile.i >= p.tiling.t_r() || tile.j >= p.tiling.t_c()) {
    ImGui::TextWrapped("Click a tile of the block-skip map to see its elements, its warps and its costs.");
    return;
  }
  ImGui::TextUnformatted(tile_summary(a, tile.i, tile.j).c_str());
  warp_legend(p, tile.i, tile.j);

  const std::int64_t rows = p.tiling.rows(tile.i), cols = p.tiling.cols(tile.j);
  const GridAxes ax{rows, cols, 1, 1, tile.i * p.tiling.b_r, tile.j * p.tiling.b_c, rows, cols, false};
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const GridLayout lay = grid_layout(ax, ImGui::GetCursorScreenPos(), {avail.x, std::min(avail.y, 240.0f)});
  const int w = lay.pixel_width(), h = lay.pixel_height();
  const TextureSlot::Key key{std::int64_t(s.generation()), tile.i, tile.j, w, h};
  const ImTextureID tex = texture.get(sink, key, [&] { return tile_mask_image(p, tile.i, tile.j, w, h); });
  const GridHit hit = draw_grid("##tile-mask", lay, ax, tex);
  if (hit.hovered) {
    const std::int64_t r = ax.row_origin + hit.hovered->first, c = ax.col_origin + hit.hovered->second;
    ImGui::SetTooltip("S[%lld, %lld]: %s (c - r = %lld)", static_cast<long long>(r), static_cast<long long>(c),
                      visible(p.band, r, c) ? "visible" : "masked", static_cast<long long>(c - r));
  }
  ImGui::SetCursorScreenPos({lay.min.x - kGridLeftMargin, lay.max.y + 6});
  ImGui::TextDisabled("rows(i) x cols(j) elements; dark = masked; colour = owning warp");

  // the tile's step as figures of one (batch, head), read through the metrics catalogue
  report::Figures one{p, {}, a.figures().warp_model, a.warp_work(tile.i, tile.j), false, {}};
  one.counters.cost = a.cost(tile.i, tile.j);
  ops_table(one);
  ImGui::SameLine();
  bytes_table(one);
  warp_table(one.warps);
  if (one.warp_model && !one.warps.empty()) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextDisabled("this tile: %s B of shared memory, %s barriers, %s extra ops (%s)",
                        report::group_digits(report::value_of("warp_smem_bytes", one).integer).c_str(),
                        report::group_digits(report::value_of("warp_barriers", one).integer).c_str(),
                        report::group_digits(report::value_of("warp_extra_ops", one).integer).c_str(),
                        to_string(p.split).data());
    ImGui::PopTextWrapPos();
  }
}

}  // namespace flashlab::viz
