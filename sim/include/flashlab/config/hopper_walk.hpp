// hopper_walk.hpp — the walk from V2 to V3 one switch at a time (`flashlab explain --algo v3`,
// docs/model.md "From V2 to V3 one switch at a time"): FA2's kernel, then FA3's Hopper schedule with
// every switch off, then the switches FA3 turns on, in the order its paper builds them (FA3 §3.1: the
// producer's stage ring, warp specialization, ping-pong; §3.2: intra-warpgroup overlap), then FA3's
// persistent tile scheduler (hopper/tile_scheduler.hpp). The last step is FA3's defaults for the
// config (fa3_switches); a switch FA3 leaves off there is skipped, and the walk says why.
#pragma once

#include <string>
#include <vector>

#include "flashlab/config/config.hpp"

namespace flashlab {

/// One step: the change it adds, a short key, the algorithm (v2 for the first step, v3 after) and,
/// for v3, the Hopper switches with every change so far turned on.
struct HopperWalkStep {
  std::string what;  // "+ warp specialization (producer)"
  std::string key;   // "warp_specialize"
  Algo algo = Algo::v3;
  HopperSwitches hopper;  // algo v3 only
};

/// A switch the walk does not turn on because FA3's defaults leave it off for the config.
struct HopperWalkSkip {
  std::string key;  // "pingpong"
  std::string why;  // "one consumer warpgroup at B_r = 64: ping-pong alternates two or more"
};

struct HopperWalk {
  std::vector<HopperWalkStep> steps;
  std::vector<HopperWalkSkip> skipped;
};

/// The walk for v3, the resolved V3 problem with FA3's defaults (p.hopper = fa3_switches(d, B_r),
/// no switch given): V2; V3 with 1 stage, no warp specialization, no ping-pong, no intra-warpgroup
/// overlap, the grid scheduler; then p.hopper's stages, warp specialization, ping-pong,
/// intra-warpgroup overlap and scheduler, one at a time, each where p.hopper differs from the step
/// before (else skipped, with why). The last step's switches are p.hopper and its `what` ends in
/// "= V3 (FA3)". Requires v3.algo == Algo::v3.
HopperWalk v2_to_v3_walk(const Problem& v3);

/// c as step s runs it: algo s.algo and, for v3, each of s.hopper's switches set explicitly (so the
/// step is `flashlab count --algo v3` with those five flags); for v2 the Hopper switches unset.
Config with_hopper_step(Config c, const HopperWalkStep& s);

}  // namespace flashlab
