// timeline_pair.hpp — the timeline panel's data: one SM's timeline (flashlab/time/timeline.hpp) of
// V3 (FA3's Hopper forward) and of the config's own algorithm (V2 unless the config is V1 or
// standard attention) on the same config, each resolved with its own defaults (V3: FA3's tile and
// switches for d, fa3_forward_tile; V2: its default blocks), to be drawn one under the other on one
// time scale. Slow at large N (every tile of the SM's thread blocks is laid out): the panel computes
// it off the UI thread (model/background.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "flashlab/config/config.hpp"
#include "flashlab/time/timeline.hpp"

namespace flashlab::viz {

struct TimelineSide {
  Algo algo = Algo::v3;
  std::optional<Timeline> timeline;  // empty when the config is invalid for this algorithm
  std::int64_t b_r = 0, b_c = 0;     // its tile (B_r x B_c), to find its tiles' tokens on the block map
  bool q_blocks = false;             // an interval's i is its Q block (V3; V1/V2 with a thread block per Q
                                     // block; not a grid of one thread block per head, whose i is 0)
  std::string error;                 // why not: the ConfigError message, or timeline()'s
};

struct TimelinePair {
  std::array<TimelineSide, 2> sides;  // [0]: V3, [1]: the config's algorithm (V2 by default)
  /// The longer of the two timelines (seconds): the shared time axis' whole range.
  double end_s() const;
};

/// The algorithm laid out under V3 for config c: c.algo, or V2 when c.algo is V3.
Algo partner_algo(const Config& c);

/// Both sides for config c on SM `sm` (-1: each side's busiest SM, TimelineOptions::sm). Never
/// throws for a bad config: a side that cannot run carries the reason in `error`.
TimelinePair compute_timelines(const Config& c, std::int64_t sm = -1);

}  // namespace flashlab::viz
