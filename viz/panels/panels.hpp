// panels.hpp — the viewer's panels, one per file (panels/<name>_panel.cpp), each a small class
// that holds what it shows between frames and draws itself with Dear ImGui. They read the
// simulator through model/ and keep no counting logic of their own.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "flashlab/trace/diff.hpp"
#include "model/background.hpp"
#include "model/comparison.hpp"
#include "model/hbm_sweep.hpp"
#include "model/map_image.hpp"
#include "model/playback.hpp"
#include "model/session.hpp"
#include "model/stat_history.hpp"
#include "model/time_walk.hpp"
#include "model/timeline_layout.hpp"
#include "model/timeline_pair.hpp"
#include "model/trace_view.hpp"
#include "panels/grid_view.hpp"
#include "panels/texture.hpp"

namespace flashlab::viz {

struct TileRef {
  std::int64_t i = -1, j = -1;
  bool valid() const { return i >= 0 && j >= 0; }
  bool operator==(const TileRef&) const = default;
};

/// Every simulator option; each change is applied at once (config_panel.cpp).
class ConfigPanel {
 public:
  void draw(Session& s);
  std::string model;  // model preset last chosen ("" = custom)
};

/// The T_r x T_c block-skip map (block_map_panel.cpp).
class BlockMapPanel {
 public:
  /// Draws the map of s's analysis; outlines the tiles resident in SRAM after `track`'s last step.
  void draw(const Session& s, TextureSink& sink, const Track* track);
  MapMode mode = MapMode::classes;
  Metric metric = Metric::hbm_bytes;
  TileRef selected;    // clicked tile
  TileRef hovered;     // tile under the mouse in the last frame
  std::string tooltip; // the tooltip shown in the last frame ("" when none)
  GridLayout layout;   // where the last frame put the grid
  TextureSlot texture;
};

/// The selected tile: element mask, warp ownership, ops by kind, bytes by tensor (tile_panel.cpp).
class TilePanel {
 public:
  void draw(const Session& s, TileRef tile, TextureSink& sink);
  TextureSlot texture;
};

/// Step, play, pause, speed and scrub buttons for `clock` (playback_panel.cpp).
void draw_transport(Playback& clock);

/// Playback through the schedule of the current config (playback_panel.cpp).
class PlaybackPanel {
 public:
  /// Rebuilds the track when the session's config changed (and rewinds the clock).
  void sync(const Session& s);
  /// Sets the clock's length to `total` steps, advances it by dt seconds and moves the track there.
  void advance(double dt, std::uint64_t total);
  void draw(const Session& s);
  const Track* track() const { return track_.get(); }
  Playback clock;
  bool numerics = false;  // m and l of the current Q block (numerics_panel.cpp)
  /// Blocks until the numerics run has finished (screenshots, tests).
  void wait_numerics() { stats_.wait(); }

 private:
  void draw_numerics(const Session& s);
  std::unique_ptr<Track> track_;
  std::uint64_t generation_ = ~std::uint64_t(0);
  Background<StatResult> stats_;
  std::uint64_t stats_generation_ = ~std::uint64_t(0);
};

/// V1 and V2 on the same config, in step, with totals and ratios (compare_panel.cpp).
class ComparePanel {
 public:
  void draw(const Session& s, Playback& clock, TextureSink& sink);
  /// Re-runs V1 and V2 when the session's config changed, and starts the walk's timing.
  void sync(const Session& s);
  /// Blocks until the walk from V1 to V2 has been timed (screenshots, tests).
  void wait() { walk.wait(); }
  Comparison comparison;
  TextureSlot textures[2];
  Background<std::vector<WalkBar>> walk;  // time_walk() of the session's config, off the UI thread

 private:
  std::uint64_t generation_ = ~std::uint64_t(0);
};

/// HBM bytes against block size or SRAM size (sweep_panel.cpp).
class SweepPanel {
 public:
  void draw(const Session& s);
  SweepAxis axis = SweepAxis::block;
  Background<std::vector<SweepPoint>> job;
  /// Blocks until the current sweep has finished (screenshots, tests).
  void wait() { job.wait(); }

 private:
  std::uint64_t generation_ = ~std::uint64_t(0);
  SweepAxis job_axis_ = SweepAxis::block;
};

/// One SM's timeline of V3 over that of the config's algorithm, on one time axis (timeline_panel.cpp).
class TimelinePanel {
 public:
  /// Draws both panes. `selected`: the block map's selected tile; the intervals on its tokens are
  /// outlined, and a click on an interval selects the map's tile holding the interval's first token;
  /// `track`: the playback, the intervals on its current tile's tokens outlined (nullptr: none).
  void draw(const Session& s, TileRef& selected, const Track* track);
  /// Starts laying out both timelines when the config or the SM changed (off the UI thread).
  void sync(const Session& s);
  /// Blocks until both timelines are laid out (screenshots, tests).
  void wait() { job.wait(); }
  Background<TimelinePair> job;
  TimeView view;        // the time window both panes show
  int sm = -1;          // the SM laid out; -1: each algorithm's busiest
  std::string tooltip;  // the tooltip shown in the last frame
  TimelineLayout layouts[2];  // where the last frame put each pane's lanes and intervals (tests)

 private:
  bool pane(const TimelineSide& side, const Session& s, TileRef& selected, const Track* track, int index);
  std::uint64_t generation_ = ~std::uint64_t(0);
  int job_sm_ = -2;
  bool fitted_ = false;  // view set to the whole range of the current result
};

/// Trace files: open, play, compare two, write one (trace_panel.cpp).
class TracePanel {
 public:
  void draw(const Session& s, TextureSink& sink);
  /// Opens `file` as trace A (which = 0) or B (1); false, with the message in error[which], when
  /// it cannot be read. Compares A and B when both are open.
  bool open(int which, const std::string& file);
  /// Moves A's playback to the (block, step) where A and B first differ; false when they agree.
  bool go_to_divergence();

  std::string path[2];
  std::unique_ptr<TraceView> view[2];
  std::string error[2];
  std::optional<DiffResult> diff;  // A against B
  std::string diff_error;          // why A and B cannot be compared
  Playback clock;                  // position among A's (block, step) groups
  std::string record_path = "flashlab.trace";
  int record_level = 0, record_format = 0;
  Background<std::string> record_job;

 private:
  void compare();
  void draw_open();
  void draw_play(TextureSink& sink);
  void draw_diff();
  void draw_record(const Session& s);
  std::unique_ptr<TileAnalysis> analysis;  // of A's config, for its map
  TextureSlot texture;
  std::uint64_t opened_ = 0;
};

}  // namespace flashlab::viz
