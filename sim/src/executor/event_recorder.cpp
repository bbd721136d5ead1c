// event_recorder.cpp — block-level events of a step (see executor/event_recorder.hpp).
#include "flashlab/executor/event_recorder.hpp"

#include "flashlab/executor/action_cost.hpp"

namespace flashlab {
namespace {

// The rows [64 k, 64 k + 64) ∩ [0, rows) that consumer warpgroup k owns: how many.
std::int64_t warpgroup_rows(std::int64_t k, std::int64_t rows) {
  const std::int64_t first = std::min(64 * k, rows), last = std::min(64 * k + 64, rows);
  return last - first;
}

// The events of action a on tile (i, j) at ring position n (StepView::ring) of a thread block that
// walked `work` outer blocks before this one (StepView::work), appended to e's copies.
void append_action(const Problem& p, const Action& a, std::int64_t i, std::int64_t j, std::int64_t n,
                   std::int64_t work, Event e, std::vector<Event>& out) {
  const Extent x = action_extent(p, a, i, j);
  e.i = std::int32_t(i);
  e.j = std::int32_t(j);
  e.op = a.op;
  e.tensor = a.tensor;
  e.eq = a.eq;
  e.rows = std::uint32_t(x.rows);
  e.cols = std::uint32_t(x.cols);
  e.bytes = 0;
  if (a.op == Op::load || a.op == Op::store || a.op == Op::atomic) {
    const Cost c = action_cost(p, a, i, j);
    e.bytes = c.bytes(a.tensor, direction(a.op));
  }
  const bool sync = a.op == Op::arrive || a.op == Op::wait || a.op == Op::commit;
  if (sync) e.rows = e.cols = 0;
  if (sync && a.ring > 0) {  // a stage of the K/V ring: rows = stage, cols = the phase waited for
    e.rows = std::uint32_t(n % a.ring);
    const std::uint32_t phase = std::uint32_t(n / a.ring) & 1u;
    // the producer's empty waits start on the other phase (FA3's producer start state: phase 1)
    e.cols = a.op == Op::wait && a.eq == Eq::stage_empty ? phase ^ 1u : phase;
  } else if (sync && a.eq == Eq::stage_full) {  // a one-buffer barrier (Q_i's): stage 0, a phase per
    e.cols = std::uint32_t(work & 1);          // outer block (FA3's barrier_Q.wait(work_idx % 2))
  }
  switch (a.role) {
    case Role::block: e.agent = kAgentBlock; break;
    case Role::producer: e.agent = kAgentProducer; break;
    case Role::consumer0: e.agent = kAgentConsumer; break;
    case Role::consumers: {
      const std::int64_t groups = std::max<std::int64_t>(1, p.consumer_groups());
      const bool named = sync && a.tensor == Tensor::none && a.eq == Eq::none;  // ping-pong's named barrier
      for (std::int64_t k = 0; k < groups; ++k) {
        Event w = e;
        w.agent = std::uint8_t(kAgentConsumer + k);
        if (named) w.rows = std::uint32_t(a.op == Op::wait ? k : (k + 1) % groups);  // its own, the next's
        if (!sync) {  // its own rows of the Q block, and their share of the bytes
          const std::int64_t r = warpgroup_rows(k, x.rows);
          w.rows = std::uint32_t(r);
          w.bytes = x.rows > 0 ? e.bytes / std::uint64_t(x.rows) * std::uint64_t(r) : 0;
        }
        out.push_back(w);
      }
      return;
    }
  }
  out.push_back(e);
}

}  // namespace

std::uint16_t standard_launch_of_step(std::uint32_t step) { return std::uint16_t(step < 2 ? step : 2); }

std::int64_t action_events(const Problem& p, const Action& a) {
  return a.role == Role::consumers ? std::max<std::int64_t>(1, p.consumer_groups()) : 1;
}

void append_block_events(const Problem& p, const StepView& s, std::vector<Event>& out) {
  Event e;
  e.launch = s.launch;
  e.block = s.block;
  e.step = s.step;
  e.i = std::int32_t(s.i);
  e.j = std::int32_t(s.j);
  if (s.skip) {
    e.op = Op::skip;
    e.rows = std::uint32_t(p.tiling.rows(s.i));
    e.cols = std::uint32_t(p.tiling.cols(s.j));
    out.push_back(e);
    return;
  }
  // An outer end first issues the deferred actions of the outer block's last visited tile.
  if (s.level == Level::outer_end && s.prev_j >= 0)
    for (const Action& a : s.deferred) append_action(p, a, s.i, s.prev_j, s.ring - 1, s.work, e, out);
  for (const Action& a : s.actions) {
    if (!a.deferred) append_action(p, a, s.i, s.j, s.ring, s.work, e, out);
    else if (s.prev_j >= 0) append_action(p, a, s.i, s.prev_j, s.ring - 1, s.work, e, out);  // the previous tile's
  }
}

}  // namespace flashlab
