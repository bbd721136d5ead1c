// v3_work.hpp — the time model's work of one V3 step (FA3's Hopper forward, --algo v3) as its kernel
// does it (scripts/gpu/v3_kernel/v3_forward.cuh): wgmma GEMMs at wgmma's rate, the operands the
// tensor core reads from shared memory, one ex2 per score element, the consumer warpgroups'
// softmax instructions, the producer's TMA loads through the K/V stage ring, and the streams the
// overlap rule sees. docs/model.md "Time model", "V3". Private to sim/src/time.
#pragma once

#include "flashlab/config/config.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/schedule/schedule.hpp"
#include "flashlab/time/time_model.hpp"

namespace flashlab::time_detail {

/// What one V3 step does on the SM, one (batch, head)'s thread block (units in the names).
/// An inner step (tile (i, j)): both GEMMs of the tile (GEMM1 counted at its tile, as the walk
/// counts it, also where intra-warpgroup overlap issues it a step later), each wgmma on the whole
/// B_r x B_c tile (the copy engine zero-fills ragged rows and columns; the kernel computes them);
/// the softmax of the tile as v3_forward.cuh's `softmax`, `rescale_o` and `convert_p` do it, per
/// score element: FMNMX (row max), FFMA (scale and subtract), MUFU.EX2, FADD (row sum), half an
/// F2FP (two per pack), and four integer/select instructions where the tile needs its mask (a
/// causal diagonal tile or ragged columns); per O element one FMUL (the rescale); per thread two
/// ex2 for its rows' correction; per warp an estimate of 24 instructions for the shuffles, the
/// row statistics, fences, commits and waits; per warpgroup d/16 + B_c/16 wgmma instructions,
/// issued by each of its 4 warps. No SASS was read (cuobjdump is not installed here): the mix is
/// estimated from the source.
/// An outer begin or end (Q_i's load and the init; the finalize and the stores of O_i, L_i): the
/// walk's operations of the step, one lane each.
struct V3StepWork {
  double flops = 0;              // matmul FLOPs on the tensor cores (wgmma)
  double ex2 = 0;                // special-function results (ex2, and an outer end's log and 1/l)
  double fp32 = 0;               // FP32-pipe lane operations
  double instructions = 0;       // warp-instructions of all consumer warps
  double warp_instructions = 0;  // those of one consumer warp
  double smem_bytes = 0;         // shared-memory bytes the tensor cores read (P's store and read
                                 // where P is in SRAM); TMA's fills are not on that pipe
  double barriers = 0;           // named-barrier syncs (ping-pong: one per step)
  // the split the timeline needs (timeline.cpp): GEMM0's part of flops and smem_bytes (the rest GEMM1's)
  double gemm0_flops = 0;        // S = Q_i K_j^T, the whole tile
  double gemm0_smem_bytes = 0;   // its operand reads: each warpgroup's 64 rows of Q_i and all of K_j
};
V3StepWork v3_step_work(const Problem& p, const Launch& l, const StepView& s);

/// The whole StepWork of V3's step s of launch l (time_model.cpp BlockTimer::step_work for a schedule
/// with warp roles), `sharing` thread blocks per SM. Streams for the overlap rule (StepWork::groups):
/// each consumer warpgroup is one in-order stream; with ping-pong its named barriers put the
/// warpgroups in different phases (one's GEMMs under another's softmax): B_r / 64 independent
/// streams, as thread blocks are; without ping-pong they are the warps of one block, joined at the
/// ring's barriers (1 + beta (B_r / 64 - 1)); without warp specialization warpgroup 0, which issues the
/// loads in line and waits at each stage's empty barrier for the others, counts no stream of its own
/// (v3_work.cpp phased_groups: 1 + beta (B_r / 64 - 2), at least 1). With intra-warpgroup overlap each warpgroup counts
/// 1 + GEMM1's share of the tile's wgmma FLOPs, one half (both GEMMs take 2 B_r B_c d), GEMM1 issued
/// a step later beside the next GEMM0. (The compiled loop waits for both before the softmax, docs/model.md
/// "The compiled order"; counting one stream there put the held-out V3 time 27% off, so the rule keeps
/// its count, and consumer_round waits for both.) The producer warp issues no work of the SM's units and counts none. Loads: the producer's (or, without warp
/// specialization, consumer warpgroup 0's) TMA loads of K_j, V_j run `stages` deep through the ring:
/// prefetched, their transfer at the SM's share of the L2 bandwidth bounds the step, and one round
/// trip is shared by the stages' loads in flight (trips = 1 / stages); with one stage and warp
/// specialization the ring's cycle (v3_work.cpp one_stage_cycle: V's release after the warpgroups'
/// GEMMs, then V_j's and K_j+1's round trip and transfers) is a floor of the step beside the round,
/// and under the static persistent deal the step also carries DRAM's latency in place of the L2's for
/// the share of (batch, head)s whose Q blocks all run in one round (v3_work.cpp lockstep_fill_s: their
/// SMs walk the same K/V blocks in step and wait for the same fills). Without ping-pong a warpgroup's
/// round also waits for the other warpgroups' GEMMs queued beside its own (consumer_round), and so
/// it does with one stage, whose landings start every warpgroup's turn together. Q_i's load starts a thread
/// block's tile (a round trip it waits out), except under the persistent scheduler with warp
/// specialization, where the producer loads the next tile's Q_i while the consumers finish the
/// last (v3_forward.cuh: load_q after the consumers release Q): prefetched, and only a thread
/// block's first tile waits for it (predict_time adds that round trip once per thread block).
StepWork v3_step(const Problem& p, const Launch& l, const StepView& s, double sharing);

/// The lockstep fill of V3's one-stage ring under the static persistent deal (seconds added to each
/// K/V step's path, averaged over launch l's (batch, head)s; 0 with two or more stages, without warp
/// specialization, under a mask or the grid scheduler): DRAM's latency in place of the L2's
/// (GpuSpec dram_latency_s - l2_hit_latency_s) times the share of (batch, head)s whose T_r Q blocks
/// all run in one round of the SMs. The analytic step (v3_step) and the timeline's TMA round trip
/// (timeline.cpp) both add it. docs/model.md "One stage at d 64: the SMs of a head walk its K/V blocks
/// in step"; v3_work.cpp gives the derivation and the H100 probes it was checked on.
double lockstep_fill_s(const Problem& p, const Launch& l);

}  // namespace flashlab::time_detail
