// timeline.cpp — one SM's timeline (flashlab/time/timeline.hpp): the walk, the SM's blocks from the time
// model's deal (launch_blocks.hpp), V3 event by event (v3_timeline.cpp), other schedules step by step,
// then each unit's busy time, its idle time by cause, and the critical path's parts.
#include "flashlab/time/timeline.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "flashlab/contract/error.hpp"
#include "flashlab/contract/event.hpp"
#include "flashlab/executor/action_cost.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/executor/l2_model.hpp"
#include "flashlab/executor/sector_counter.hpp"
#include "launch_blocks.hpp"
#include "round_trips.hpp"
#include "timeline_detail.hpp"
#include "v3_pace.hpp"
#include "v3_work.hpp"

namespace flashlab {

std::string_view to_string(Phase ph) {
  static constexpr std::string_view names[] = {"gemm0",   "softmax",   "gemm1",      "load Q",       "load K",   "load V",
                                               "store O", "wait-full", "wait-empty", "wait-barrier", "wait-mma", "step"};
  return names[int(ph)];
}

namespace {

using time_detail::Laid;
using time_detail::Span;
using time_detail::V3TileStep;
using time_detail::V3Tiles;

/// Records V3's tiles of one (batch, head) from the walk: per Q block, its steps' work and bytes.
class V3Recorder : public StepObserver {
 public:
  V3Recorder(const Problem& p, const Schedule& s, std::size_t launch) : p_(p), s_(s), launch_(launch) {}
  void on_step(const StepView& s) override {
    if (s.launch != launch_ || s.skip || s.actions.empty() || s.i < 0) return;
    if (tiles.size() <= std::size_t(s.i)) tiles.resize(std::size_t(s.i) + 1), ended.resize(std::size_t(s.i) + 1);
    if (ended[std::size_t(s.i)]) return;  // one (batch, head) is enough: every one walks the same tiles
    const Launch& l = s_.launches[launch_];
    V3TileStep t{.level = s.level, .j = s.j, .work = time_detail::v3_step_work(p_, l, s)};
    for (const Action& a : s.actions) {
      if (a.op != Op::load && a.op != Op::store) continue;
      const double b = double(action_cost(p_, a, s.i, s.j).hbm[int(a.tensor)][int(direction(a.op))]);
      if (a.op == Op::store) t.store_bytes += b;
      else if (a.tensor == Tensor::Q) t.q_bytes += b;
      else if (a.tensor == Tensor::K) t.kv_bytes += b;
    }
    tiles[std::size_t(s.i)].push_back(t);
    if (s.level == Level::outer_end) ended[std::size_t(s.i)] = true;
  }
  V3Tiles tiles;
  std::vector<bool> ended;

 private:
  const Problem& p_;
  const Schedule& s_;
  std::size_t launch_;
};

/// Standard attention, V1, V2: each thread block on the SM one lane, each step one interval of
/// step_time's duration, in the order the walk first met each step's work.
Laid lay_steps(const time_detail::LaunchBlocks& lb, const std::vector<std::size_t>& slots) {
  Laid out;
  for (std::size_t r = 0; r < slots.size(); ++r)
    out.lanes.push_back({.kind = LaneKind::agent, .name = "block " + std::to_string(r), .agent = kAgentBlock,
                         .block = std::int32_t(r)});
  for (HwUnit u : time_detail::kTimelineUnits)
    out.lanes.push_back({.kind = LaneKind::unit, .name = std::string(to_string(u)), .unit = u});
  for (std::size_t r = 0; r < slots.size(); ++r) {
    double t = 0;
    const auto& blocks = lb.slot_blocks[slots[r]];
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      const auto& [bh, block] = blocks[b];
      // shared deal: the block from its start to its end, its steps scaled to that span
      double scale = 1;
      if (!lb.slot_spans.empty()) {
        const auto [start, end] = lb.slot_spans[slots[r]][b];
        t = start;
        scale = lb.dur[std::size_t(block)] > 0 ? (end - start) / lb.dur[std::size_t(block)] : 1.0;
      }
      for (const auto& [id, n] : lb.steps[std::size_t(block)]) {
        const double d = scale * lb.times[std::size_t(id)].time;
        for (double c = 0; c < n; c += 1) {
          const double len = d * std::min(1.0, n - c);
          out.spans.push_back({.iv = {.start_s = t, .end_s = t + len, .lane = std::int32_t(r), .what = Phase::step,
                                      .i = block, .j = -1, .bh = bh}});
          t += len;
        }
      }
    }
    out.time_s = std::max(out.time_s, t);
  }
  return out;
}

std::string wait_cause(const Span& s, const std::string& agent) {
  switch (s.iv.what) {
    case Phase::softmax: return "waiting for " + agent + "'s softmax";
    case Phase::wait_full: return std::string("waiting for ") + (s.iv.tensor ? s.iv.tensor : 'K') + "'s load";
    case Phase::wait_empty: return "waiting for a stage's release (wait-empty)";
    case Phase::wait_barrier: return "waiting for a barrier (ping-pong / thread block)";
    case Phase::wait_mma: return "waiting for " + agent + "'s wgmma";
    case Phase::store_o: return "waiting for " + agent + "'s epilogue";
    default: return "waiting for " + agent + "'s " + std::string(to_string(s.iv.what));
  }
}

/// A unit lane's time: busy, and each gap attributed to what the agent whose job ends it was doing.
UnitUse unit_use(const Laid& l, std::int32_t lane, const std::vector<std::vector<const Span*>>& by_lane, bool steps) {
  UnitUse u;
  u.lane = lane;
  u.unit = l.lanes[std::size_t(lane)].unit;
  std::map<std::string, double> idle;
  const std::vector<const Span*>& jobs = by_lane[std::size_t(lane)];
  // per agent lane, the first of its intervals (by start) that may end after `last`: `last` only grows,
  // so the intervals before it overlap no later gap either (linear, not a scan per gap)
  std::vector<std::size_t> from(by_lane.size(), 0);
  double busy = 0, last = 0;
  for (const Span* s : jobs) {
    busy += s->iv.end_s - s->iv.start_s;
    if (s->iv.start_s > last && s->by >= 0) {
      // the gap [last, start): the issuing agent's intervals over it
      double covered = 0;
      const std::string& agent = l.lanes[std::size_t(s->by)].name;
      const std::vector<const Span*>& spans = by_lane[std::size_t(s->by)];
      std::size_t& k = from[std::size_t(s->by)];
      while (k < spans.size() && spans[k]->iv.end_s <= last) ++k;
      for (std::size_t x = k; x < spans.size() && spans[x]->iv.start_s < s->iv.start_s; ++x) {
        const Span* a = spans[x];
        const double lo = std::max(last, a->iv.start_s), hi = std::min(s->iv.start_s, a->iv.end_s);
        if (hi <= lo) continue;
        idle[wait_cause(*a, agent)] += hi - lo;
        covered += hi - lo;
      }
      if (s->iv.start_s - last > covered) idle["issue: " + agent + " between phases"] += s->iv.start_s - last - covered;
    }
    last = std::max(last, s->iv.end_s);
  }
  if (l.time_s > last) idle["tail: no work"] += l.time_s - last;
  const double t = l.time_s > 0 ? l.time_s : 1.0;
  u.busy = busy / t;
  if (steps) {  // step by step: no unit intervals; what is not busy is the step's other units and waits
    u.busy = 0;
    idle.clear();
  }
  for (const auto& [cause, s] : idle) u.idle.push_back({cause, s / t});
  std::sort(u.idle.begin(), u.idle.end(), [](const IdleCause& a, const IdleCause& b) { return a.fraction > b.fraction; });
  return u;
}

/// The critical path's parts: the agent that finishes last, its intervals by what they are (a wait is
/// named for what it waits on), the rest issue between them.
std::vector<CriticalPart> critical_parts(const Laid& l, const std::vector<std::vector<const Span*>>& by_lane) {
  std::int32_t last_lane = -1;
  double last = -1;
  for (std::size_t x = 0; x < l.lanes.size(); ++x) {
    if (l.lanes[x].kind != LaneKind::agent || by_lane[x].empty()) continue;
    if (by_lane[x].back()->iv.end_s > last) last = by_lane[x].back()->iv.end_s, last_lane = std::int32_t(x);
  }
  std::map<std::string, double> parts;
  double covered = 0;
  if (last_lane >= 0)
    for (const Span* s : by_lane[std::size_t(last_lane)]) {
      std::string what(to_string(s->iv.what));
      if (s->iv.what == Phase::wait_full) what += std::string(" (") + (s->iv.tensor ? s->iv.tensor : 'K') + "'s load)";
      if (s->iv.what == Phase::wait_mma) what += " (wgmma on the tensor cores)";
      parts[what] += s->iv.end_s - s->iv.start_s;
      covered += s->iv.end_s - s->iv.start_s;
    }
  if (l.time_s > covered) parts["issue / other"] += l.time_s - covered;
  std::vector<CriticalPart> out;
  for (const auto& [w, sec] : parts) out.push_back({w, sec, l.time_s > 0 ? sec / l.time_s : 0});
  std::sort(out.begin(), out.end(), [](const CriticalPart& a, const CriticalPart& b) { return a.seconds > b.seconds; });
  return out;
}

/// Step by step (standard, V1, V2): each unit's busy fraction as its time within the SM's steps
/// (step_time's per-unit work; issue holds the FP32 pipe's time), the rest the steps' overlap rule.
void step_unit_busy(const time_detail::LaunchBlocks& lb, const std::vector<std::size_t>& slots, Timeline& out) {
  for (UnitUse& u : out.units) {
    double busy = 0;
    for (std::size_t q : slots)
      for (const auto& [bh, block] : lb.slot_blocks[q])
        for (const auto& [id, n] : lb.steps[std::size_t(block)]) {
          const StepTime& st = lb.times[std::size_t(id)];
          double t = st.unit[std::size_t(u.unit)];
          if (u.unit == HwUnit::issue) t = std::max(t, st.unit[int(HwUnit::fp32)]);
          busy += n * t;
        }
    u.busy = out.time_s > 0 ? std::min(1.0, busy / out.time_s) : 0.0;
    u.idle.push_back({"other units and waits within the steps (step_time's overlap rule)", 1.0 - u.busy});
  }
}

/// The stage ring's occupancy over time from the laid-out +1 / -1 changes (V3 starts at 0 full).
std::vector<RingSample> ring_occupancy(Laid& laid, bool v3) {
  std::vector<RingSample> ring;
  std::sort(laid.ring_deltas.begin(), laid.ring_deltas.end());
  std::int32_t full = 0;
  if (v3) ring.push_back({0.0, 0});
  for (const auto& [t, d] : laid.ring_deltas) {
    full += d;
    if (!ring.empty() && ring.back().t_s == t) ring.back().full = full;
    else ring.push_back({t, full});
  }
  return ring;
}

/// The intervals kept in out: the first `max` in time (out.truncated and a note when some are left
/// out), ordered by lane, then by start.
void keep_intervals(const Laid& laid, std::size_t max, Timeline& out) {
  std::vector<TimelineInterval> all;
  all.reserve(laid.spans.size());
  for (const Span& sp : laid.spans) all.push_back(sp.iv);
  if (all.size() > max) {
    std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.start_s < b.start_s; });
    out.note += "truncated: the first " + std::to_string(max) + " of " + std::to_string(all.size()) +
                " intervals in time kept (the summary counts all); ";
    all.resize(max);
    out.truncated = true;
  }
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    return a.lane != b.lane ? a.lane < b.lane : a.start_s < b.start_s;
  });
  out.intervals = std::move(all);
}

}  // namespace

Timeline timeline(const Problem& p, const Schedule& sched, const TimelineOptions& o) {
  const std::int64_t sms = std::int64_t(p.gpu.sms);
  if (o.sm < -1 || o.sm >= sms)
    throw ConfigError("sm", std::to_string(o.sm), "0 to " + std::to_string(sms - 1) + ", or -1 for the busiest");
  Executor e(p, sched);
  const Schedule& s = e.schedule();
  std::size_t x = 0;
  while (x + 1 < s.launches.size() && walked_loops(s.launches[x]).empty()) ++x;
  // the deal keeps every thread block of the launch (launch_blocks): bounded, as the viewer must stay live
  const std::int64_t blocks = blocks_per_head(s.launches[x], p) * p.bh();
  if (blocks > kTimelineMaxBlocks)
    throw ConfigError("thread blocks", std::to_string(blocks),
                      "at most " + std::to_string(kTimelineMaxBlocks) + " in the launch a timeline shows (" +
                          s.launches[x].name + ": batch x heads x its blocks per (batch, head)); `count` times a launch of any size");
  SectorCounter sectors(p, s);
  L2Model l2(p, s);
  e.add_level(&sectors);
  e.add_level(&l2);
  BlockTimer timer(p, s);
  e.add_observer(&timer);
  const bool v3 = has_warp_roles(Schedule{{s.launches[x]}});
  V3Recorder rec(p, s, x);
  if (v3) e.add_observer(&rec);
  e.run();
  const Counters k = e.counters();
  const time_detail::LaunchBlocks lb = time_detail::launch_blocks(p, s, timer, k, x);

  // the SM: its slots (slot q is on SM q mod SMs), the busiest by default
  std::vector<double> finish(std::size_t(sms), 0.0);
  for (std::size_t q = 0; q < lb.slot_finish.size(); ++q)
    finish[q % std::size_t(sms)] = std::max(finish[q % std::size_t(sms)], lb.slot_finish[q]);
  Timeline out;
  out.sm = o.sm >= 0 ? o.sm : std::int64_t(std::max_element(finish.begin(), finish.end()) - finish.begin());
  out.analytic_s = finish[std::size_t(out.sm)];
  out.v3 = v3;
  std::vector<std::size_t> slots;
  for (std::size_t q = std::size_t(out.sm); q < lb.slot_blocks.size(); q += std::size_t(sms)) slots.push_back(q);
  for (std::size_t q : slots) out.tiles += std::int64_t(lb.slot_blocks[q].size());

  Laid laid;
  if (v3) {
    std::vector<std::pair<std::int64_t, std::int64_t>> blocks;
    for (std::size_t q : slots) blocks.insert(blocks.end(), lb.slot_blocks[q].begin(), lb.slot_blocks[q].end());
    if (slots.size() > 1) out.note = "V3 with several thread blocks per SM: laid out one after another; ";
    // a copy's round trip, the ring's turnaround beyond it (a step's K_j and V_j), and with one stage
    // under the static deal the lockstep fill on it
    double kv = 0;
    for (const auto& tile : rec.tiles)
      for (const V3TileStep& st : tile) kv = std::max(kv, st.kv_bytes);
    const double trip = time_detail::tma_round_trip(p.gpu, k, x) + time_detail::ring_wake_s(p.gpu, 2 * kv) +
                        time_detail::lockstep_fill_s(p, s.launches[x]);
    laid = time_detail::lay_v3_paced(p, lb.persistent, rec.tiles, blocks, trip);
    out.stages = std::int32_t(p.hopper.stages);
  } else {
    laid = lay_steps(lb, slots);
    out.note = "step by step (each step one interval of step_time's duration): no unit intervals; ";
  }
  out.time_s = laid.time_s;
  out.lanes = laid.lanes;

  // analysis on every interval
  std::vector<std::vector<const Span*>> by_lane(laid.lanes.size());
  for (const Span& sp : laid.spans) by_lane[std::size_t(sp.iv.lane)].push_back(&sp);
  for (auto& v : by_lane)
    std::stable_sort(v.begin(), v.end(), [](const Span* a, const Span* b) { return a->iv.start_s < b->iv.start_s; });
  for (std::size_t lane = 0; lane < laid.lanes.size(); ++lane) {
    if (laid.lanes[lane].kind != LaneKind::unit) continue;
    out.units.push_back(unit_use(laid, std::int32_t(lane), by_lane, !v3));
  }
  if (!v3) step_unit_busy(lb, slots, out);
  out.critical_path = critical_parts(laid, by_lane);
  out.ring = ring_occupancy(laid, v3);
  keep_intervals(laid, o.max_intervals, out);
  if (!out.note.empty()) out.note.resize(out.note.size() - 2);
  return out;
}

}  // namespace flashlab
