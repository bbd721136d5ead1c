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
