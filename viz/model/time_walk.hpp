// time_walk.hpp — why V2 is faster, as the viewer draws it: the predicted time of each step of the
// walk from V1 to V2 (flashlab/config/config.hpp v1_to_v2_walk(), the steps of `flashlab explain`),
// each step a schedule of the simulator timed by the time model (docs/model.md "Time model").
// FA2 §3 names the changes: fewer non-matmul FLOPs (§3.1), parallelism over the sequence (§3.2),
// work partitioning between warps (§3.3); block skip is §3.1.1.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "flashlab/config/config.hpp"
#include "flashlab/report/metrics.hpp"

namespace flashlab::viz {

/// Steps whose schedule visits more tiles than this (T_r x T_c, one (batch, head)) are left out:
/// each costs one walk of every tile with the L2 and time models attached.
inline constexpr std::int64_t kWalkTileLimit = std::int64_t(1) << 22;

struct WalkBar {
  WalkStep step;
  /// report::measure() of the step's schedule (its `time` is the predicted time, seconds); empty
  /// when the step cannot run this config, with the reason in `why`.
  std::optional<report::Figures> figures;
  std::string why;
};

/// One bar per step of v1_to_v2_walk(): `c` with the step's switches (with_switches()), resolved and
/// measured. Never throws for a bad config: a ConfigError becomes that bar's `why`.
std::vector<WalkBar> time_walk(const Config& c);

}  // namespace flashlab::viz
