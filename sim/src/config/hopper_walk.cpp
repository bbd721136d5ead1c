// hopper_walk.cpp — the walk from V2 to V3 (hopper_walk.hpp).
#include "flashlab/config/hopper_walk.hpp"

#include <cassert>

#include <fmt/format.h>

namespace flashlab {

HopperWalk v2_to_v3_walk(const Problem& v3) {
  assert(v3.algo == Algo::v3);
  const HopperSwitches& fa3 = v3.hopper;
  HopperWalk w;
  w.steps.push_back({"V2 on FA2's tile (mma.sync)", "v2", Algo::v2, {}});
  // wgmma and TMA are V3's instructions whatever its switches (docs/model.md "V3"): the step from V2
  // changes them, FA3's tile and warps, and nothing else
  HopperSwitches s{.warp_specialize = false, .stages = 1, .pingpong = false, .intra_overlap = false,
                   .scheduler = TileScheduler::grid};
  w.steps.push_back({"V3 all off: wgmma + TMA, 1 stage", "v3_off", Algo::v3, s});
  // each switch set to FA3's value: a step where that changes something, else skipped
  const auto turn = [&](const std::string& what, const std::string& key, const std::string& why_not) {
    if (s == w.steps.back().hopper) w.skipped.push_back({key, why_not});
    else w.steps.push_back({what, key, Algo::v3, s});
  };
  s.stages = fa3.stages;  // FA3 §3.1: the circular buffer the producer fills ahead of the consumers
  turn(fmt::format("+ stage ring: {} K/V stages", fa3.stages), "stages", "FA3 runs one stage here");
  s.warp_specialize = fa3.warp_specialize;  // FA3 §3.1 "Producer-Consumer asynchrony"
  turn("+ warp specialization (producer)", "warp_specialize", "FA3 runs no producer warp here");
  s.pingpong = fa3.pingpong;  // FA3 §3.1 "Pingpong scheduling" (fa3_switches: UseSchedulerBarrier)
  const std::int64_t groups = v3.consumer_groups();
  turn(fmt::format("+ ping-pong of {} warpgroups", groups), "pingpong",
       groups < 2 ? fmt::format("one consumer warpgroup at B_r = {}: ping-pong alternates two or more", v3.tiling.b_r)
                  : fmt::format("FA3 turns it on at d <= 128 only (UseSchedulerBarrier), here d = {}", v3.tiling.d));
  s.intra_overlap = fa3.intra_overlap;  // FA3 §3.2, Algorithm 2
  turn("+ intra-warpgroup overlap", "intra_overlap", "FA3 runs no intra-warpgroup overlap here");
  s.scheduler = fa3.scheduler;  // hopper/tile_scheduler.hpp (not among the paper's techniques)
  turn("+ persistent scheduler", "scheduler", "FA3 runs the grid scheduler here");
  w.steps.back().what += " = V3 (FA3)";
  return w;
}

Config with_hopper_step(Config c, const HopperWalkStep& s) {
  c.algo = s.algo;
  if (s.algo != Algo::v3) {
    c.warp_specialize.reset();
    c.stages.reset();
    c.pingpong.reset();
    c.intra_overlap.reset();
    c.scheduler.reset();
    return c;
  }
  c.warp_specialize = s.hopper.warp_specialize;
  c.stages = s.hopper.stages;
  c.pingpong = s.hopper.pingpong;
  c.intra_overlap = s.hopper.intra_overlap;
  c.scheduler = s.hopper.scheduler;
  return c;
}

}  // namespace flashlab
