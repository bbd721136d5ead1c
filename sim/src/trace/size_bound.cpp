// size_bound.cpp — how large a trace file will be, from the schedule alone (trace_io.hpp), so that
// a trace too large for the disk is refused before a byte is written.
#include <algorithm>
#include <string>

#include "flashlab/executor/counters.hpp"
#include "flashlab/executor/event_recorder.hpp"
#include "flashlab/schedule/schedule.hpp"
#include "flashlab/trace/trace_io.hpp"
#include "forms.hpp"

namespace flashlab {
namespace {

using u64 = std::uint64_t;

// Saturating arithmetic: a bound past 2^64 stays 2^64 - 1 (still refused by any limit).
u64 mul(u64 a, u64 b) { return a != 0 && b > UINT64_MAX / a ? UINT64_MAX : a * b; }
u64 add(u64 a, u64 b) { return b > UINT64_MAX - a ? UINT64_MAX : a + b; }

u64 digits(u64 v) {
  u64 n = 1;
  while (v >= 10) v /= 10, ++n;
  return n;
}

// Warp-level events one compute action of equation `eq` adds (warps.cpp StepWalk::compute): one
// per warp, and with split-K (W > 1) the cross-warp reductions of the softmax (partials, write,
// barrier, read for m and for l) and of the output (partials, write, barrier, read).
u64 warp_events_of(Eq eq, u64 w, bool split_k) {
  if (!split_k) return w;
  switch (eq) {
    case Eq::softmax_v1:
    case Eq::softmax_v2: return 7 * w;
    case Eq::output_v1:
    case Eq::output_v2: return 4 * w;
    default: return w;
  }
}

// Events of one step running `actions`: action_events of each (block level); at warp level the
// expansion of each compute and, on a tile, the two barriers of every warp.
u64 step_events(const std::vector<Action>& actions, const Problem& p, TraceLevel level, bool warp_step, bool tile) {
  u64 n = 0;
  for (const Action& a : actions) n += u64(action_events(p, a));
  if (level == TraceLevel::warp && warp_step) {
    const u64 w = u64(p.warps);
    const bool split_k = p.split == WarpSplit::split_k && w > 1;
    for (const Action& a : actions)
      if (a.op == Op::compute) n += warp_events_of(a.eq, w, split_k);
    if (tile) n += 2 * w;
  }
  return n;
}

}  // namespace

TraceSizeBound trace_size_bound(const Problem& p, const TraceHeader& h, TraceFormat f, std::size_t stats_blocks) {
  return trace_size_bound(p, make_schedule(p), h, f, stats_blocks);
}

TraceSizeBound trace_size_bound(const Problem& p, const Schedule& s, const TraceHeader& h, TraceFormat f,
                                std::size_t stats_blocks) {
  const Tiling& t = p.tiling;
  const u64 t_r = u64(t.t_r()), t_c = u64(t.t_c());
  const bool tiled = has_tiles(s);

  TraceSizeBound b;
  u64 steps = 0, blocks = 1;  // steps of one (batch, head); thread blocks of the largest launch
  for (const Launch& l : s.launches) {
    for (const std::vector<Action>& step : l.prologue) {
      b.events = add(b.events, step.size());
      ++steps;
    }
    const std::vector<Loop> walked = walked_loops(l);
    if (walked.empty()) continue;
    blocks = std::max<u64>(blocks, u64(blocks_per_head(l, p)));
    // Outer steps that hold a Q block get warp events (V2's); V1's K_j, V_j loads have none.
    const u64 outer = u64(loop_extent(walked[0].dim, p));
    const bool q = walked[0].dim == Dim::q_block;
    // an outer end also issues the body's deferred actions (event_recorder.hpp)
    std::vector<Action> end = l.outer_end;
    for (const Action& a : l.body)
      if (a.deferred) end.push_back(a);
    const u64 per_outer = add(step_events(l.outer_begin, p, h.level, q, false), step_events(end, p, h.level, q, false));
    b.events = add(b.events, mul(outer, per_outer));
    steps = add(steps, mul(outer, 2));
    if (walked.size() == 2) {
      // An inner step runs its actions, or is one `skip` event on a skipped tile.
      const u64 tiles = mul(outer, u64(loop_extent(walked[1].dim, p)));
      const u64 per_tile = std::max<u64>(step_events(l.body, p, h.level, true, true), 1);
      b.events = add(b.events, mul(tiles, per_tile));
      steps = add(steps, tiles);
    }
  }

  std::string begin, end;
  if (f == TraceFormat::text) {
    trace_form::text_begin(begin, h);
    trace_form::text_end(end, {});
    // "launch block step op tensor i j rows cols bytes warp eq\n", every field at its widest.
    u64 op = 0, tensor = 0, eq = 0;
    for (int k = 0; k < kOpCount; ++k) op = std::max<u64>(op, to_string(Op(k)).size());
    for (int k = 0; k <= kTensorCount; ++k) tensor = std::max<u64>(tensor, to_string(Tensor(k)).size());
    for (int k = 0; k < kEqCount; ++k) eq = std::max<u64>(eq, to_string(Eq(k)).size());
    const u64 n = u64(std::max(t.n_q, t.n_k)), extent = std::max<u64>(n, u64(t.d));
    const u64 index = std::max<u64>(2, digits(std::max(t_r, t_c))), warp = std::max<u64>(2, digits(u64(p.warps)));
    const u64 bytes = digits(mul(mul(4 * u64(p.warps), n), extent));  // S in fp32 or a reduction's partials
    const u64 launch = digits(u64(s.launches.size() - 1));  // launch indices 0 .. launches - 1
    b.event_bytes = launch + 1 + digits(blocks) + digits(steps) + op + tensor + 2 * index + 2 * digits(extent) +
                    bytes + warp + eq + 11 + (has_warp_roles(s) ? 9 : 0);  // " producer": V3's agent
  } else {
    trace_form::binary_begin(begin, h, 0);
    trace_form::binary_end(end, {});
    b.event_bytes = sizeof(Event);
  }
  // Statistics: per block at most T_c + 2 snapshots (V2: Q_i, each tile, O_i; V1: line 2, each
  // tile), standard attention 2 (softmax, output), of B_r values of m and of l; text at most 16 characters a value ("-1.23456789e+38 ").
  const u64 value_bytes = f == TraceFormat::text ? 16 : 4, snapshot = 64 + 2 * (8 + value_bytes * u64(t.b_r));
  const u64 stats = mul(u64(stats_blocks), add(32, mul(tiled ? t_c + 2 : 2, snapshot)));
  b.bytes = add(add(begin.size() + end.size(), stats), mul(b.events, b.event_bytes));
  b.steps = steps;
  return b;
}

}  // namespace flashlab
