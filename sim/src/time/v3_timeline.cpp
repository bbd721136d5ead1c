// v3_timeline.cpp — one SM's V3 thread block, event by event (timeline_detail.hpp lay_v3).
//
// Each agent (the producer warp, each consumer warpgroup) runs its in-order list of operations
// (v3_program.hpp Builder): work on the SM's units (shared FIFO queues, one job at a time each; a
// wgmma's tensor time in the tensor pipe, tensor_pipe.hpp; with `paced`, a softmax's or finalize's
// instructions at the pace of the others executing beside it, v3_pace.hpp PacedStreams), a TMA load
// (the L2 queue, then one round trip; the queue runs at one SM's measured bulk-copy intake under a
// token bucket of its L2 share), an arrive on or a wait for an mbarrier / named barrier. The engine
// runs, at each turn, the runnable agent whose next operation is ready first (a GEMM's or a stream's
// end counts as ready once nothing else starts before it).
#include <algorithm>
#include <array>
#include <limits>
#include <stdexcept>
#include <string>

#include "flashlab/contract/event.hpp"
#include "timeline_detail.hpp"
#include "sm_facts.hpp"
#include "l2_queue.hpp"
#include "tensor_pipe.hpp"
#include "v3_program.hpp"
#include "v3_pace.hpp"

namespace flashlab::time_detail {
namespace {

/// The lanes of one SM's V3 thread block: the producer (with warp specialization), each consumer
/// warpgroup, then the units of kTimelineUnits.
std::vector<TimelineLane> lanes_of(const Builder& b) {
  std::vector<TimelineLane> out;
  if (b.ws_) out.push_back({.kind = LaneKind::agent, .name = "producer", .agent = kAgentProducer});
  for (int g = 0; g < b.groups_; ++g)
    out.push_back({.kind = LaneKind::agent, .name = "consumer " + std::to_string(g), .agent = std::uint8_t(kAgentConsumer + g)});
  for (HwUnit u : kTimelineUnits) out.push_back({.kind = LaneKind::unit, .name = std::string(to_string(u)), .unit = u});
  return out;
}

constexpr std::size_t kNoneLeft = std::numeric_limits<std::size_t>::max();

/// The agent whose next op can start first (a wait only once its event is done: at the later of the
/// agent's time and the event's; a wgmma still in the tensor pipe at the time it would end if no
/// other were added) and that time; kNoneLeft when every agent has run its program. Throws
/// std::logic_error when agents are left but each waits for another (a deadlock of the schedule).
std::pair<std::size_t, double> next_agent(const Builder& b, const TensorPipe& pipe, const std::vector<std::size_t>& pc,
                                          const std::vector<double>& t, const std::vector<double>& pending) {
  std::size_t best = kNoneLeft;
  double best_t = std::numeric_limits<double>::infinity();
  bool left = false;
  for (std::size_t a = 0; a < pc.size(); ++a) {
    if (pending[a] >= 0) {  // its instruction stream still running
      left = true;
      if (pending[a] < best_t) best_t = pending[a], best = a;
      continue;
    }
    if (pc[a] >= b.progs_[a].size()) continue;
    left = true;
    const Op& op = b.progs_[a][pc[a]];
    double r = t[a];
    if (op.kind == OpKind::wait) {
      const Event& e = b.events_[std::size_t(op.ev)];
      if (e.in_pipe) r = std::max({r, e.time, pipe.tentative(op.ev)});  // final once nothing runs before it
      else if (!e.done()) continue;
      else r = std::max(r, e.time);
    }
    if (r < best_t) best_t = r, best = a;
  }
  if (left && best == kNoneLeft) throw std::logic_error("timeline: V3's agents wait for each other (no runnable agent)");
  return {best, best_t};
}

/// lay_v3's event loop over a built program: at each step the agent that can go first runs its next
/// op (next_agent), the tensor pipe and the paced streams advanced to that moment; one method per op
/// kind. Spans go to `out_` as the units and agents are busy.
class Engine {
 public:
  Engine(const Problem& p, Builder& b, double latency_s, bool paced)
      : b_(b), ev_(b.events_), latency_s_(latency_s), paced_(paced), l2_(p.gpu, b.ring_bytes()), streams_(p),
        pc_(std::size_t(b.agents_), 0), t_(std::size_t(b.agents_), 0.0), gemm_of_(ev_.size(), {nullptr, -1}),
        held_(std::size_t(b.agents_), -1), run_(std::size_t(b.agents_)), pending_(std::size_t(b.agents_), -1.0) {
    out_.lanes = lanes_of(b);
    unit0_ = std::int32_t(out_.lanes.size()) - kTimelineUnitCount;
  }

  Laid run() {
    for (;;) {
      for (std::size_t a = 0; a < run_.size(); ++a)
        pending_[a] = run_[a].op ? std::max(run_[a].units, run_[a].end >= 0 ? run_[a].end : streams_.tentative(int(a))) : -1.0;
      const auto [best, at] = next_agent(b_, pipe_, pc_, t_, pending_);
      if (best == kNoneLeft) break;
      if (at > pipe_.now()) pipe_.advance(at), drain();
      if (at > streams_.now()) streams_.advance(at);
      collect_streams();
      if (run_[best].op) {
        end_stream(best);
        continue;
      }
      const Op& op = b_.progs_[best][pc_[best]++];
      switch (op.kind) {
        case OpKind::wait: wait(best, op); break;
        case OpKind::arrive: arrive(best, op); break;
        case OpKind::load: load(best, op); break;
        case OpKind::exec: exec(best, op); break;
      }
    }
    pipe_.advance(std::numeric_limits<double>::infinity()), drain();
    for (const Span& s : out_.spans) out_.time_s = std::max(out_.time_s, s.iv.end_s);
    for (double x : t_) out_.time_s = std::max(out_.time_s, x);
    return std::move(out_);
  }

 private:
  // paced: a consumer's instruction stream (softmax, finalize) at the pace of the others running now
  struct Stream {
    const Op* op = nullptr;                 // running: its exec op
    double start = 0, units = 0, end = -1;  // when it began; its units' FIFO jobs' end; its own end
  };

  void span(std::int32_t lane, double s, double e, const Op& op, std::int32_t by) {
    out_.spans.push_back(
        {.iv = {.start_s = s, .end_s = e, .lane = lane, .what = op.what, .i = op.i, .j = op.j, .bh = op.bh, .tensor = op.tensor},
         .by = by});
  }

  // the pipe's finished GEMMs complete their events; its served wgmmas become the tensor lane's spans
  void drain() {
    for (const auto& [tag, end] : pipe_.done) {
      Event& x = ev_[std::size_t(tag)];
      x.in_pipe = false, x.got += 1, x.time = std::max(x.time, end);
    }
    for (const TensorPipe::Piece& c : pipe_.pieces) {
      const auto& [op, by] = gemm_of_[std::size_t(c.tag)];
      if (last_piece_.first == c.tag && out_.spans[last_piece_.second].iv.end_s >= c.start) {
        out_.spans[last_piece_.second].iv.end_s = c.end;  // the same GEMM's next wgmma, right behind
        continue;
      }
      span(unit0_ + kTensor, c.start, c.end, *op, by);
      last_piece_ = {c.tag, out_.spans.size() - 1};
    }
    pipe_.done.clear(), pipe_.pieces.clear();
  }

  void collect_streams() {
    for (const auto& [tag, end] : streams_.done) run_[std::size_t(tag)].end = end;
    streams_.done.clear();
  }

  // agent a's stream has ended (and its units' jobs): its span, and the agent goes on
  void end_stream(std::size_t a) {
    Stream& r = run_[a];
    if (r.end < 0) streams_.finish(int(a));
    collect_streams();
    t_[a] = std::max(r.units, r.end);
    span(std::int32_t(a), r.start, t_[a], *r.op, -1);
    r = Stream{};
  }

  void wait(std::size_t a, const Op& op) {
    double& now = t_[a];
    if (ev_[std::size_t(op.ev)].in_pipe) pipe_.finish(op.ev), drain();
    const double until = std::max(now, ev_[std::size_t(op.ev)].time);
    if (op.what == Phase::wait_full && op.tensor == 'K') held_[a] = until > now ? op.ev : -1;
    if (until > now) span(std::int32_t(a), now, until, op, -1);
    now = until;
  }

  void arrive(std::size_t a, const Op& op) {
    Event& e = ev_[std::size_t(op.ev)];
    e.got += 1, e.time = std::max(e.time, t_[a]);
    if (op.ring < 0 && e.done()) out_.ring_deltas.emplace_back(e.time, -1);
  }

  void load(std::size_t a, const Op& op) {
    const double now = t_[a];
    const double s = std::max(now, free_[kL2]), e = l2_.transfer(s, op.bytes);
    free_[kL2] = e;
    if (e > s) span(unit0_ + kL2, s, e, op, std::int32_t(a));
    if (op.ev >= 0) {
      Event& x = ev_[std::size_t(op.ev)];
      x.got += 1, x.time = std::max(x.time, e + latency_s_);
    }
    if (op.ring > 0) out_.ring_deltas.emplace_back(now, +1);
  }

  void exec(std::size_t a, const Op& op) {
    double& now = t_[a];
    const auto lane = std::int32_t(a);
    if (!op.async) held_[a] = -1;  // a GEMM issued after the softmax was not held by the landing
    double units = now;            // the end of its jobs on the FIFO units
    const bool piped = op.async && op.dur[kTensor] > 0;  // a wgmma: its tensor time in the pipe
    for (int u = 0; u < kTimelineUnitCount; ++u) {
      if (op.dur[std::size_t(u)] <= 0 || (piped && u == kTensor)) continue;
      const double s = std::max(now, free_[std::size_t(u)]), e = s + op.dur[std::size_t(u)];
      free_[std::size_t(u)] = e;
      span(unit0_ + u, s, e, op, lane);
      units = std::max(units, e);
    }
    const double end = std::max(units, now + op.floor);
    if (piped) {
      Event& x = ev_[std::size_t(op.ev)];
      x.in_pipe = true, x.time = std::max(x.time, end);
      gemm_of_[std::size_t(op.ev)] = {&op, lane};
      pipe_.add(op.ev, lane, op.dur[kTensor], op.wgmmas, held_[a]);
      drain();
    } else if (op.async) {
      Event& x = ev_[std::size_t(op.ev)];
      x.got += 1, x.time = std::max(x.time, end);
    } else if (paced_ && op.warp_instructions > 0) {
      streams_.add(int(a), op.warp_instructions);
      run_[a] = {.op = &op, .start = now, .units = units};
    } else {
      if (end > now) span(lane, now, end, op, -1);
      now = end;
    }
  }

  Builder& b_;
  std::vector<Event>& ev_;
  double latency_s_;
  bool paced_;
  L2Queue l2_;
  TensorPipe pipe_;           // the tensor pipe's GEMMs
  PacedStreams streams_;
  Laid out_;
  std::int32_t unit0_ = 0;    // the first unit's lane
  std::vector<std::size_t> pc_;
  std::vector<double> t_;     // each agent's time, seconds
  std::array<double, kTimelineUnitCount> free_{};
  std::vector<std::pair<const Op*, std::int32_t>> gemm_of_;  // a GEMM's issuing op and lane, by completion event
  std::vector<int> held_;     // the K full barrier whose landing an agent waited for
  std::pair<int, std::size_t> last_piece_{-1, 0};  // the tensor lane's last span: its GEMM, its index
  std::vector<Stream> run_;
  std::vector<double> pending_;
};

}  // namespace

Laid lay_v3(const Problem& p, bool persistent, const V3Tiles& tiles,
            const std::vector<std::pair<std::int64_t, std::int64_t>>& blocks, double latency_s, double iota, bool paced) {
  Builder b(p, persistent, tiles, blocks, iota);
  b.build();
  return Engine(p, b, latency_s, paced).run();
}

}  // namespace flashlab::time_detail
