// tile_analysis.hpp — what the viewer shows about every tile of one configuration, computed once
// per configuration by the simulator: the executor's per-tile records (class, visit order), its
// final counters, and per-tile costs (Executor::tile_cost). No counting happens here.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flashlab/config/config.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/report/metrics.hpp"
#include "flashlab/warps/warps.hpp"

namespace flashlab::viz {

/// Per-tile quantities the block-skip map can colour by.
enum class Metric : std::uint8_t { hbm_bytes = 0, flops, exp_ops, visit_order, atomic_bytes };
inline constexpr int kMetricCount = 5;
/// "HBM bytes", "matmul FLOPs", "exp count", "visit order", "dQ atomics"
std::string_view to_string(Metric m);
std::string_view describe(Metric m);    // one sentence for the hover help

/// Per-tile records are kept up to this many tiles (8 bytes each); above it the map shows
/// tile classes only.
inline constexpr std::int64_t kTileStatsLimit = std::int64_t(1) << 22;

class TileAnalysis {
 public:
  /// Runs p's schedule to its end with ExecOptions::tile_stats (when T_r*T_c <= kTileStatsLimit).
  explicit TileAnalysis(const Problem& p);

  const Problem& problem() const { return exec_->problem(); }
  const Executor& executor() const { return *exec_; }
  const Tiling& tiling() const { return exec_->problem().tiling; }
  /// The finished run's counters (batch * heads included, as Executor::counters()).
  const Counters& totals() const { return figures_.counters; }
  /// The finished run's figures with the warp model's totals, for the metrics catalogue
  /// (flashlab/report/metrics.hpp).
  const report::Figures& figures() const { return figures_; }
  /// Whether per-tile records exist (visit order, computed-or-skipped).
  bool has_tile_stats() const { return has_stats_; }

  /// Class of tile (i, j) (tiling.hpp tile_class).
  TileClass cls(std::int64_t i, std::int64_t j) const;
  /// Whether the schedule computes tile (i, j): the executor's visit record; a schedule without a
  /// tile loop (standard attention) computes every tile of S. Without per-tile records: the definition of block skip (skipped
  /// tiles are not visited when Problem::block_skip is on; docs/model.md "Tiles and masks").
  bool computed(std::int64_t i, std::int64_t j) const;
  /// Visit order among computed tiles (0 first), -1 when not visited or unknown.
  std::int32_t visit_order(std::int64_t i, std::int64_t j) const;
  /// Cost of tile (i, j)'s step, one (batch, head) (Executor::tile_cost; zero when not visited).
  Cost cost(std::int64_t i, std::int64_t j) const { return exec_->tile_cost(i, j); }

  /// Work of each warp in tile (i, j)'s step (warps.hpp step_warp_work on the step the executor
  /// runs for the tile); empty when the schedule does not compute the tile.
  std::vector<WarpWork> warp_work(std::int64_t i, std::int64_t j) const;

  /// Metric of tile (i, j); NaN when the schedule does not compute the tile.
  double metric(Metric m, std::int64_t i, std::int64_t j) const;
  /// The metric of every tile, row-major (T_r, T_c), computed on first use and kept; empty when
  /// has_tile_stats() is false.
  const std::vector<double>& metric_grid(Metric m) const;
  /// Smallest and largest finite value of metric_grid(m) ({0, 0} when none), kept with the grid.
  std::pair<double, double> metric_range(Metric m) const;

 private:
  std::unique_ptr<Executor> exec_;
  std::unique_ptr<WarpCounter> warps_;  // observes exec_, so it lives as long
  report::Figures figures_;
  bool has_stats_ = false;
  struct Grid {
    std::vector<double> values;
    std::pair<double, double> range{0, 0};
  };
  const Grid& grid(Metric m) const;
  mutable std::array<std::optional<Grid>, kMetricCount> grids_;
};

/// The tooltip of tile (i, j): its token ranges, shape, class, visit, HBM bytes by direction,
/// FLOPs and exp count. Lines separated by '\n'.
std::string tile_summary(const TileAnalysis& a, std::int64_t i, std::int64_t j);

}  // namespace flashlab::viz
