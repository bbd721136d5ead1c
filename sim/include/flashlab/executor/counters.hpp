// counters.hpp — exact 64-bit counters, indexed by memory level, tensor and direction, op kind
// and tile class; one set per launch and their totals.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "flashlab/contract/event.hpp"
#include "flashlab/contract/names.hpp"  // to_string(Tensor, Op, Eq, TileClass)
#include "flashlab/contract/tiling.hpp"
#include "flashlab/schedule/memory.hpp"

namespace flashlab {

/// Non-matmul operations by kind (docs/model.md "Non-matmul operations").
enum class OpKind : std::uint8_t { exp = 0, max, add, sub, mul, div, log };
inline constexpr int kOpKindCount = 7;
std::string_view to_string(OpKind k);

/// The direction of traffic at a level. `atomic`: read-modify-write done by the memory system
/// (Op::atomic; Nsight Compute's reductions): the bytes of the values added, counted once, apart
/// from reads and writes.
enum class Dir : std::uint8_t { read = 0, write = 1, atomic = 2 };
inline constexpr int kDirCount = 3;
std::string_view to_string(Dir d);  // "read", "write", "atomic"

/// Bytes per tensor and direction at one memory level: [tensor][read|write|atomic].
using TensorBytes = std::array<std::array<std::uint64_t, kDirCount>, kTensorCount>;

/// Sum over tensors of one direction.
std::uint64_t total(const TensorBytes& b, Dir d);

/// Work of one step, one tile or a whole run. All counts are exact; bytes are HBM bytes
/// (global-memory requests, Memory::hbm), what the events carry.
struct Cost {
  TensorBytes hbm{};                                             // [tensor][read|write|atomic], bytes
  std::array<std::uint64_t, kOpKindCount> ops{};                 // non-matmul operations by kind
  std::uint64_t flops = 0;                                       // matmul FLOPs (2 per multiply-add)

  Cost& operator+=(const Cost& o);
  bool operator==(const Cost&) const = default;
  Cost& operator*=(std::uint64_t k);
  std::uint64_t read_bytes() const;
  std::uint64_t write_bytes() const;
  std::uint64_t atomic_bytes() const;
  std::uint64_t bytes(Tensor t, Dir d) const { return hbm[int(t)][int(d)]; }
  std::uint64_t op(OpKind k) const { return ops[int(k)]; }
};

/// Tile counts by class and by what the schedule did with them.
struct TileCounts {
  std::uint64_t total = 0, visited = 0, full = 0, partial = 0, skipped = 0;
};

/// One launch of the schedule (all batch*heads included, except the SRAM figure).
struct LaunchCounters {
  std::string name;                  // the kernel (schedule.hpp Launch::name)
  Cost cost;                         // its HBM bytes, FLOPs and ops
  std::int64_t grid = 0;             // thread blocks, batch * heads included
  std::int64_t sram_peak_bytes = 0;  // largest SRAM working set of one of its thread blocks
  std::int64_t blocks_per_sm = 0;    // resident blocks per SM on the GPU preset
  std::int64_t waves = 0;            // ceil(grid / (SMs * blocks_per_sm))
  TensorBytes l2{}, dram{};          // the L2 model's levels (when Counters::l2): requests, DRAM
  TensorBytes l2_dirty_at_end{};     // stores still dirty in the L2 when the launch ends
};

/// Everything `flashlab count` reports for one configuration (all batch*heads included, except
/// the SRAM and per-SM figures, which are per thread block).
struct Counters {
  Cost cost;  // totals over the launches
  /// Bytes by memory level (memory.hpp): [level][tensor][read|write]. levels[hbm] equals
  /// cost.hbm; levels[sram] and levels[registers] are the tile loads and stores by where the
  /// schedule keeps each tile; levels[sector] is filled only when the sector counter ran
  /// (`sectors`: a SectorCounter attached to the walk, Executor::add_level).
  std::array<TensorBytes, kMemoryCount> levels{};
  bool sectors = false;
  bool l2 = false;  // levels[l2] and levels[dram] filled by the L2 model (an L2Model attached)
  std::vector<LaunchCounters> launches;  // in launch order; their costs sum to `cost`
  TileCounts tiles;
  std::int64_t sram_peak_bytes = 0;  // largest SRAM working set of one thread block, any launch
  std::int64_t sram_capacity = 0;    // M, bytes
  std::int64_t grid_blocks = 0;      // thread blocks of all launches
  std::int64_t blocks_per_sm = 0;    // the fewest resident blocks per SM of any launch
  std::int64_t waves = 0;            // waves of all launches, one launch after the other
  std::uint64_t steps = 0;           // steps walked, one (batch, head)

  std::uint64_t bytes(Memory m, Tensor t, Dir d) const { return levels[int(m)][int(t)][int(d)]; }
};

}  // namespace flashlab
