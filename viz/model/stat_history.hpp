// stat_history.hpp — m and l of every Q block after every step, from the simulator's numerics
// (numerics.hpp simulate with every block traced), for the playback's "numerics on" view.
// Inputs are seeded N(0, 1) values rounded to the dtype (make_inputs, seed 0).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "flashlab/config/config.hpp"
#include "flashlab/numerics/numerics.hpp"

namespace flashlab::viz {

/// Numerics run interactively up to N_q N_k d = 2^28 multiply-adds per matmul and 2^24 recorded
/// statistics values.
inline constexpr std::int64_t kNumericsWorkLimit = std::int64_t(1) << 28;
inline constexpr std::int64_t kNumericsStatLimit = std::int64_t(1) << 24;

/// Why numerics would be too slow for p ("" when they are not).
std::string numerics_too_large(const Problem& p);

class StatHistory {
 public:
  /// Runs simulate(p) with every Q block traced. Throws ConfigError when numerics_too_large(p).
  explicit StatHistory(const Problem& p);

  /// m and l of Q block i after the executor's step number `step` of thread block `block`, i.e. the
  /// block's last snapshot taken at or before it; nullptr before the first snapshot or when i is out
  /// of range. Steps are numbered per thread block: V2 runs one per Q block (block = i), V1 and
  /// standard attention one for all Q blocks (0) — read off the schedule (Executor::tile_step).
  const StatSnapshot* at(std::int64_t i, std::uint32_t block, std::uint32_t step) const;
  /// Every snapshot of Q block i.
  const std::vector<StatSnapshot>& snapshots(std::int64_t i) const { return traces_[std::size_t(i)]; }
  std::int64_t blocks() const { return std::int64_t(traces_.size()); }

 private:
  std::vector<std::uint32_t> block_of_;  // the thread block that runs Q block i's tiles
  std::vector<std::vector<StatSnapshot>> traces_;
};

/// A StatHistory, or why there is none (numerics_too_large, or the ConfigError of a failed run).
struct StatResult {
  std::shared_ptr<const StatHistory> history;
  std::string error;
};
/// Builds a StatHistory of p, catching ConfigError into `error` (for a background job).
StatResult run_numerics(const Problem& p);

}  // namespace flashlab::viz
