// round_trips.hpp — how many memory round trips one step of a launch waits for, one after another, and how long one lasts
// (the time model's wait, time_model.hpp "memory latency"): a row launch's, a row pass's streamed
// operands, split-KV's combine walking the splits. Private to sim/src/time.
#pragma once

#include <cstdint>

#include "flashlab/config/config.hpp"
#include "flashlab/executor/counters.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/schedule/schedule.hpp"
#include "flashlab/time/time_model.hpp"

namespace flashlab::time_detail {

/// Round trips of 2 KiB (one 16-byte load per thread of a 128-thread block in flight: `#pragma
/// unroll 1` in kernels/src/standard.cu load_row) a row block waits for: its loaded rows at the
/// input type.
double row_round_trips(const Problem& p, const Launch& l);

/// Whether launch l stores tensor x to global memory (a load of x then depends on the launch's own
/// earlier store: V1's O_i, l_i, m_i, V1's backward dQ_i).
bool stores(const Launch& l, Tensor x);

/// Round trips of step s's loads when a row pass streams some of them; 0 when nothing streams
/// (round_trips.cpp). `fraction`: the block's share of the step.
double streamed_load_trips(const Problem& p, const Launch& l, const StepView& s, double fraction);

/// `params` with launch x's round trip (TimeParams::latency_s, seconds): an L2 hit, or a DRAM access
/// for the launch's share of loads that miss (the L2 model's DRAM reads over its read requests; both
/// latencies measured, config/gpu_spec.hpp), plus the fitted lambda times the launch's `load` (0 to
/// 1). Without the L2 model (k.l2 unset), lambda times the load alone.
TimeParams with_round_trip(const TimeParams& params, const GpuSpec& g, const Counters& k, std::size_t x, double load);

/// One bulk copy's (TMA's) round trip in launch x, seconds: the measured one-SM figure (a 1 KiB copy
/// alone, GpuSpec::tma_round_trip_s) plus DRAM's extra latency over an L2 hit's for the launch's share
/// of loads that miss (as with_round_trip's). No lambda: where the copy queues for the L2 (the V3
/// timeline's L2 queue, v3_timeline.cpp) the queue holds the load's wait.
double tma_round_trip(const GpuSpec& g, const Counters& k, std::size_t x);

}  // namespace flashlab::time_detail
