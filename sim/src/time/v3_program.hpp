// v3_program.hpp — what each agent of one SM's V3 thread block does, in order (v3_timeline.cpp runs it).
//
// The producer warp (with warp specialization) and each consumer warpgroup as in-order lists of
// operations (Op): work on the SM's units, a TMA load, an arrive on or a wait for an mbarrier / named
// barrier, each event (Event) counting its arrivals. Builder lays them out for the SM's work tiles, in
// FA3's order (the ring of K/V stages, ping-pong's turns, intra-warpgroup overlap), from V3StepWork
// (v3_work.cpp) at the SM's share of GpuSpec's rates, split evenly over the consumer warpgroups.
// Private to sim/src/time.
#pragma once

#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "flashlab/contract/event.hpp"
#include "timeline_detail.hpp"
#include "sm_facts.hpp"

namespace flashlab::time_detail {

enum class OpKind : std::uint8_t { exec, wait, arrive, load };

struct Op {
  OpKind kind = OpKind::exec;
  Phase what = Phase::step;
  std::int64_t i = -1, j = -1, bh = -1;
  char tensor = 0;
  std::array<double, kTimelineUnitCount> dur{};  // exec: seconds on each unit (kTimelineUnits order)
  double floor = 0;     // exec: the agent's latency floor, seconds
  double warp_instructions = 0;  // exec: one warp's estimated instructions (the floor's work at the pace)
  bool async = false;   // exec: issued, its completion arrives on `ev` (wgmma)
  int ev = -1;          // the event waited for, arrived on, or completed
  double bytes = 0;     // load: bytes moved through the SM's L2 port
  int ring = 0;         // +1: a K or V load's issue takes a buffer; -1: its empty barrier's last arrive frees it
  int wgmmas = 0;       // exec (wgmma): its wgmma instructions (m64nNk16: K / 16)
};

struct Event {
  int needed = 1, got = 0;
  double time = 0;
  bool in_pipe = false;  // a wgmma's completion, still in the tensor pipe (TensorPipe)
  bool done() const { return got >= needed; }
};

struct Work {  // one consumer warpgroup's share of a step, seconds per unit
  std::array<double, kTimelineUnitCount> gemm0{}, gemm1{}, softmax{};
  double floor = 0, warp_instructions = 0;
  int gemm0_wgmmas = 0, gemm1_wgmmas = 0;  // S = Q K^T over d, O += P V over B_c: K / 16 each
};

constexpr int kTensor = 0, kSfu = 1, kIssue = 2, kSmem = 3, kL2 = 4;

inline Work group_work(const Problem& p, const V3StepWork& w, double groups, double iota) {
  const GpuSpec& g = p.gpu;
  const double sms = double(g.sms), clock = g.clock_hz.value();
  Work out;
  const double tensor = g.wgmma_flops.value() / sms, smem = g.smem_bytes_per_s.value() / sms;
  out.gemm0[kTensor] = w.gemm0_flops / groups / tensor;
  out.gemm0[kSmem] = w.gemm0_smem_bytes / groups / smem;
  out.gemm1[kTensor] = (w.flops - w.gemm0_flops) / groups / tensor;
  out.gemm1[kSmem] = (w.smem_bytes - w.gemm0_smem_bytes) / groups / smem;
  out.softmax[kSfu] = w.ex2 / groups / (g.ex2_per_s.value() / sms);
  // the issue unit holds FP32's time (step_time: max of the two)
  out.softmax[kIssue] = std::max(w.instructions / groups / (kSchedulers * clock),
                                 w.fp32 / groups / (g.fp32_fma_per_s.value() / sms));
  out.floor = w.warp_instructions * iota / clock;
  out.warp_instructions = w.warp_instructions;
  out.gemm0_wgmmas = int(double(p.tiling.d) / kWgmmaK), out.gemm1_wgmmas = int(double(p.tiling.b_c) / kWgmmaK);
  return out;
}

class Builder {
 public:
  Builder(const Problem& p, bool persistent, const V3Tiles& tiles,
          const std::vector<std::pair<std::int64_t, std::int64_t>>& blocks, double iota)
      : p_(p), persistent_(persistent), tiles_(tiles), blocks_(blocks), iota_(iota) {
    groups_ = int(p.tiling.b_r / 64);
    ws_ = p.hopper.warp_specialize;
    stages_ = int(p.hopper.stages);
    agents_ = groups_ + (ws_ ? 1 : 0);
    progs_.assign(std::size_t(agents_), {});
  }

  void build() {
    std::int64_t it = 0, block_ti = 0, block_it = 0;
    int done_ev = -1;
    for (std::size_t ti = 0; ti < blocks_.size(); ++ti) {
      const auto [bh, i] = blocks_[ti];
      const std::vector<V3TileStep>& steps = tiles_[std::size_t(i)];
      std::vector<const V3TileStep*> inner;
      const V3TileStep* begin = nullptr;
      const V3TileStep* end = nullptr;
      for (const V3TileStep& s : steps) {
        if (s.level == Level::inner) inner.push_back(&s);
        else if (s.level == Level::outer_begin) begin = &s;
        else if (s.level == Level::outer_end) end = &s;
      }
      const bool new_block = !persistent_ && ti > 0;
      if (new_block) {  // grid: a thread block per tile, once the last one has finished
        for (int a = 0; a < agents_; ++a) push(a, {.kind = OpKind::arrive, .ev = done_ev});
        const int wait = done_ev;
        for (int a = 0; a < agents_; ++a) push(a, {.kind = OpKind::wait, .what = Phase::wait_barrier, .ev = wait});
        block_ti = std::int64_t(ti), block_it = it, turn_.clear(), ++block_;
      }
      if (!persistent_) {
        events_.push_back({.needed = agents_});
        done_ev = int(events_.size()) - 1;
      }
      const std::int64_t nb = std::int64_t(inner.size());
      // the tile's barriers
      qf_.push_back(new_event(1));
      qe_.push_back(new_event(groups_));
      for (std::int64_t k = 0; k < nb; ++k) {
        kf_.push_back(new_event(1)), ke_.push_back(new_event(groups_));
        vf_.push_back(new_event(1)), ve_.push_back(new_event(groups_));
      }
      cur_ = {bh, i, std::int64_t(ti), block_ti, block_it};
      const double q_bytes = begin ? begin->q_bytes : 0.0;
      if (ws_) {  // the producer warp (agent 0): Q_i, then K_j, V_j of each block through the ring
        load_q(0, q_bytes);
        for (std::int64_t k = 0; k < nb; ++k) {
          const V3TileStep& st = *inner[std::size_t(k)];
          load_kv(0, false, it + k, st.j, st.kv_bytes), load_kv(0, true, it + k, st.j, st.kv_bytes);
        }
      }
      for (int g = 0; g < groups_; ++g) consumer(g, inner, end, it, q_bytes);
      it += nb;
    }
    if (!persistent_ && done_ev >= 0)
      for (int a = 0; a < agents_; ++a) push(a, {.kind = OpKind::arrive, .ev = done_ev});
  }

  /// The stage ring's bytes: stages x (the largest K_j + the largest V_j), bytes.
  double ring_bytes() const { return double(stages_) * 2.0 * max_kv_; }

  std::vector<std::vector<Op>> progs_;
  std::vector<Event> events_;
  int agents_ = 0, groups_ = 1;
  bool ws_ = true;

 private:
  struct Cur {
    std::int64_t bh, i, ti, block_ti, block_it;
  };
  int new_event(int needed) {
    events_.push_back({.needed = needed});
    return int(events_.size()) - 1;
  }
  void push(int agent, Op op) { progs_[std::size_t(agent)].push_back(op); }
  Op tagged(Op op) const {
    op.i = cur_.i, op.bh = cur_.bh;
    return op;
  }
  void load_q(int a, double bytes) {
    if (cur_.ti > cur_.block_ti)
      push(a, tagged({.kind = OpKind::wait, .what = Phase::wait_empty, .tensor = 'Q', .ev = qe_[std::size_t(cur_.ti - 1)]}));
    push(a, tagged({.kind = OpKind::load, .what = Phase::load_q, .tensor = 'Q', .ev = qf_[std::size_t(cur_.ti)],
                    .bytes = bytes}));
  }
  void load_kv(int a, bool v, std::int64_t it, std::int64_t j, double bytes) {
    max_kv_ = std::max(max_kv_, bytes);
    if (it - stages_ >= cur_.block_it) {
      Op w = tagged({.kind = OpKind::wait, .what = Phase::wait_empty, .tensor = v ? 'V' : 'K',
                     .ev = (v ? ve_ : ke_)[std::size_t(it - stages_)]});
      w.j = j;
      push(a, w);
    }
    Op l = tagged({.kind = OpKind::load, .what = v ? Phase::load_v : Phase::load_k, .tensor = v ? 'V' : 'K',
                   .ev = (v ? vf_ : kf_)[std::size_t(it)], .bytes = bytes, .ring = 1});
    l.j = j;
    push(a, l);
  }
  void wait(int g, Phase what, int ev, std::int64_t j, char tensor = 0) {
    Op w = tagged({.kind = OpKind::wait, .what = what, .tensor = tensor, .ev = ev});
    w.j = j;
    push(g + (ws_ ? 1 : 0), w);
  }
  void arrive(int g, int ev, int ring = 0) { push(g + (ws_ ? 1 : 0), {.kind = OpKind::arrive, .ev = ev, .ring = ring}); }
  void exec(int g, Phase what, const std::array<double, kTimelineUnitCount>& dur, std::int64_t j, const Work* w, int ev) {
    Op e = tagged({.kind = OpKind::exec, .what = what, .dur = dur, .floor = w ? w->floor : 0.0,
                   .warp_instructions = w ? w->warp_instructions : 0.0, .async = ev >= 0, .ev = ev});
    e.j = j;
    if (what == Phase::store_o) e.tensor = 'O';  // the finalize and O_i's staging: O's, as its store is
    push(g + (ws_ ? 1 : 0), e);
  }
  // ping-pong: warpgroup g's m-th turn waits for warpgroup g - 1's m-th (warpgroup 0: the last one's
  // (m - 1)-th; its first turn is free: the last warpgroup arrives at the start)
  int turn_event(int g, int m) {
    const auto key = std::make_tuple(block_, g, m);
    auto it = turn_.find(key);
    if (it != turn_.end()) return it->second;
    const int ev = new_event(1);
    if (g == 0 && m == 0) events_[std::size_t(ev)].got = 1;
    turn_.emplace(key, ev);
    return ev;
  }
  void pp_sync(int g) {
    if (!p_.hopper.pingpong || groups_ < 2) return;
    wait(g, Phase::wait_barrier, turn_event(g, turns_[g]), -1);
  }
  void pp_arrive(int g) {
    if (!p_.hopper.pingpong || groups_ < 2) return;
    const int m = turns_[g]++;
    const int next = (g + 1) % groups_;
    arrive(g, turn_event(next, next == 0 ? m + 1 : m));
  }
  int gemm(int g, Phase what, const Work& w, std::int64_t j) {
    const int ev = new_event(1);
    exec(g, what, what == Phase::gemm0 ? w.gemm0 : w.gemm1, j, nullptr, ev);
    progs_[std::size_t(g + (ws_ ? 1 : 0))].back().wgmmas = what == Phase::gemm0 ? w.gemm0_wgmmas : w.gemm1_wgmmas;
    return ev;
  }
  // consumer warpgroup g's tile: v3_forward.cuh Consumer::tile in its compiled order (with
  // intra-warpgroup overlap both GEMMs waited for and K, V released before the softmax: docs/model.md
  // "The compiled order", scripts/gpu/v3_kernel/loop_order.py), with the loads issued in line by
  // warpgroup 0 where there is no producer
  void consumer(int g, const std::vector<const V3TileStep*>& inner, const V3TileStep* end, std::int64_t it0,
                double q_bytes) {
    const bool inline_ld = !ws_ && g == 0;
    const int a = g + (ws_ ? 1 : 0);
    const std::int64_t nb = std::int64_t(inner.size());
    const auto jj = [&](std::int64_t k) { return inner[std::size_t(k)]->j; };
    const auto kv_bytes = [&](std::int64_t k) { return inner[std::size_t(k)]->kv_bytes; };
    if (turns_.size() < std::size_t(groups_) || (!persistent_ && cur_.ti == cur_.block_ti && g == 0))
      turns_.assign(std::size_t(groups_), 0);
    if (inline_ld) {
      load_q(a, q_bytes);
      for (std::int64_t k = 0; k < stages_ && k < nb; ++k)
        load_kv(a, false, it0 + k, jj(k), kv_bytes(k)), load_kv(a, true, it0 + k, jj(k), kv_bytes(k));
    }
    wait(g, Phase::wait_full, qf_[std::size_t(cur_.ti)], -1, 'Q');
    std::vector<Work> work;
    for (const V3TileStep* s : inner) work.push_back(group_work(p_, s->work, double(groups_), iota_));
    std::int64_t it = it0;
    if (nb > 0 && p_.hopper.intra_overlap) {
      wait(g, Phase::wait_full, kf_[std::size_t(it)], jj(0), 'K');
      pp_sync(g);
      int ev_s = gemm(g, Phase::gemm0, work[0], jj(0));
      pp_arrive(g);
      wait(g, Phase::wait_mma, ev_s, jj(0));
      arrive(g, ke_[std::size_t(it)], -1);
      if (inline_ld && stages_ < nb) load_kv(a, false, it + stages_, jj(stages_), kv_bytes(stages_));
      exec(g, Phase::softmax, work[0].softmax, jj(0), &work[0], -1);
      std::int64_t prev = it++;
      for (std::int64_t k = 1; k < nb; ++k, ++it) {
        wait(g, Phase::wait_full, kf_[std::size_t(it)], jj(k), 'K');
        pp_sync(g);
        ev_s = gemm(g, Phase::gemm0, work[std::size_t(k)], jj(k));
        wait(g, Phase::wait_full, vf_[std::size_t(prev)], jj(k - 1), 'V');  // V_(j-1) after GEMM0's issue
        const int ev_o = gemm(g, Phase::gemm1, work[std::size_t(k - 1)], jj(k - 1));
        pp_arrive(g);
        wait(g, Phase::wait_mma, ev_s, jj(k));
        arrive(g, ke_[std::size_t(it)], -1);
        if (inline_ld && k + stages_ < nb) load_kv(a, false, it + stages_, jj(k + stages_), kv_bytes(k + stages_));
        wait(g, Phase::wait_mma, ev_o, jj(k - 1));
        arrive(g, ve_[std::size_t(prev)], -1);
        if (inline_ld && k - 1 + stages_ < nb) load_kv(a, true, prev + stages_, jj(k - 1 + stages_), kv_bytes(k - 1 + stages_));
        exec(g, Phase::softmax, work[std::size_t(k)].softmax, jj(k), &work[std::size_t(k)], -1);
        prev = it;
      }
      arrive(g, qe_[std::size_t(cur_.ti)]);
      wait(g, Phase::wait_full, vf_[std::size_t(prev)], jj(nb - 1), 'V');
      const int ev_o = gemm(g, Phase::gemm1, work[std::size_t(nb - 1)], jj(nb - 1));  // outside the turns
      wait(g, Phase::wait_mma, ev_o, jj(nb - 1));
      arrive(g, ve_[std::size_t(prev)], -1);
    } else {
      for (std::int64_t k = 0; k < nb; ++k, ++it) {
        wait(g, Phase::wait_full, kf_[std::size_t(it)], jj(k), 'K');
        pp_sync(g);
        const int ev_s = gemm(g, Phase::gemm0, work[std::size_t(k)], jj(k));
        pp_arrive(g);
        wait(g, Phase::wait_mma, ev_s, jj(k));
        arrive(g, ke_[std::size_t(it)], -1);
        if (k == nb - 1) arrive(g, qe_[std::size_t(cur_.ti)]);
        if (inline_ld && k + stages_ < nb) load_kv(a, false, it + stages_, jj(k + stages_), kv_bytes(k + stages_));
        exec(g, Phase::softmax, work[std::size_t(k)].softmax, jj(k), &work[std::size_t(k)], -1);
        wait(g, Phase::wait_full, vf_[std::size_t(it)], jj(k), 'V');
        const int ev_o = gemm(g, Phase::gemm1, work[std::size_t(k)], jj(k));
        wait(g, Phase::wait_mma, ev_o, jj(k));
        arrive(g, ve_[std::size_t(it)], -1);
        if (inline_ld && k + stages_ < nb) load_kv(a, true, it + stages_, jj(k + stages_), kv_bytes(k + stages_));
      }
      if (nb == 0) arrive(g, qe_[std::size_t(cur_.ti)]);
    }
    // the epilogue: the finalize (1 / l, log) and O_i's, L_i's stores (issued; the L2 queue moves them)
    if (end) {
      const Work w = group_work(p_, end->work, double(groups_), iota_);
      exec(g, Phase::store_o, w.softmax, -1, &w, -1);
      push(a, tagged({.kind = OpKind::load, .what = Phase::store_o, .tensor = 'O',
                      .bytes = end->store_bytes / double(groups_)}));
    }
  }

  const Problem& p_;
  bool persistent_;
  const V3Tiles& tiles_;
  const std::vector<std::pair<std::int64_t, std::int64_t>>& blocks_;
  double iota_;
  int stages_ = 2, block_ = 0;
  double max_kv_ = 0;
  Cur cur_{};
  std::vector<int> qf_, qe_, kf_, ke_, vf_, ve_;
  std::vector<int> turns_;
  std::map<std::tuple<int, int, int>, int> turn_;
};

}  // namespace flashlab::time_detail
