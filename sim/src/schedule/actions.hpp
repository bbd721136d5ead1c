// actions.hpp — the words schedules are written in (internal to sim/src/schedule): one action, one
// loop level, one launch.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "flashlab/schedule/schedule.hpp"

namespace flashlab::schedule_words {

inline Action load(Tensor t, Region r, bool if_visited = false) { return {Op::load, t, r, Eq::none, if_visited}; }
inline Action store(Tensor t, Region r, bool if_visited = false) { return {Op::store, t, r, Eq::none, if_visited}; }
inline Action atomic(Tensor t, Region r) { return {Op::atomic, t, r, Eq::none, false}; }
inline Action compute(Eq e, bool if_visited = false) { return {Op::compute, Tensor::none, Region::none, e, if_visited}; }

// FA3's asynchronous steps (V3): an mbarrier arrive or wait on tensor t's barrier (a ring of
// `ring` stages for K and V; Q's barrier: ring 0), `which` barrier of the stage (Eq::stage_full or
// Eq::stage_empty); a named barrier between consumer warpgroups (ping-pong: no tensor, no
// equation); wgmma.commit_group and wgmma.wait_group of GEMM `eq`.
inline Action arrive(Tensor t, Eq which, std::uint8_t ring = 0) {
  Action a{Op::arrive, t, Region::none, which, false};
  a.ring = ring;
  return a;
}
inline Action wait(Tensor t, Eq which, std::uint8_t ring = 0) {
  Action a{Op::wait, t, Region::none, which, false};
  a.ring = ring;
  return a;
}
inline Action commit_mma(Eq gemm) { return {Op::commit, Tensor::none, Region::none, gemm, false}; }
inline Action wait_mma(Eq gemm) { return {Op::wait, Tensor::none, Region::none, gemm, false}; }

/// a issued by role r (and, for deferred, one visited step later).
inline Action by(Role r, Action a, bool deferred = false) {
  a.role = r;
  a.deferred = deferred;
  return a;
}

constexpr Loop grid(Dim d) { return {d, true, Order::ascending}; }
constexpr Loop seq(Dim d) { return {d, false, Order::ascending}; }
constexpr Loop seq_down(Dim d) { return {d, false, Order::descending}; }

inline Launch launch(std::string name, std::vector<Loop> loops) {
  Launch l;
  l.name = std::move(name);
  l.loops = std::move(loops);
  return l;
}

}  // namespace flashlab::schedule_words
