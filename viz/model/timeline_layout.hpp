// timeline_layout.hpp — where the timeline panel draws one SM's timeline (flashlab/time/timeline.hpp):
// a row per lane (the agents' issue streams, then the SM's units), a row for the K/V stage ring's
// occupancy (V3), and a rectangle per interval at x = the view's map of its start and end. Pure:
// pixels in, pixels out, no ImGui, so that tests check it by closed form on a hand-built Timeline.
// Several timelines laid out with one TimeView share one time scale (V3 and V2 one under the other).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "flashlab/config/config.hpp"
#include "flashlab/time/timeline.hpp"

namespace flashlab::viz {

/// The visible time window [t0_s, t1_s] (seconds from the SM's start) over `width` pixels from x0.
/// Zoom and pan keep t0_s >= 0, t1_s <= end_s and the window at least kMinSpan_s wide.
struct TimeView {
  static constexpr double kMinSpan_s = 1e-9;
  double t0_s = 0, t1_s = 1e-6;
  double end_s = 1e-6;  // the longest timeline shown: the whole range
  float x0 = 0, width = 1;

  /// The whole range [0, end] (end <= 0 gives 1 us).
  static TimeView whole(double end_s, float x0, float width);
  double span_s() const { return t1_s - t0_s; }
  /// Screen x of time t: x0 + width (t - t0) / span.
  double x_of(double t_s) const { return x0 + double(width) * (t_s - t0_s) / span_s(); }
  /// Time at screen x (inverse of x_of).
  double t_of(double x) const { return t0_s + (x - x0) / double(width) * span_s(); }
  /// Divides the span by `factor` (> 1 zooms in) keeping the time under screen x where it is,
  /// then clamps to [0, end].
  void zoom(double factor, double x);
  /// Moves the window by `pixels` (positive: later times come into view), clamped to [0, end].
  void pan(double pixels);
};

/// One row of the layout: a lane of the Timeline, or the ring's row (lane = -1).
struct LaneRow {
  std::int32_t lane = -1;  // index into Timeline::lanes; -1: the stage ring
  std::string label;       // "producer", "consumer 1", "block 0", "tensor", ..., "K/V ring"
  float y0 = 0, y1 = 0;
};

/// One interval's rectangle, clipped to the view. Intervals that fall in the same pixel column as
/// the previous rectangle of their lane are merged into it (`merged` counts them), so a frame draws
/// at most about one rectangle per pixel per lane whatever the number of intervals.
struct IntervalRect {
  float x0 = 0, x1 = 0, y0 = 0, y1 = 0;
  std::uint32_t colour = 0;
  std::size_t interval = 0;  // index into Timeline::intervals (the first one merged)
  std::size_t merged = 1;    // intervals this rectangle stands for
};

/// The ring's occupancy as steps: from x0 to x1, `full` of `stages` stages hold data.
struct RingBar {
  float x0 = 0, x1 = 0, y0 = 0, y1 = 0;  // y0: the top of the filled part
  std::int32_t full = 0;
};

struct TimelineLayout {
  std::vector<LaneRow> rows;
  std::vector<IntervalRect> rects;  // by lane, each lane's in time order
  std::vector<RingBar> ring;
  float height = 0;                 // rows' total height from the y0 given
};

/// Lays `t` out in view `v`: rows of `row_h` pixels from y0 (agents, then units, then the ring's
/// row when t has one), each rectangle inset 1 pixel from its row's edges, x clipped to
/// [v.x0, v.x0 + v.width] and never before the previous rectangle of its lane (no overlap).
/// Intervals wholly outside the view are left out. Colours: palette::phase_colour(what).
TimelineLayout layout_timeline(const Timeline& t, const TimeView& v, float y0, float row_h);

/// The rectangle under screen point (x, y), if any (the last drawn wins).
std::optional<std::size_t> rect_at(const TimelineLayout& l, float x, float y);

/// What waiting in phase `ph` means ("" for work phases): wait-full: the stage's K_j / V_j load
/// (the full mbarrier); wait-empty: the consumers' release of a stage (the empty mbarrier);
/// wait-barrier: the other consumer warpgroup's GEMMs (ping-pong's named barrier); wait-mma: its own
/// wgmma group (wgmma.wait_group). FA3 §3.1-3.2.
std::string wait_cause(Phase ph);

/// The hover text of interval k of t: the lane, what it is, the tile (i, j) and its (batch, head),
/// start and end in us (2 decimals), its length, and for a wait its cause. `merged` > 1 adds how
/// many intervals share the pixel.
std::string interval_summary(const Timeline& t, std::size_t k, std::size_t merged = 1);

/// Ticks of the time axis in the view: multiples of the smallest of 1, 2, 5 x 10^k seconds that
/// keeps ticks at least min_spacing pixels apart, within [t0, t1].
std::vector<double> time_ticks(const TimeView& v, double min_spacing);

/// The phases a timeline contains, in Phase order (the legend's entries).
std::vector<Phase> phases_present(const Timeline& t);

/// The tokens tile (i, j) of a b_r x b_c tiling covers: queries [i b_r, (i + 1) b_r), keys
/// [j b_c, (j + 1) b_c); j < 0: every key (a V1/V2 step interval names its thread block's Q block
/// i, not a K/V block). Lets V3's tiles (FA3's, e.g. 128 x 176) meet the block map's (V2's).
struct TokenBox {
  std::int64_t q0 = 0, q1 = 0, k0 = 0, k1 = 0;
};
TokenBox tile_tokens(std::int64_t i, std::int64_t j, std::int64_t b_r, std::int64_t b_c);
/// Whether two boxes share a token (half-open ranges).
bool overlap(const TokenBox& a, const TokenBox& b);

}  // namespace flashlab::viz
