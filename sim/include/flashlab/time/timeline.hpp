// timeline.hpp — one SM's thread blocks, event by event (issue 27 item 2; docs/model.md "Timeline,
// event by event"). The time model's rates and per-step work (time_model.hpp, sim/src/time/v3_work.hpp)
// laid out in time on one SM:
//  - agents: in-order issue streams. V3 (FA3's Hopper forward, warp roles): the producer warp
//    (kAgentProducer, contract/event.hpp) and each consumer warpgroup k (kAgentConsumer + k); without
//    warp specialization consumer warpgroup 0 issues the loads in its own stream (FA3 §3.1). Standard
//    attention, V1, V2 (kAgentBlock): each thread block sharing the SM is one stream, each of its
//    steps one interval of step_time's duration (the analytic rule inside a step), so their timeline
//    lays out the same model as predict_time.
//  - units: shared FIFO queues at 1/SMs of the GPU preset's rates (GpuSpec): tensor (V3: wgmma at
//    GpuSpec::wgmma_flops), sfu (MUFU ex2 at ex2_per_s), issue (the warp schedulers, which hold the
//    FP32 pipe's time), smem (the operands wgmma reads from shared memory), l2 (TMA loads and stores at
//    the SM's share of the L2 bandwidth; each load lands one measured round trip after its transfer
//    starts: GpuSpec's L2-hit / DRAM latency mixed as the time model does).
//  - V3 per tile (i, j) per consumer warpgroup (FA3 Alg. 1 consumer branch, Alg. 2 with intra-warpgroup
//    overlap, §3.1 ping-pong, §3.2): wait K_j full -> GEMM0 S = Q_i K_j^T (tensor) -> wait-mma ->
//    softmax (sfu + issue) -> [intra-overlap: GEMM1 of block j-1 issued right after GEMM0 of j] ->
//    wait V_j full -> GEMM1 O_i += P V_j (tensor) -> empty arrive (the stage released). Producer
//    (Alg. 1 producer branch): wait stage empty -> TMA load -> full arrive. Ping-pong: named barriers
//    order warpgroup k's GEMMs after warpgroup k-1's. The persistent scheduler's thread block walks its
//    dealt tiles (time_model.cpp's deal, static or longest-first), the ring's stages carrying over.
// Times are seconds from the SM's start (0 = the launch's first instruction); the launch overhead and
// the DRAM bound of predict_time are not in the timeline.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "flashlab/config/config.hpp"
#include "flashlab/schedule/schedule.hpp"
#include "flashlab/time/time_model.hpp"

namespace flashlab {

/// What a lane shows: an agent's issue stream, or one of the SM's units.
enum class LaneKind : std::uint8_t { agent = 0, unit };

/// One row of the timeline.
struct TimelineLane {
  LaneKind kind = LaneKind::agent;
  std::string name;              // "producer", "consumer 0", "block 1", or the unit's to_string(HwUnit)
  std::uint8_t agent = 0;        // kind == agent: kAgentBlock, kAgentProducer, kAgentConsumer + k
  std::int32_t block = 0;        // kind == agent: which of the SM's resident thread blocks (0-based)
  HwUnit unit = HwUnit::tensor;  // kind == unit: tensor, sfu, issue, smem or l2
};

/// What an interval is. Work: gemm0 (S = Q_i K_j^T), softmax, gemm1 (O_i += P V_j), the loads of
/// Q_i, K_j, V_j and the store of O_i (and L_i), step (a V1/V2/standard step as one interval). Waits
/// (agent lanes only): for a stage's full mbarrier (its load), for a stage's empty mbarrier (the
/// consumers' release), for a named barrier (ping-pong), for an issued wgmma group (wgmma.wait_group).
enum class Phase : std::uint8_t {
  gemm0 = 0, softmax, gemm1, load_q, load_k, load_v, store_o, wait_full, wait_empty, wait_barrier, wait_mma, step
};
inline constexpr int kPhaseCount = 12;
std::string_view to_string(Phase ph);  // "gemm0", "softmax", "gemm1", "load Q", "load K", "load V",
                                       // "store O", "wait-full", "wait-empty", "wait-barrier",
                                       // "wait-mma", "step"

/// One busy or waiting interval on one lane, seconds.
struct TimelineInterval {
  double start_s = 0, end_s = 0;
  std::int32_t lane = 0;      // index into Timeline::lanes
  Phase what = Phase::step;
  std::int64_t i = -1, j = -1;  // the tile (Q block i, K/V block j); -1 where none
  std::int64_t bh = -1;         // the (batch, head) of the tile, -1 where none
  char tensor = 0;              // V3: the tensor a load, store or wait is for, 'Q', 'K', 'V' or 'O'; 0 where none
};
/// iv.tensor as the CSV and JSON write it: "Q", "K", "V", "O", or "" where none.
inline std::string tensor_name(const TimelineInterval& iv) { return iv.tensor ? std::string(1, iv.tensor) : std::string(); }

/// The K/V stage ring's occupancy (V3): from t_s on, `full` of its 2 x `stages` buffers (a K_j and a V_j
/// per stage, each with its own full and empty mbarrier) hold a block the consumers have not released
/// (a buffer counts from its load's issue to the last consumer warpgroup's empty arrive): 0 to 2 stages.
struct RingSample {
  double t_s = 0;
  std::int32_t full = 0;
};

/// A unit's time split: its busy fraction and its idle time by cause, fractions of Timeline::time_s
/// that sum to 1 with it.
struct IdleCause {
  std::string cause;  // e.g. "waiting for consumer 1's softmax", "waiting for K_j's load", "tail: no work"
  double fraction = 0;
};
struct UnitUse {
  HwUnit unit = HwUnit::tensor;
  std::int32_t lane = 0;   // its lane in Timeline::lanes
  double busy = 0;         // fraction of time_s it works
  std::vector<IdleCause> idle;  // largest first
};

/// One part of the critical path (the chain of intervals that ends last, walked back through what each
/// waited for): what kind of work or wait, and its seconds on the path.
struct CriticalPart {
  std::string what;  // a Phase's name ("gemm0", "wait-full", ...)
  double seconds = 0;
  double fraction = 0;  // of time_s
};

struct TimelineOptions {
  std::int64_t sm = -1;                  // which SM (0 .. SMs - 1); -1: the busiest (latest finish)
  std::size_t max_intervals = 200'000;   // intervals kept (the simulation runs to the end regardless;
                                         // Timeline::truncated says when some were left out)
};

struct Timeline {
  std::int64_t sm = 0;                   // the SM laid out
  bool v3 = false;                       // warp roles (event by event) or steps (standard, V1, V2)
  std::vector<TimelineLane> lanes;       // agents first, then units
  std::vector<TimelineInterval> intervals;  // by lane, each lane's in time order
  std::vector<RingSample> ring;          // V3: the stage ring's occupancy; empty otherwise
  std::int32_t stages = 0;               // V3: the ring's stages
  double time_s = 0;                     // the SM's last interval's end
  double analytic_s = 0;                 // the same SM's (thread blocks') time by predict_time's rule
                                         // (time_model.hpp; the busiest SM: LaunchTime::blocks_s)
  std::int64_t tiles = 0;                // tiles (thread blocks' Q blocks) the SM runs
  std::vector<UnitUse> units;            // tensor, sfu, issue, smem, l2
  std::vector<CriticalPart> critical_path;  // largest first, summing to time_s
  bool truncated = false;                // intervals past max_intervals were left out
  std::string note;                      // what was left out or approximated, one line; empty if nothing
};

/// The most thread blocks (batch x heads x blocks per (batch, head)) in the launch a timeline lays out:
/// the deal behind it keeps each block's slot. Larger launches: count's time, which has no such bound.
inline constexpr std::int64_t kTimelineMaxBlocks = std::int64_t(1) << 24;

/// One SM's timeline of schedule s on problem p (the first launch with tiles; V3: its forward launch).
/// Bad options (sm outside 0 .. SMs - 1) and a launch of more than kTimelineMaxBlocks thread blocks throw
/// ConfigError (a std::invalid_argument: contract/error.hpp) naming the field, value and allowed range. Sources: FA3 (arXiv 2407.08608) §3.1 (warp specialization, ping-pong), §3.2 and Algorithm 2
/// (intra-warpgroup overlap), Algorithm 1 (producer / consumer); the rates: config/gpu_spec.hpp.
Timeline timeline(const Problem& p, const Schedule& s, const TimelineOptions& o = {});

}  // namespace flashlab
