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

/// The turnaround of V3's K/V stage ring, measured with one stage, seconds: from the last consumer's
/// release of a stage to the next block's landing (the producer's wake, V_j's and K_j+1's copies, the
/// consumer's wake). scripts/gpu/ring_per_sm.cu on an H100 (tests/data/gpu_ceilings/h100_ring_per_sm.json,
/// 2026-12-06; the GH100 die of the h200 preset): every SM reading its own lines, the d 128 shape (two
/// warpgroups, two 32 KiB copies a step), the step less the pipe's spun GEMMs: 1,727.95 ns - 2 x 1,027
/// cycles at 1.98 GHz = 690.6 ns. The other modes and the d 64 shape (two 16 KiB copies) give 673-728
/// ns: the copies' bytes barely move it, where a lone copy's figures give 554 and 378 ns.
inline constexpr double kRingTurnaround_s = 690.6e-9;

/// What the ring's turnaround takes beyond a lone copy's figures (GpuSpec::tma_round_trip_s, and the
/// step's K and V copies, `step_bytes`, at GpuSpec::tma_sm_bytes_per_s), seconds, at least 0: the
/// warps' wakes at the mbarriers and whatever else the lone copy leaves out. The V3 timeline adds it
/// to its copies' round trip (timeline.cpp), as it adds lockstep_fill_s.
double ring_wake_s(const GpuSpec& g, double step_bytes);

}  // namespace flashlab::time_detail
