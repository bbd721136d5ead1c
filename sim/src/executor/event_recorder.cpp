// event_recorder.cpp — block-level events of a step (see executor/event_recorder.hpp).
#include "flashlab/executor/event_recorder.hpp"

#include "flashlab/executor/action_cost.hpp"

namespace flashlab {

std::uint16_t standard_launch_of_step(std::uint32_t step) { return std::uint16_t(step < 2 ? step : 2); }

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
  for (const Action& a : s.actions) {
    const Extent x = action_extent(p, a, s.i, s.j);
    e.op = a.op;
    e.tensor = a.tensor;
    e.eq = a.eq;
    e.rows = std::uint32_t(x.rows);
    e.cols = std::uint32_t(x.cols);
    e.bytes = 0;
    if (a.op == Op::load || a.op == Op::store || a.op == Op::atomic) {
      const Cost c = action_cost(p, a, s.i, s.j);
      e.bytes = c.bytes(a.tensor, direction(a.op));
    }
    out.push_back(e);
  }
}

}  // namespace flashlab
