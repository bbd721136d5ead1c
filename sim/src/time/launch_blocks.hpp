// launch_blocks.hpp — one launch's thread blocks as predict_time times them (sim/src/time/launch_deal.cpp):
// each block's summed steps, their deal to the SMs (shared where blocks share an SM), the launch's round
// trip at its load, and the deal kept block by block for a consumer that lays them out in time (the
// timeline, sim/src/time/timeline.cpp). Private to sim/src/time.
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "flashlab/time/time_model.hpp"
#include "block_deal.hpp"

namespace flashlab::time_detail {

/// The blocks of a launch walked at `at`: each block's time (dur, seconds), and each unit's time and
/// share summed over the blocks' steps. `block_steps`: per block of one (batch, head), (work id, count).
struct BlockSums {
  std::vector<double> dur;
  std::array<double, kHwUnitCount> unit{}, share{};
};
BlockSums sum_blocks(const std::vector<StepWork>& works,
                     const std::vector<std::vector<std::pair<int, double>>>& block_steps, const TimeParams& at);

/// The blocks an SM holds at once when `per_head` blocks per (batch, head) go to `slots` slots: the
/// occupancy's slots per SM, at most the grid over the SMs.
std::int64_t blocks_per_sm(const Problem& p, std::int64_t per_head, std::int64_t slots);

/// Launch l's blocks dealt to the SMs: the latest finish and the SMs' busy time (seconds, as deal's:
/// the blocks' summed times at the works' sharing). Where more than one block shares an SM (not
/// persistent) with processor sharing (block_deal.hpp deal_shared: each block's time at every n =
/// 1..k sharing the SM, from its steps' works at `at`, k = blocks_per_sm); else deal_launch. `dur`:
/// the blocks' times at the works' own sharing. `trace`: deal_shared's, block by block.
std::pair<double, double> deal_blocks(const Problem& p, const Launch& l, const std::vector<StepWork>& works,
                                      const std::vector<std::vector<std::pair<int, double>>>& block_steps,
                                      const std::vector<double>& dur, std::int64_t slots, const TimeParams& at,
                                      std::vector<DealtBlock>* trace = nullptr);

/// `params` with launch x's round trip at its load (round_trips.hpp with_round_trip): the load is the
/// share of the launch's time, computed without lambda, that its L2 traffic keeps the L2 busy, all SMs
/// counted (a grid that leaves SMs idle, or a last wave of few blocks, loads it less).
TimeParams loaded_params(const Problem& p, const Launch& l, const std::vector<StepWork>& works,
                         const std::vector<std::vector<std::pair<int, double>>>& block_steps, std::int64_t slots,
                         const Counters& k, std::size_t x, const TimeParams& params);

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
  /// The deal (deal_blocks above: deal, deal_shared or deal_persistent, ties to the lowest
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
