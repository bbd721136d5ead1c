// comparison.hpp — FlashAttention V1 (FA1 Alg. 1) and V2 (FA2 Alg. 1) on the same config, walked
// in step, with their totals side by side and the ratio V1 / V2 of each.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "flashlab/config/config.hpp"
#include "model/playback.hpp"
#include "model/tile_analysis.hpp"

namespace flashlab::viz {

struct CompareSide {
  Algo algo = Algo::v1;
  std::unique_ptr<TileAnalysis> analysis;  // null when the config is invalid for this algorithm
  std::unique_ptr<Track> track;
  std::string error;                       // the ConfigError message when invalid
};

class Comparison {
 public:
  /// Resolves `c` once with algo = v1 and once with algo = v2. Options left unset take each
  /// algorithm's own defaults (block skip off for V1 and on for V2; split-K for V1, split-Q for V2).
  void reset(const Config& c);
  const CompareSide& v1() const { return sides_[0]; }
  const CompareSide& v2() const { return sides_[1]; }
  /// Steps of the longer schedule.
  std::uint64_t total_steps() const;
  /// Moves both tracks to step k (each stops at its own end).
  void seek(std::uint64_t k);

 private:
  std::array<CompareSide, 2> sides_{CompareSide{Algo::v1, {}, {}, {}}, CompareSide{Algo::v2, {}, {}, {}}};
};

/// The rows of the comparison table: keys of the metrics catalogue (flashlab/report/metrics.hpp),
/// each shown for V1 and V2 with the ratio V1 / V2 — HBM read, written and total bytes, matmul
/// FLOPs, exp, mul and div counts, tiles computed, steps, SRAM peak, grid blocks, and the warp
/// split's shared-memory bytes, barriers and extra operations.
const std::vector<std::string_view>& compare_keys();

}  // namespace flashlab::viz
