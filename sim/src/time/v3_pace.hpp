// v3_pace.hpp — the pace of a V3 consumer warpgroup's instruction stream in the timeline: a warp's
// compiled instructions at a number of cycles each that grows with the other warps executing beside it
// on its SMSP, measured by PC sampling (docs/model.md "Where the consumer warps' time goes"). Private to
// sim/src/time.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "flashlab/config/config.hpp"
#include "timeline_detail.hpp"

namespace flashlab::time_detail {

/// Cycles per compiled instruction of a consumer warp executing its K/V step (the softmax and the
/// loop's bookkeeping, not its wgmma waits) = kPaceBase + kPacePerOther x the other consumer warps of
/// its SMSP executing beside it: the least-squares line of tests/data/gpu_v3/v3_pace_h100.json
/// (scripts/gpu/v3_kernel/stalls_table.py over ncu_stalls.py's PC samples of the staged kernel on an
/// H100: fa3 at d 128, one stage, no intra-warpgroup overlap at d 128 and 64; fa3 at d 64, a held-out
/// shape of the V3 time test, left out; within 6% of each profiled variant, no warp specialization
/// with all the others beside it included). Cycles of the clock the SM keeps under wgmma's load.
inline constexpr double kPaceBase = 2.729;
inline constexpr double kPacePerOther = 1.182;
/// Compiled instructions of a consumer warp's full K/V step per instruction V3StepWork estimates
/// (tests/data/gpu_v3/v3_sass_steps.json: 679 / 505 at d 128, 472 / 358 at d 64; without warp
/// specialization warpgroup 0's in-line loads too, 799 / 505 and 571 / 358).
inline constexpr double kCompiledPerEstimate = 1.33;
inline constexpr double kCompiledPerEstimateInline = 1.58;

/// Seconds a consumer warp takes per instruction V3StepWork estimates (its compiled ones at the pace
/// above, at the clock under wgmma's load), with `others` consumer warps executing beside it.
double pace_s(const Problem& p, double others);

/// The consumer warpgroups' instruction streams executing at once (a softmax, an epilogue's finalize),
/// each at the pace above with the others executing beside it at that moment: while n execute, each
/// runs one estimated instruction per pace_s(p, n - 1) seconds. Work in estimated instructions of one
/// warp (V3StepWork::warp_instructions), times in seconds. The timeline's engine (v3_timeline.cpp)
/// runs it in time order: a stream's end is final once nothing else starts before it.
class PacedStreams {
 public:
  explicit PacedStreams(const Problem& p) : p_(p) {}
  /// Starts stream `tag` (one per agent at a time) of `instructions`, at the time last advanced to.
  void add(int tag, double instructions);
  /// The time stream `tag` would end if no other started (it must be running).
  double tentative(int tag) const;
  /// Runs the streams to time t; the ones that end by then go to `done` (tag, end).
  void advance(double t);
  /// Runs the streams until `tag` has ended (with none started meanwhile).
  void finish(int tag);
  double now() const { return t_; }
  std::vector<std::pair<int, double>> done;

 private:
  // runs to time t or to the next end, whichever is first; the tag that ended (-1 if none), its time
  int step(std::vector<std::pair<int, double>>& jobs, double& t_now, double t) const;
  const Problem& p_;
  std::vector<std::pair<int, double>> jobs_;  // (tag, instructions left)
  double t_ = 0;
};

/// lay_v3 with each softmax and finalize lasting its warps' compiled instructions at the pace above,
/// with the other consumer warpgroups executing beside it at each moment (PacedStreams). Until
/// 2026-12-06 the pace took one count for the whole layout, the time-averaged count of the others in
/// a softmax during each softmax of the layout before, laid out nine times.
Laid lay_v3_paced(const Problem& p, bool persistent, const V3Tiles& tiles,
                  const std::vector<std::pair<std::int64_t, std::int64_t>>& blocks, double latency_s);

}  // namespace flashlab::time_detail
