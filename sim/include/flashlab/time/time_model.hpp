// time_model.hpp — predicted time of a schedule on a GPU preset: a consumer of the walk's work per
// step and of the L2 model's DRAM bytes (docs/model.md "Time model").
//
// Per step of a thread block, the time of its work on each unit of the SM at the SM's share of
// the preset's ceilings (config/ceilings.hpp; measured on the H200): tensor cores (matmul FLOPs),
// the special-function unit (exp, log, and the reciprocal of a division), FP32 (the other
// non-matmul operations, one lane-instruction each, and the warp model's extra operations),
// shared memory (tile loads into SRAM, the matmul operand reads of each warp, the split-K
// reductions of the warp model), the L2 (the step's loads and stores) and barriers (the warp
// model's count times the measured barrier cost). k thread blocks share an SM (occupancy, at most
// the grid spread over the SMs), w = k * warps warps are resident on it; a step takes
//     k * ( largest unit time + rho * (sum of the other unit times) ),  rho = min(1, 5 / w)
// plus, when w < 6, an exposed load latency of 0.65 us: units overlap only as far as resident
// warps hide each other (two constants, derived in docs/model.md from the committed H200 data).
// A row launch (one 4-warp block per query row: standard attention's softmax) holds its row as fp32
// in SRAM (occupancy from that), its units do not overlap, and each block waits 0.574 us per
// 2 KiB of loads (one 16-byte load per thread in flight): docs/model.md "The row launch". A
// backward tile counts the shared-memory operands of its five matmuls and the round trip of dS_ij,
// and its units do not overlap either (rho = 1): docs/model.md "The backward's tile".
// A thread block's time is the sum of its steps; the blocks of a launch are dealt, in dispatch
// order, to the first free of the SMs * k slots (wave quantization, uneven causal rows, idle SMs
// when the grid is small), and the launch takes the latest finish, at least its DRAM bytes over
// the DRAM bandwidth, plus the launch overhead.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "flashlab/config/ceilings.hpp"
#include "flashlab/config/config.hpp"
#include "flashlab/executor/counters.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/memory/occupancy.hpp"
#include "flashlab/schedule/schedule.hpp"

namespace flashlab {

/// The units of the time model.
enum class Unit : std::uint8_t { tensor = 0, sfu, fp32, smem, barrier, l2, latency, dram, launch };
inline constexpr int kUnitCount = 9;
std::string_view to_string(Unit u);  // "tensor", "sfu", "fp32", "smem", "barrier", "l2", "latency", "dram", "launch"

/// Predicted time of one launch.
struct LaunchTime {
  std::string name;
  double time_s = 0;                      // predicted, launch overhead included
  double blocks_s = 0;                    // the latest thread block's finish (the SMs' part)
  std::array<double, kUnitCount> unit_s{};  // time each unit would take alone with every SM busy
  /// Each unit's share of the thread blocks' time (the steps' time split among the units that
  /// set it), summing to 1 over tensor..latency (dram and launch 0).
  std::array<double, kUnitCount> share{};
  Unit bound = Unit::tensor;              // the unit that sets the time (largest share or a bound)
  Occupancy occupancy;
  std::int64_t grid = 0, waves = 0;       // thread blocks; ceil(grid / slots)
  std::int64_t sharing = 1;               // k: blocks sharing an SM (occupancy, grid / SMs)
  double sm_busy = 0;                     // fraction of SM-slot time doing work (idle SMs, tails)
  std::uint64_t dram_read_bytes = 0, dram_write_bytes = 0;
};

/// Predicted time of a whole schedule.
struct TimePrediction {
  double time_s = 0;
  double tflops = 0;             // matmul FLOPs / time
  double peak_fraction = 0;      // tflops over the measured mma.sync peak
  Unit bound = Unit::tensor;     // the bound of the launch that takes longest
  std::uint64_t dram_read_bytes = 0, dram_write_bytes = 0;
  std::vector<LaunchTime> launches;
  const Ceilings* ceilings = nullptr;
};

/// An observer of the walk: the time of each thread block of each launch, one (batch, head).
class BlockTimer : public StepObserver {
 public:
  BlockTimer(const Problem& p, const Schedule& s);
  void on_step(const StepView& s) override;

 private:
  friend TimePrediction predict_time(const Problem&, const Schedule&, const BlockTimer&, const Counters&);
  struct StepTime {
    double time = 0;
    std::array<double, kUnitCount> unit{};   // per-SM unit times of the step
    std::array<double, kUnitCount> share{};  // how `time` splits among the units
  };
  StepTime step_time(const StepView& s, std::size_t launch, double fraction) const;
  const StepTime& memo(const StepView& s);

  Problem p_;
  const Schedule* s_;
  const Ceilings* c_;
  std::vector<Occupancy> occ_;
  std::vector<std::int64_t> sharing_;
  std::vector<bool> walks_tiles_;                             // [launch] has tile loops
  std::vector<std::vector<double>> block_s_;                  // [launch][block] seconds
  std::vector<std::array<double, kUnitCount>> unit_s_;        // [launch] unit seconds, one head, per SM
  std::vector<std::array<double, kUnitCount>> share_s_;       // [launch] block seconds by unit
  using Key = std::tuple<std::uint16_t, int, std::int64_t, std::int64_t, int, const void*>;
  std::map<Key, StepTime> memo_;
  Key last_key_{};
  const StepTime* last_ = nullptr;  // memo_'s nodes stay put
};

/// The prediction from a finished walk: `b` observed it, `k` its counters (with the L2 model:
/// Counters::l2; without it the DRAM bound is left out).
TimePrediction predict_time(const Problem& p, const Schedule& s, const BlockTimer& b, const Counters& k);

/// Counters (sectors and L2 model on) and predicted time of schedule `s` on problem p; `also`,
/// when given, observes the same walk (a progress bar, the warp counter).
struct Modelled {
  Counters counters;
  TimePrediction time;
};
Modelled model(const Problem& p, const Schedule& s, StepObserver* also = nullptr);
/// The same for the schedule p runs (make_schedule(p): its algorithm and switches).
Modelled model(const Problem& p, StepObserver* also = nullptr);

}  // namespace flashlab
