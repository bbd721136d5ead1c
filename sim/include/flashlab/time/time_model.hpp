// time_model.hpp — predicted time of a schedule on a GPU preset: a consumer of the walk's work per
// step and of the L2 model's DRAM bytes (docs/model.md "Time model"). One set of rules for every
// launch of every schedule (standard, V1, V2, the variants, backward, split-KV, --kernel fa2): no
// per-kernel, per-family or per-library factor.
//
// The walk records, per step of a thread block, its work on each unit of the SM (StepWork): the
// tensor cores (matmul FLOPs), the special-function unit (exp, log, the reciprocal of a division),
// FP32 (the other non-matmul operations and the warp model's extra ones), shared memory (128-byte
// wavefronts of the warps' matmul operand reads, tiles staged in SRAM for their stores, split-K's
// reductions; bank conflicts and narrow accesses where a kernel has them: smem_wavefronts.hpp in
// sim/src/time; cp.async's fills are not on that pipe), the L2 (the step's loads and
// stores), barriers and instruction issue (4 schedulers, one warp-instruction per cycle each: a tile
// step of a compiled kernel issues its tile loop's instructions as its SASS has them, per warp,
// tests/data/gpu_time/sass_loops.json; any other step an estimate from its work: a warp-instruction
// per 32 lane operations, per HMMA of 4,096 FLOPs and per 512 bytes of shared-memory operands), each
// at the SM's share of the preset's rates (config/gpu_spec.hpp: measured on the H200, datasheet
// figures for the others). step_time turns that work into time by three rules (TimeParams):
//  - overlap: k thread blocks share an SM (occupancy, at most the grid spread over the SMs), each of
//    W warps. Blocks are independent instruction streams (no barrier joins them); the warps of one
//    block are joined at each step's barriers. With s = k + beta (W/4 - 1) streams per SM (the k
//    blocks, and beta for each extra warp per scheduler of a block: in its block's phase, it adds to
//    the SM, not to each block) a step takes k (t_max + rho (sum t_u - t_max)), rho = min(1, c / s):
//    units overlap as far as independent streams are in different phases. A row launch (one 4-warp
//    block per query row: standard attention's softmax) does not overlap its units within a block
//    (its phases are between barriers): a block's step takes at least their sum. Prefetched loads' L2 transfer
//    is not among the summed units: it bounds the step (below).
//  - the latency floor: a step takes at least one warp's instructions times iota cycles (the issue
//    interval of a warp running alone, its dependences unhidden), however few blocks share the SM.
//  - memory latency (Little's law: a block's loads in flight return after one round trip plus their
//    transfer at the SM's share of the L2 bandwidth: together a step's wait). The round trip is
//    measured, not fitted: an L2 hit's latency, or a DRAM access's for the launch's share of loads
//    that miss the L2 (the L2 model's DRAM reads over its read requests; scripts/gpu/latency.cu,
//    config/gpu_spec.hpp), plus lambda times the launch's L2 load (the share of its time without
//    lambda that its L2 traffic keeps the L2 busy): the queueing of a loaded memory system.
//    A step with loads lasts at least its wait (its loads, prefetched during the previous step,
//    arrive no sooner); a step that cannot prefetch its loads — they start the block (a prologue,
//    the outer loop's begin: Q_i, or V1's K_j, V_j), or read what its own launch stores (V1's
//    backward dQ_i) — waits it out: max(k w, max(w, floor) + wait) for its work w alone on the SM
//    (less what the block does while the loads are in flight, trip_hidden_s: standard attention's
//    S = QK^T kernel stores S_ij after issuing K_{j+1}), with trips round trips in the wait where its
//    loads take several one after another (a row block's one per 2 KiB of its row: one 16-byte load
//    per thread in flight; a row pass's streamed operands, streams() in time_model.cpp, one per
//    threads x 16 bytes after the tile copy's one; split-KV's combine, its walks over the splits as
//    each kernel's code does: walk_trips() and lse_walk_trips() in round_trips.cpp). V1's forward
//    reads O_i, l_i, m_i, which its launch stored, at the step's start (early_trip): their wait
//    overlaps the step's work and their transfer moves through the L2 as a prefetched load's does.
//  - the launch: a thread block's time is the sum of its steps; the blocks are dealt, in dispatch
//    order, to the first free of the SMs * k slots (wave quantization, uneven causal rows, idle SMs
//    when the grid is small); the launch takes the latest finish, at least its DRAM bytes over the
//    DRAM bandwidth, plus the launch overhead.
// V3 (FA3's Hopper forward, warp roles) goes through the same rules with its steps costed as its
// kernel does them (sim/src/time/v3_work.hpp, docs/model.md "Time model", V3): the tensor cores at
// wgmma's measured rate (GpuSpec::wgmma_flops), the operands wgmma reads from shared memory once
// per warpgroup per GEMM, one ex2 per score element, the softmax's instructions estimated from the
// kernel's source, the producer's TMA loads prefetched through the `stages`-deep ring (one round
// trip shared by the loads in flight), the consumer warpgroups as the overlap rule's streams
// (StepWork::groups: independent with ping-pong, 1.5 each with intra-warpgroup overlap), and the
// persistent scheduler's 132 thread blocks walking their tiles (the launch: the busiest block).
// c, beta, lambda, iota and phi are fitted on the training rows of the committed H200 data set
// (tests/data/gpu_time/h200.json) by tools/fit_time_model (kFittedTimeParams); the CI test
// tests/sim/time/time_dataset_test.cpp scores the model on the held-out half and checks that they
// are the fit's fixed point (one round of its search from them moves none: tools/time_fit search_round).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "flashlab/config/config.hpp"
#include "flashlab/executor/counters.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/memory/occupancy.hpp"
#include "flashlab/schedule/schedule.hpp"

namespace flashlab {

/// The hardware units of the time model: pipes, memories and overheads whose time it adds up (not a
/// unit of measure: that is report/metrics.hpp's Unit).
/// issue: the warp schedulers' instruction issue (one warp-instruction per cycle each), which holds
/// the FP32 pipe's time (the same rate): fp32 is reported but not counted beside it.
enum class HwUnit : std::uint8_t { tensor = 0, sfu, fp32, smem, barrier, l2, issue, latency, dram, launch };
inline constexpr int kHwUnitCount = 10;
std::string_view to_string(HwUnit u);  // "tensor", "sfu", "fp32", "smem", "barrier", "l2", "issue", "latency", "dram", "launch"

/// The fitted constants of the rules above (docs/model.md "Time model").
struct TimeParams {
  double overlap = 0;        // c: rho = min(1, c / streams)
  double warp_stream = 0;    // beta: streams an SM gains per extra warp per scheduler of its blocks
                             // (one block's or k's alike: s = k + beta (W/4 - 1))
  double latency_s = 0;      // lambda: added to each measured round trip (L2 hit or DRAM) at a fully
                             // loaded L2, in proportion to the launch's load, seconds
  double phase_floor = 0;    // phi: rho at least phi for a split-K tile step, whose warps meet at two
                             // barriers per step to sum their partial rows and P V through SRAM
                             // (kernels/src/common/row_tile.cuh tile_step): the blocks sharing the SM
                             // hide at most 1 - phi of its units' time beside the busiest one's
  double issue_interval = 0; // iota: cycles between two instructions of one warp that runs alone
                             // (its dependent-issue latency: a step takes at least its warp's
                             // instructions times iota, however few blocks share the SM)
};
/// The values tools/fit_time_model derives from the training rows of tests/data/gpu_time/h200.json.
extern const TimeParams kFittedTimeParams;

/// How the warps of a backward thread block split one tile (i, j): what the shared-memory operand
/// reads of its matmuls depend on (sim/src/time/smem_wavefronts.cpp grad_operand_bytes).
struct GradLayout {
  std::int64_t s_rows = 1;    // warps along the B_r rows of S_ij and dP_ij (the rest along the keys)
  std::int64_t q_chunk = 0;   // queries per pass of S^T: a warp's keys of K_j, V_j are read once per pass
  std::int64_t kv_rows = 1;   // warps along the B_c keys of dK_j, dV_j (the rest along d)
  std::int64_t dq_rows = 1;   // warps along the B_r rows of dQ_i (the rest along d)
  bool p_in_sram = false;     // dV_j and dK_j read P_ij^T and dS_ij^T from SRAM (else: registers)
};
/// The layout of p's backward kernel: --kernel fa2, FA2's Flash_bwd_kernel_traits (AtomLayoutMSdP,
/// AtomLayoutNdKV = 4, AtomLayoutMdQ = AtomLayoutMSdP, P and dS in SRAM: the launch names PyTorch 2.11
/// runs, tests/data/gpu_time/h200.json); else this project's kernels: V2's kernels/src/common/grad_grid.cuh
/// GridShape (B_c / 32 groups of 32 keys, P^T and dS^T in SRAM), V1's grad_tile.cuh GradShape (16 keys
/// per warp, S^T in chunks of queries); dQ_i on a grid of 32- or 16-row groups
/// (tests/kernels/grad_layout_test.cpp checks that the model and the kernels agree for every compiled backward tile).
GradLayout grad_layout(const Problem& p);

/// The work of one step of one thread block, as the walk records it (the input of step_time).
struct StepWork {
  std::array<double, kHwUnitCount> unit{};  // seconds of each unit at the SM's share of the ceilings
  double sharing = 1;      // k: blocks sharing the SM
  double warps = 4;        // W: warps per block
  bool no_overlap = false; // a row launch: rho = 1
  bool split_k = false;    // a split-K tile step (rho at least TimeParams::phase_floor)
  bool loads = false;      // the step loads from global memory
  bool round_trip = false; // it waits for its loads: they start the block (prologue, outer begin), or
                           // read a tensor its own launch stores (no prefetch possible)
  bool early_trip = false; // its only waited-for loads are a forward tile's reads of what its launch
                           // stored (V1's O_i, l_i, m_i), issued at the step's start: their round
                           // trip overlaps the step's work (kernels/src/common/row_tile.cuh read_rows)
  double trips = 1;        // round trips its loads take in sequence: a row block's per 2 KiB of its
                           // row; a row pass's streamed loads (streams()) after the tile copy's one
  bool issue_from_sass = false;  // the issue unit counts the compiled kernel's tile loop (else estimated)
  double warp_issue_s = 0; // one warp's instructions in the step at one per cycle (seconds): the
                           // latency floor is iota times this
  double load_s = 0;       // the step's loads at the SM's share of the L2 bandwidth (their transfer)
  double trip_hidden_s = 0;  // the block's work done while its next loads are in flight (standard
                            // attention's S = QK^T kernel stores S_ij after issuing K_{j+1}): it hides
                            // that much of a round-trip step's wait
  // V3 (warp roles): the consumer warpgroups are the overlap rule's streams instead of the block's
  // warps: per block groups_apart ? groups : 1 + beta (groups - 1), times group_streams
  // (sim/src/time/v3_work.hpp v3_step). groups = 0: any other schedule.
  double groups = 0;          // consumer warpgroups (B_r / 64)
  bool groups_apart = false;  // ping-pong: the warpgroups in different phases, independent streams
  double group_streams = 1;   // streams per warpgroup: 1.5 with intra-warpgroup overlap
  double chain_s = 0;         // one consumer warpgroup's round: its wait for its GEMMs, then a warp's
                              // instructions at the measured pace (v3_work.hpp v3_step); a floor of
                              // the step (0: none)
};

/// How one step's time splits (step_time).
struct StepTime {
  double time = 0;
  std::array<double, kHwUnitCount> unit{};   // per-SM unit times of the step
  std::array<double, kHwUnitCount> share{};  // how `time` splits among the units
};
StepTime step_time(const StepWork& w, const TimeParams& params);

/// Predicted time of one launch.
struct LaunchTime {
  std::string name;
  double time_s = 0;                      // predicted, launch overhead included
  double blocks_s = 0;                    // the latest thread block's finish (the SMs' part)
  std::array<double, kHwUnitCount> unit_s{};  // time each unit would take alone with every SM busy
  /// Each unit's share of the thread blocks' time (the steps' time split among the units that
  /// set it), summing to 1 over tensor..latency (dram and launch 0).
  std::array<double, kHwUnitCount> share{};
  HwUnit bound = HwUnit::tensor;          // the unit that sets the time (largest share or a bound)
  Occupancy occupancy;
  std::int64_t grid = 0, waves = 0;       // thread blocks; ceil(grid / slots)
  std::int64_t sharing = 1;               // k: blocks sharing an SM (occupancy, grid / SMs)
  double sm_busy = 0;                     // fraction of the SMs' time doing work: idle SMs (a grid
                                          // smaller than the GPU) and tails count as idle
  bool issue_from_sass = false;           // its tile steps' instructions are the compiled kernel's (SASS)
  std::uint64_t dram_read_bytes = 0, dram_write_bytes = 0;
};

/// Predicted time of a whole schedule.
struct TimePrediction {
  double time_s = 0;
  double tflops = 0;             // matmul FLOPs / time
  double peak_fraction = 0;      // tflops over the rate of its dtype (GpuSpec: mma.sync, measured on the h200;
                                 // wgmma's for a schedule with warp roles, V3)
  bool wgmma = false;            // peak_fraction is over wgmma's rate (V3), else mma.sync's
  HwUnit bound = HwUnit::tensor;  // the bound of the launch that takes longest
  std::uint64_t dram_read_bytes = 0, dram_write_bytes = 0;
  std::vector<LaunchTime> launches;
  bool measured = false;         // timed at rates measured on the device (GpuSpec::measured), else datasheet ones
  std::string_view rates_source;  // where those rates come from (GpuSpec::rates_source, a static string)
};

class BlockTimer;
namespace time_detail {
struct LaunchBlocks;  // sim/src/time/launch_blocks.hpp: a launch's blocks for the timeline (timeline.hpp)
LaunchBlocks launch_blocks(const Problem&, const Schedule&, const BlockTimer&, const Counters&, std::size_t,
                           const TimeParams&);
}  // namespace time_detail

/// An observer of the walk: the time of each thread block of each launch, one (batch, head).
class BlockTimer : public StepObserver {
 public:
  BlockTimer(const Problem& p, const Schedule& s);
  void on_step(const StepView& s) override;

 private:
  friend TimePrediction predict_time(const Problem&, const Schedule&, const BlockTimer&, const Counters&,
                                     const TimeParams&);
  friend time_detail::LaunchBlocks time_detail::launch_blocks(const Problem&, const Schedule&, const BlockTimer&,
                                                              const Counters&, std::size_t, const TimeParams&);
  StepWork step_work(const StepView& s, std::size_t launch, double fraction) const;
  int work_id(const StepView& s);
  void add(std::size_t launch, std::size_t block, int id, double count);

  Problem p_;
  const Schedule* s_;
  std::vector<Occupancy> occ_;
  std::vector<std::int64_t> sharing_;
  std::vector<bool> walks_tiles_;                                      // [launch] has tile loops
  std::vector<bool> roles_;                                            // [launch] has warp roles (V3)
  std::vector<std::vector<StepWork>> works_;                           // [launch] distinct step works
  std::vector<std::vector<std::vector<std::pair<int, double>>>> block_steps_;  // [launch][block] (work, count)
  using Key = std::tuple<std::uint16_t, int, std::int64_t, std::int64_t, int, const void*>;
  std::map<Key, int> ids_;
  Key last_key_{};
  int last_id_ = -1;
};

/// The prediction from a finished walk: `b` observed it, `k` its counters (with the L2 model:
/// Counters::l2; without it the DRAM bound is left out). The walk is not repeated for other
/// `params` (tools/fit_time_model evaluates many on one walk).
TimePrediction predict_time(const Problem& p, const Schedule& s, const BlockTimer& b, const Counters& k,
                            const TimeParams& params = kFittedTimeParams);

/// Counters (sectors and L2 model on) and predicted time of schedule `s` on problem p; `also`,
/// when given, observes the same walk (a progress bar, the warp counter).
/// Every schedule is timed, V3 (warp roles, schedule.hpp has_warp_roles) included since issue 27
/// item 2: its steps by the rules above, costed as its kernel does them (sim/src/time/v3_work.hpp).
struct Modelled {
  Counters counters;
  TimePrediction time;
  bool timed = true;  // always true (the reports still read it)
};
Modelled model(const Problem& p, const Schedule& s, StepObserver* also = nullptr);
/// The same for the schedule p runs (make_schedule(p): its algorithm and switches).
Modelled model(const Problem& p, StepObserver* also = nullptr);

}  // namespace flashlab
