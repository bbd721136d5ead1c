// counters.hpp — exact 64-bit counters, indexed by tensor and direction, op kind and tile class.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "flashlab/contract/event.hpp"
#include "flashlab/contract/tiling.hpp"

namespace flashlab {

/// Non-matmul operations by kind (docs/model.md "Non-matmul operations").
enum class OpKind : std::uint8_t { exp = 0, max, add, sub, mul, div, log };
inline constexpr int kOpKindCount = 7;
std::string_view to_string(OpKind k);
std::string_view to_string(Tensor t);  // "Q", "K", ..., "P"
std::string_view to_string(Op o);      // "load", "store", ...
std::string_view to_string(Eq e);
std::string_view to_string(TileClass c);  // "full", "partial", "skipped"

enum class Dir : std::uint8_t { read = 0, write = 1 };

/// Work of one step, one tile or a whole run. All counts are exact; bytes are HBM bytes.
struct Cost {
  std::array<std::array<std::uint64_t, 2>, kTensorCount> hbm{};  // [tensor][read|write], bytes
  std::array<std::uint64_t, kOpKindCount> ops{};                 // non-matmul operations by kind
  std::uint64_t flops = 0;                                       // matmul FLOPs (2 per multiply-add)

  Cost& operator+=(const Cost& o);
  Cost& operator*=(std::uint64_t k);
  std::uint64_t read_bytes() const;
  std::uint64_t write_bytes() const;
  std::uint64_t bytes(Tensor t, Dir d) const { return hbm[int(t)][int(d)]; }
  std::uint64_t op(OpKind k) const { return ops[int(k)]; }
};

/// Tile counts by class and by what the schedule did with them.
struct TileCounts {
  std::uint64_t total = 0, visited = 0, full = 0, partial = 0, skipped = 0;
};

/// Everything `flashlab count` reports for one configuration (all batch*heads included, except
/// the SRAM and grid figures, which are per thread block and per launch).
struct Counters {
  Cost cost;
  TileCounts tiles;
  std::int64_t sram_peak_bytes = 0;  // largest on-chip working set of one thread block, bytes
  std::int64_t sram_capacity = 0;    // M, bytes
  std::int64_t grid_blocks = 0;      // thread blocks launched
  std::int64_t blocks_per_sm = 0;    // resident blocks per SM on the GPU preset
  std::int64_t waves = 0;            // ceil(grid_blocks / (SMs * blocks_per_sm))
  std::uint64_t steps = 0;           // steps walked, one (batch, head)
};

}  // namespace flashlab
