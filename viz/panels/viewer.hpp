// viewer.hpp — the whole viewer: one Session and its panels, laid out as three windows (config on
// the left, the block-skip map in the middle, an inspector with tabs on the right).
#pragma once

#include <cstdint>

#include <imgui.h>

#include "panels/panels.hpp"

namespace flashlab::viz {

enum class Tab : std::uint8_t { tile = 0, playback, compare, sweep, traces, timeline };

class Viewer {
 public:
  /// Throws ConfigError when `c` is invalid.
  Viewer(const Config& c, TextureSink& sink);

  /// Draws every window for a display of `size` pixels, `dt` seconds after the previous frame.
  /// Call between ImGui::NewFrame() and ImGui::Render().
  void frame(ImVec2 size, double dt);

  /// Opens inspector tab `t` on the next frame.
  void show(Tab t) {
    tab_ = t;
    select_tab_ = true;
  }
  Tab tab() const { return tab_; }
  /// Moves the playback clock (and the tracks of the current tab) to step k now.
  void seek(std::uint64_t k);

  Session session;
  ConfigPanel config;
  BlockMapPanel map;
  TilePanel tile;
  PlaybackPanel playback;
  ComparePanel compare;
  SweepPanel sweep;
  TracePanel traces;
  TimelinePanel timeline;

 private:
  void inspector();
  /// Rebuilds what the config change invalidated; returns the steps of the playback in this tab.
  std::uint64_t sync_playback();
  TextureSink& sink_;
  Tab tab_ = Tab::tile;
  bool select_tab_ = true;
};

}  // namespace flashlab::viz
