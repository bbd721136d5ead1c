// viewer.cpp — see viewer.hpp.
#include "panels/viewer.hpp"

#include <algorithm>

#include "panels/help.hpp"

namespace flashlab::viz {
namespace {

constexpr float kConfigWidth = 330;
constexpr ImGuiWindowFlags kFixed = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize |
                                    ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings;

bool begin_fixed(const char* title, ImVec2 pos, ImVec2 size) {
  ImGui::SetNextWindowPos(pos, ImGuiCond_Always);
  ImGui::SetNextWindowSize(size, ImGuiCond_Always);
  return ImGui::Begin(title, nullptr, kFixed);
}

}  // namespace

Viewer::Viewer(const Config& c, TextureSink& sink) : session(c), sink_(sink) {}

std::uint64_t Viewer::sync_playback() {
  playback.sync(session);
  if (tab_ != Tab::compare) return playback.track()->total_steps();
  compare.sync(session);
  return compare.comparison.total_steps();
}

void Viewer::seek(std::uint64_t k) {
  const std::uint64_t total = sync_playback();
  playback.clock.set_total(total);
  playback.clock.seek(k);
  playback.advance(0, total);
}

void Viewer::frame(ImVec2 size, double dt) {
  playback.advance(dt, sync_playback());

  const float rest = std::max(200.0f, size.x - kConfigWidth);
  // the timeline's two panes want width: the map gives it up on that tab
  const float map_w = std::floor(rest * (tab_ == Tab::timeline ? 0.3f : 0.5f));
  if (begin_fixed("Configuration", {0, 0}, {kConfigWidth, size.y})) config.draw(session);
  ImGui::End();
  if (begin_fixed("Block-skip map", {kConfigWidth, 0}, {map_w, size.y}))
    map.draw(session, sink_, playback.clock.position() > 0 ? playback.track() : nullptr);
  ImGui::End();
  if (begin_fixed("Inspector", {kConfigWidth + map_w, 0}, {size.x - kConfigWidth - map_w, size.y})) inspector();
  ImGui::End();
}

void Viewer::inspector() {
  if (!ImGui::BeginTabBar("inspector")) return;
  struct Item {
    Tab tab;
    const char* label;
    const char* help;
  };
  static constexpr Item items[] = {
      {Tab::tile, "Selected tile", "The clicked tile (i, j): its elements, warps and costs."},
      {Tab::playback, "Playback", "Step through the schedule: SRAM residency and HBM traffic as they happen."},
      {Tab::compare, "V1 vs V2", "FA1 Algorithm 1 and FA2 Algorithm 1 on the same config, in step."},
      {Tab::sweep, "HBM vs block size", "HBM traffic of this config as the block size or SRAM size changes."},
      {Tab::traces, "Traces", "Open a trace file (simulator or GPU) and play it; open two and see where they diverge."},
      {Tab::timeline, "Timeline", "One SM's timeline, V3 over V2: each agent's and unit's intervals, the K/V ring, the waits by cause."},
  };
  for (const Item& it : items) {
    const ImGuiTabItemFlags flags = select_tab_ && it.tab == tab_ ? ImGuiTabItemFlags_SetSelected : 0;
    const bool open = ImGui::BeginTabItem(it.label, nullptr, flags);
    item_help(it.help);
    if (!open) continue;
    if (!select_tab_) tab_ = it.tab;
    else if (it.tab == tab_) select_tab_ = false;  // the requested tab is open
    switch (it.tab) {
      case Tab::tile: tile.draw(session, map.selected, sink_); break;
      case Tab::playback: playback.draw(session); break;
      case Tab::compare: compare.draw(session, playback.clock, sink_); break;
      case Tab::sweep: sweep.draw(session); break;
      case Tab::traces: traces.draw(session, sink_); break;
      case Tab::timeline: timeline.draw(session, map.selected, playback.clock.position() > 0 ? playback.track() : nullptr); break;
    }
    ImGui::EndTabItem();
  }
  ImGui::EndTabBar();
}

}  // namespace flashlab::viz
