// timeline_panel.cpp — one SM's timeline (flashlab/time/timeline.hpp) of V3 over that of the
// config's algorithm (V2 by default), one under the other on one time axis: a lane per agent (V3:
// producer, consumer warpgroups; V1/V2: the thread blocks sharing the SM) and per unit, the K/V
// stage ring's occupancy, waits (bubbles) coloured by cause, hover tooltips, zoom (mouse wheel) and
// pan (drag). The playback's current tile and the block map's selected tile are outlined; a click
// on an interval selects its tile in the block map. Layout: model/timeline_layout.hpp.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>

#include <imgui.h>

#include "flashlab/report/format.hpp"
#include "model/palette.hpp"
#include "panels/help.hpp"
#include "panels/panels.hpp"

namespace flashlab::viz {
namespace {

constexpr float kLabelWidth = 112, kRowHeight = 15, kAxisHeight = 16;

const char* algo_title(Algo a) {
  switch (a) {
    case Algo::v3: return "V3 (FA3, Hopper: warp roles)";
    case Algo::v2: return "V2 (FA2 Alg. 1)";
    case Algo::v1: return "V1 (FA1 Alg. 1)";
    case Algo::standard: return "standard attention";
  }
  return "?";
}

std::string percent(double f) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.0f%%", f * 100);
  return buf;
}

// A unit lane's label: its name and busy share; its tooltip: the idle time by cause.
std::string unit_tip(const Timeline& t, std::int32_t lane, std::string* label) {
  for (const UnitUse& u : t.units)
    if (u.lane == lane) {
      label->append(" ").append(percent(u.busy));  // piece by piece: GCC 12's false -Wrestrict
      std::string tip = *label + ": busy " + percent(u.busy) + " of the SM's " + report::seconds(t.time_s);
      for (const IdleCause& c : u.idle) tip += "\nidle " + percent(c.fraction) + ": " + c.cause;
      return tip;
    }
  return "";
}

void swatch(std::uint32_t colour, const std::string& label, const char* help, bool thin) {
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float h = ImGui::GetTextLineHeight();
  const float inset = thin ? h / 4 : 0;
  ImGui::GetWindowDrawList()->AddRectFilled({p.x, p.y + inset}, {p.x + h, p.y + h - inset}, colour);
  ImGui::Dummy({h, h});
  ImGui::SameLine(0, 3);
  ImGui::TextUnformatted(label.c_str());
  item_help(help);
}

std::string phase_help(Phase ph) {
  if (const std::string c = wait_cause(ph); !c.empty()) return "A bubble of its agent's stream: " + c + ".";
  switch (ph) {
    case Phase::gemm0: return "GEMM0: S = Q_i K_j^T on the tensor cores (wgmma).";
    case Phase::softmax: return "The online softmax of the tile: row max m, ex2 on the SFU, row sum l, P.";
    case Phase::gemm1: return "GEMM1: O_i += P V_j on the tensor cores (P from registers with V3).";
    case Phase::load_q: return "Q_i's load into SRAM (V3: TMA, issued by the producer warp).";
    case Phase::load_k: return "K_j's load into a stage of the ring (TMA).";
    case Phase::load_v: return "V_j's load into a stage of the ring (TMA).";
    case Phase::store_o: return "O_i's (and L_i's) store to HBM.";
    case Phase::step: return "One step of a V1/V2 thread block, at the time model's duration (its units overlapped inside).";
    default: return "";
  }
}

// The legend: every phase of either timeline, the ring's fill.
void legend(const TimelinePair& pair) {
  bool seen[kPhaseCount] = {};
  bool ring = false;
  for (const TimelineSide& s : pair.sides)
    if (s.timeline) {
      for (Phase ph : phases_present(*s.timeline)) seen[int(ph)] = true;
      ring = ring || s.timeline->stages > 0;
    }
  float used = 0;
  const float avail = ImGui::GetContentRegionAvail().x;
  for (int k = 0; k < kPhaseCount; ++k) {
    if (!seen[k]) continue;
    const std::string label(to_string(Phase(k)));
    const float w = ImGui::GetTextLineHeight() + 3 + ImGui::CalcTextSize(label.c_str()).x + 12;
    if (used > 0 && used + w < avail) ImGui::SameLine(0, 12);
    else used = 0;
    used += w;
    swatch(palette::phase_colour(Phase(k)), label, phase_help(Phase(k)).c_str(), palette::is_wait(Phase(k)));
  }
  if (ring) {
    if (used > 0) ImGui::SameLine(0, 12);
    swatch(palette::ring_full, "ring stages full", "The K/V stage ring: the bar's height is the stages holding a K_j or V_j the consumers have not released (from the load's issue to the empty arrive).", false);
  }
}

// Ticks along the bottom of a pane, in us.
void time_axis(ImDrawList* dl, const TimeView& v, float y) {
  const ImU32 grid = ImGui::GetColorU32(ImGuiCol_Border), text = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  for (double t : time_ticks(v, 70)) {
    const float x = float(v.x_of(t));
    dl->AddLine({x, y}, {x, y + 4}, grid);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g us", std::round(t * 1e9) / 1e3);
    dl->AddText({x - ImGui::CalcTextSize(buf).x / 2, y + 3}, text, buf);
  }
}

// The pane's lane labels (with each unit's busy share) over alternating bands. Returns each row's
// tooltip (a unit's idle time by cause; the ring's meaning).
std::vector<std::string> draw_labels(ImDrawList* dl, const Timeline& t, const TimelineLayout& lay, const TimeView& view,
                                     ImVec2 o) {
  const ImU32 band = ImGui::GetColorU32(ImGuiCol_FrameBg), text = ImGui::GetColorU32(ImGuiCol_Text);
  const float right = view.x0 + view.width;
  std::vector<std::string> tips(lay.rows.size());
  for (std::size_t r = 0; r < lay.rows.size(); ++r) {
    const LaneRow& row = lay.rows[r];
    if (r % 2 == 0) dl->AddRectFilled({view.x0, row.y0}, {right, row.y1}, band);
    // the issue lane holds the FP32 pipe's time as well (time_model.hpp HwUnit): say so
    std::string label = row.lane >= 0 && t.lanes[std::size_t(row.lane)].kind == LaneKind::unit &&
                                t.lanes[std::size_t(row.lane)].unit == HwUnit::issue
                            ? "fp32/issue"
                            : row.label;
    if (row.lane >= 0 && t.lanes[std::size_t(row.lane)].kind == LaneKind::unit) tips[r] = unit_tip(t, row.lane, &label);
    else if (row.lane < 0) tips[r] = "The K/V stage ring (" + std::to_string(t.stages) + " stages): stages holding data over time.";
    dl->AddText({o.x, row.y0}, text, label.c_str());
  }
  return tips;
}

// The pane's intervals, the note on unit lanes that have none, the ring's fill.
void draw_intervals(ImDrawList* dl, const Timeline& t, const TimelineLayout& lay, const TimeView& view) {
  // each rectangle 4 pixels wide or more edged in a darker line, so that back-to-back steps stay apart
  for (const IntervalRect& r : lay.rects) {
    dl->AddRectFilled({r.x0, r.y0}, {std::max(r.x1, r.x0 + 1), r.y1}, r.colour);
    if (r.x1 - r.x0 >= 4) dl->AddRect({r.x0, r.y0}, {r.x1, r.y1}, IM_COL32(0, 0, 0, 110));
  }
  // a unit lane without intervals (V1/V2: a step overlaps its units inside; only their shares are known)
  std::vector<bool> drawn(t.lanes.size(), false);
  for (const TimelineInterval& iv : t.intervals)
    if (iv.lane >= 0 && std::size_t(iv.lane) < drawn.size()) drawn[std::size_t(iv.lane)] = true;
  for (const LaneRow& row : lay.rows)
    if (row.lane >= 0 && !drawn[std::size_t(row.lane)] && t.lanes[std::size_t(row.lane)].kind == LaneKind::unit)
      dl->AddText({view.x0 + 4, row.y0}, ImGui::GetColorU32(ImGuiCol_TextDisabled),
                  "inside each step (busy share on the left)");
  for (const RingBar& b : lay.ring) dl->AddRectFilled({b.x0, b.y0}, {std::max(b.x1, b.x0 + 1), b.y1}, palette::ring_full);
}

// Outlines the intervals that work on the tokens of the playback's current tile (white) or of the block
// map's selected tile (green): the map's tiles and this side's meet by token ranges (V3's are FA3's).
void outline_tiles(ImDrawList* dl, const TimelineSide& side, const TimelineLayout& lay, const Tiling& map,
                   const TileRef& selected, const Track* track) {
  const Timeline& t = *side.timeline;
  const StepView* step = track ? track->last() : nullptr;
  const bool at_tile = step && step->i >= 0;
  const TokenBox now = at_tile ? tile_tokens(step->i, step->j, map.b_r, map.b_c) : TokenBox{};
  const TokenBox sel = selected.valid() ? tile_tokens(selected.i, selected.j, map.b_r, map.b_c) : TokenBox{};
  for (const IntervalRect& r : lay.rects) {
    const TimelineInterval& iv = t.intervals[r.interval];
    if (!side.q_blocks || iv.i < 0 || iv.bh > 0) continue;  // the playback walks (batch, head) 0
    const TokenBox box = tile_tokens(iv.i, iv.j, side.b_r, side.b_c);
    if (at_tile && overlap(box, now)) dl->AddRect({r.x0 - 1, r.y0 - 1}, {r.x1 + 1, r.y1 + 1}, palette::timeline_cursor, 0, 0, 2);
    else if (selected.valid() && overlap(box, sel)) dl->AddRect({r.x0 - 1, r.y0 - 1}, {r.x1 + 1, r.y1 + 1}, palette::selected, 0, 0, 2);
  }
}

// The hovered interval's tooltip; a click selects the block map's tile that holds the interval's
// tile's first token.
void interval_tooltip(const TimelineSide& side, const TimelineLayout& lay, std::size_t hit, const Tiling& map,
                      TileRef& selected, std::string& tooltip) {
  const Timeline& t = *side.timeline;
  const IntervalRect& r = lay.rects[hit];
  const TimelineInterval& iv = t.intervals[r.interval];
  tooltip = interval_summary(t, r.interval, r.merged);
  std::optional<TileRef> pick;
  if (side.q_blocks && iv.i >= 0 && iv.j >= 0) {
    const TokenBox box = tile_tokens(iv.i, iv.j, side.b_r, side.b_c);
    const TileRef m{box.q0 / map.b_r, box.k0 / map.b_c};
    if (m.i < map.t_r() && m.j < map.t_c()) pick = m;
  }
  if (pick)
    tooltip.append("\n(click: select tile (").append(std::to_string(pick->i)).append(", ").append(std::to_string(pick->j))
        .append(") of the block map, which holds its first token)");
  ImGui::SetTooltip("%s", tooltip.c_str());
  if (pick && ImGui::IsItemClicked(ImGuiMouseButton_Left)) selected = *pick;
}

// The chain of intervals that ends last, by kind of work or wait, under the pane.
void critical_path_line(const Timeline& t) {
  if (t.critical_path.empty()) return;
  std::string path = "critical path:";
  for (const CriticalPart& c : t.critical_path)
    if (c.fraction >= 0.01) path += " " + c.what + " " + percent(c.fraction) + ",";
  path.pop_back();
  ImGui::PushTextWrapPos(0);
  ImGui::TextDisabled("%s", path.c_str());
  ImGui::PopTextWrapPos();
  item_help("The chain of intervals that ends last, walked back through what each waited for, by kind of work or wait.");
}

}  // namespace

void TimelinePanel::sync(const Session& s) {
  if (generation_ == s.generation() && job_sm_ == sm) return;
  generation_ = s.generation();
  job_sm_ = sm;
  const Config c = s.valid_config();
  const std::int64_t chosen = sm;
  job.start([c, chosen] { return compute_timelines(c, chosen); });
  fitted_ = false;
}

bool TimelinePanel::pane(const TimelineSide& side, const Session& s, TileRef& selected, const Track* track, int index) {
  ImGui::TextUnformatted(algo_title(side.algo));
  if (!side.timeline) {
    layouts[index] = {};
    ImGui::SameLine();
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.45f, 0.4f, 1.0f));
    ImGui::TextWrapped("not laid out: %s", side.error.c_str());
    ImGui::PopStyleColor();
    return false;
  }
  const Timeline& t = *side.timeline;
  ImGui::SameLine();
  ImGui::TextDisabled("SM %lld, tiles: %lld of %lld x %lld, %s (time model: %s)%s", static_cast<long long>(t.sm),
                      static_cast<long long>(t.tiles), static_cast<long long>(side.b_r), static_cast<long long>(side.b_c),
                      report::seconds(t.time_s).c_str(), report::seconds(t.analytic_s).c_str(), t.truncated ? ", truncated" : "");
  item_help(("The SM's last interval ends at the first time; the second is the same SM's time by the time model's "
             "per-step rule (predict_time), for comparison." + (t.note.empty() ? std::string() : "\n" + t.note)).c_str());

  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  layouts[index] = layout_timeline(t, view, o.y, kRowHeight);
  const TimelineLayout& lay = layouts[index];
  const float right = view.x0 + view.width;
  const std::vector<std::string> tips = draw_labels(dl, t, lay, view, o);
  dl->PushClipRect({view.x0, o.y}, {right, o.y + lay.height}, true);
  draw_intervals(dl, t, lay, view);
  outline_tiles(dl, side, lay, s.problem().tiling, selected, track);
  dl->PopClipRect();
  time_axis(dl, view, o.y + lay.height);

  // one item over the pane: hover (tooltips), wheel (zoom), drag (pan), click (select the tile)
  ImGui::PushID(index);
  ImGui::InvisibleButton("##timeline", {std::max(1.0f, right - o.x), lay.height + kAxisHeight});
  ImGui::PopID();
  const ImVec2 m = ImGui::GetIO().MousePos;
  if (ImGui::IsItemHovered()) {
    if (const float wheel = ImGui::GetIO().MouseWheel; wheel != 0 && m.x >= view.x0) view.zoom(std::pow(1.25, double(wheel)), m.x);
    if (m.x < view.x0) {  // the labels: a unit's busy and idle time
      for (std::size_t r = 0; r < lay.rows.size(); ++r)
        if (m.y >= lay.rows[r].y0 && m.y < lay.rows[r].y1 && !tips[r].empty()) {
          tooltip = tips[r];
          ImGui::SetTooltip("%s", tooltip.c_str());
        }
    } else if (const auto hit = rect_at(lay, m.x, m.y)) {
      interval_tooltip(side, lay, *hit, s.problem().tiling, selected, tooltip);
    }
  }
  if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 2)) view.pan(-double(ImGui::GetIO().MouseDelta.x));
  critical_path_line(t);
  return true;
}

void TimelinePanel::draw(const Session& s, TileRef& selected, const Track* track) {
  const int last_sm = int(s.problem().gpu.sms) - 1;
  sm = std::clamp(sm, -1, last_sm);
  sync(s);
  job.poll();
  ImGui::SetNextItemWidth(90);
  ImGui::InputInt("SM", &sm);
  sm = std::clamp(sm, -1, last_sm);
  item_help("Which SM to lay out, 0 to SMs - 1; -1: each algorithm's busiest (the SM whose last interval ends latest).");
  ImGui::SameLine();
  if (ImGui::Button("whole run")) fitted_ = false;
  item_help("Show the whole time range again. Mouse wheel over a timeline: zoom about the mouse; drag: pan.");
  ImGui::SameLine();
  ImGui::TextDisabled("wheel: zoom, drag: pan");
  const TimelinePair* pair = job.result();
  if (!pair) {
    ImGui::TextDisabled("laying out the SM's timelines with the simulator...");
    return;
  }
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float width = std::max(40.0f, ImGui::GetContentRegionAvail().x - kLabelWidth - 4);
  if (!fitted_) {
    view = TimeView::whole(pair->end_s(), o.x + kLabelWidth, width);
    fitted_ = true;
  }
  view.x0 = o.x + kLabelWidth;  // the window may have moved or resized: same times, new pixels
  view.width = width;
  view.end_s = pair->end_s() > 0 ? pair->end_s() : view.end_s;
  for (int k = 0; k < 2; ++k) {
    const TimelineSide& side = pair->sides[std::size_t(k)];
    pane(side, s, selected, track, k);
    ImGui::Spacing();
  }
  legend(*pair);
}

}  // namespace flashlab::viz
