// stepper.hpp — playback one step at a time, for the viewer: the executor's step (tiles resident
// in SRAM, counters so far) plus what the executor alone does not keep: the step's events at a
// trace level, the work of each warp in the step, and m and l of the current Q block.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "flashlab/executor/executor.hpp"
#include "flashlab/numerics/numerics.hpp"
#include "flashlab/trace/trace.hpp"
#include "flashlab/warps/warps.hpp"

namespace flashlab {

class Stepper {
 public:
  /// `inputs`: when given, m and l are available after each step. They come from one numerics run
  /// made here (numerics.hpp simulate() recording every Q block), so the memory they take is
  /// about 8 bytes x N_q x (steps that touch a Q block) / T_r: meant for configs small enough to
  /// watch. Throws ConfigError when the shapes of `inputs` do not match p.
  explicit Stepper(const Problem& p, TraceLevel level = TraceLevel::warp, const Inputs* inputs = nullptr);

  /// Runs one step; false once the schedule is done.
  bool step();
  bool done() const { return ex_.done(); }

  const Executor& executor() const { return ex_; }
  /// The last step run, the tiles resident after it, counters so far (executor.hpp).
  const StepView& last() const { return ex_.last(); }
  Resident resident() const { return ex_.resident(); }
  Counters counters() const { return ex_.counters(); }

  /// The last step's events at the stepper's level, in stream order.
  std::span<const Event> events() const { return events_; }
  /// The last step's work per warp (p.warps entries, one (batch, head)).
  const std::vector<WarpWork>& warp_work() const { return work_; }
  /// m and l (rows(i) values each) of the last step's Q block i as they stand after the step;
  /// null when numerics is off or the step has no Q block (prologue, V1's K/V loads).
  const StatSnapshot* stats() const { return stats_; }

 private:
  Problem p_;
  TraceLevel level_;
  Executor ex_;
  std::vector<Event> events_;
  std::vector<WarpWork> work_;
  std::vector<std::vector<StatSnapshot>> snapshots_;  // by Q block, by increasing step
  const StatSnapshot* stats_ = nullptr;
};

}  // namespace flashlab
