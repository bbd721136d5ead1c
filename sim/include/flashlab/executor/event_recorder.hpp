// event_recorder.hpp — turns executor steps into the event records of contract/event.hpp.
//
// Block level: one event per action of a step, in schedule order, and one `skip` event for a tile
// the schedule skips. Every event of a step carries the step's launch, block, step number and tile (i, j)
// (-1 where the step has none); rows x cols is the region the action touches (cost.hpp Extent);
// bytes are HBM bytes for loads and stores, 0 for compute and skip. warp = -1 (the whole block).
// V3's warp roles (schedule.hpp Role; docs/events.md "V3"): agent names the issuer; an action of
// every consumer warpgroup is one event per warpgroup k, on its rows [64 k, 64 k + 64) of the Q
// block with their bytes; arrive and wait on a stage ring name the stage (rows) and the phase
// (cols); a deferred action is issued on the previous visited tile (StepView::prev_j), and an outer
// end first issues the body's deferred actions on the last one.
#pragma once

#include <vector>

#include "flashlab/config/config.hpp"
#include "flashlab/contract/event.hpp"
#include "flashlab/executor/executor.hpp"

namespace flashlab {

/// The launch of standard attention's step `step` in a trace that does not record it (format v1,
/// docs/events.md "Versions"): step k is launch k (k = 0, 1, 2); a larger step, which no valid
/// standard trace holds, maps to the last launch, 2.
std::uint16_t standard_launch_of_step(std::uint32_t step);

/// Events one action becomes at block level: consumer_groups() for an action of every consumer
/// warpgroup (Role::consumers), else 1.
std::int64_t action_events(const Problem& p, const Action& a);

/// Appends the block-level events of step `s` to `out`.
void append_block_events(const Problem& p, const StepView& s, std::vector<Event>& out);

/// An observer that keeps every event of a run, in order.
class EventRecorder : public StepObserver {
 public:
  explicit EventRecorder(const Problem& p) : p_(p) {}
  void on_step(const StepView& s) override { append_block_events(p_, s, events_); }
  const std::vector<Event>& events() const { return events_; }
  std::vector<Event>& events() { return events_; }

 private:
  Problem p_;
  std::vector<Event> events_;
};

}  // namespace flashlab
