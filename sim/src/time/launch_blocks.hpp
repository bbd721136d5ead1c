// launch_blocks.hpp — one launch's thread blocks as predict_time times them, for a consumer that lays
// them out in time (the timeline, sim/src/time/timeline.cpp): each block's steps with their times at
// the launch's round trip, and the deal of the blocks to the SMs' slots. Private to sim/src/time.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "flashlab/time/time_model.hpp"

namespace flashlab::time_detail {

/// Launch x of a walk observed by a BlockTimer, timed as predict_time times it (time_model.cpp).
struct LaunchBlocks {
  TimeParams at;                      // the fitted params with the launch's round trip (latency_s: seconds)
  std::vector<StepWork> works;        // the launch's distinct step works (ids)
  std::vector<StepTime> times;        // step_time of each at `at`
  std::vector<std::vector<std::pair<int, double>>> steps;  // per block of one (batch, head): (work id, count),
                                                           // in the order the walk first met each work
  std::vector<double> dur;            // per block: its time (the sum of its steps), seconds
  std::int64_t sharing = 1;           // k: blocks sharing an SM
  bool persistent = false;            // one thread block per SM walks tiles (V3's persistent scheduler)
  double first_trip = 0;              // persistent: the round trip each thread block's first tile waits
  /// The deal (time_model.cpp deal_blocks: deal, deal_shared or deal_persistent, ties to the lowest
  /// slot): per slot, the blocks it runs in order as (batch * heads index, block of that (batch, head)),
  /// and its finish time. Slot q is on SM q mod SMs (persistent: slot q is SM q's thread block).
  std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> slot_blocks;
  std::vector<double> slot_finish;
  /// Where blocks share an SM (deal_shared, k > 1): each slot's blocks' start and end (seconds), a
  /// block's steps stretched or shrunk from their times at k by how many share the SM meanwhile.
  /// Empty otherwise (each block runs its steps' times back to back).
  std::vector<std::vector<std::pair<double, double>>> slot_spans;
  double makespan = 0;                // the latest finish: LaunchTime::blocks_s
};
LaunchBlocks launch_blocks(const Problem& p, const Schedule& s, const BlockTimer& b, const Counters& k, std::size_t x,
                           const TimeParams& params = kFittedTimeParams);

}  // namespace flashlab::time_detail
