// l2_queue.hpp — one SM's port to the L2 as the V3 timeline's TMA loads use it (v3_timeline.cpp lay_v3).
// Private to sim/src/time.
#pragma once

#include <algorithm>

#include "flashlab/config/gpu_spec.hpp"

namespace flashlab::time_detail {

/// The L2 queue of one SM's TMA loads: each transfer moves at what one SM's bulk copies take in alone
/// (GpuSpec::tma_sm_bytes_per_s, scripts/gpu/tma_per_sm.cu: 186 GB/s, 3.2x its share), while the SM's
/// draw over time is held to its 1/SMs share of the L2's bandwidth (every SM loading its own bytes by
/// TMA draws the L2's ceiling, tests/data/gpu_ceilings/h100_tma_per_sm.json) by a token bucket as deep
/// as the stage ring (the bytes the SM can have asked for ahead of its use). A copy lands lay_v3's
/// `latency_s` after its transfer ends (round_trips.hpp tma_round_trip: a lone copy's round trip, no
/// queueing term: this queue holds it).
class L2Queue {
 public:
  L2Queue(const GpuSpec& g, double ring_bytes)
      : share_(g.l2_bytes_per_s.value() / double(g.sms)), port_(std::max(share_, g.tma_sm_bytes_per_s.value())),
        burst_s_(ring_bytes / share_) {}
  /// The end of a transfer of `bytes` that starts at `start` (seconds): at the port's rate, and no
  /// earlier than the share-rate pipe would finish all bytes asked so far, less the bucket's depth.
  double transfer(double start, double bytes) {
    share_end_ = std::max(share_end_, start) + bytes / share_;
    return std::max(start + bytes / port_, share_end_ - burst_s_);
  }

 private:
  double share_, port_, burst_s_;
  double share_end_ = 0;  // when the share-rate pipe would finish what was asked so far
};

}  // namespace flashlab::time_detail
