// v3_forward.cpp — V3, FlashAttention-3's Hopper forward, as a schedule value (schedule.hpp
// make_v3_schedule; docs/model.md "V3"). FA3 keeps FA2's loop (FA2 Alg. 1: Q blocks outer, K/V
// blocks inner, O_i on chip, O_i and L_i written once) and its bytes; what it adds is who issues
// each step and when:
//   - warp roles (FA3 paper §3.1, Algorithm 1's producer and consumer branches): a producer warp
//     issues the TMA loads of Q_i, K_j, V_j; consumer warpgroups of 4 warps, each owning 64 of the
//     B_r rows, run the GEMMs and the softmax. Without warp specialization consumer warpgroup 0
//     issues the loads itself.
//   - the K/V stage ring: `stages` buffers of K_j and V_j in SRAM, each with a full and an empty
//     mbarrier (hopper/mainloop_fwd_sm90_tma_gmma_ws.hpp: pipeline_k, pipeline_v; producer_acquire,
//     consumer_wait, consumer_release): the producer waits for an empty stage, issues the load and
//     arrives on its full barrier with the bytes to expect; a consumer waits for it full and, done,
//     arrives on its empty barrier (Alg. 1's s-stage circular buffer and its waits and releases).
//   - asynchronous WGMMA: each GEMM is issued, committed as a group and waited for (wgmma.mma_async,
//     commit_group, wait_group; the mainloop's flash::gemm and warpgroup_wait).
//   - ping-pong (§3.1): a consumer warpgroup waits on its named barrier before GEMM0 and, its GEMMs
//     issued, arrives on the next warpgroup's (warp_scheduler_barrier_sync / _arrive).
//   - intra-warpgroup overlap (§3.2, Algorithm 2): GEMM1 (O += P~ V_j) of block j is issued in the
//     step of block j + 1, after that block's GEMM0, so that block j + 1's softmax overlaps it; the
//     last block's GEMM1 in the outer end (Alg. 2's epilogue).
//   - P~_ij in registers as GEMM1's A operand where FA3 does (MmaPV_is_RS), else in SRAM.
//   - the persistent tile scheduler: one thread block per SM (hopper/tile_scheduler.hpp), thread
//     block c walking the tiles c, c + SMs, ... with one stage-ring position throughout
//     (Launch::persistent; hopper/flash_fwd_kernel_sm90.h keeps one pipeline state per thread block).
//   - K/V blocks walked from the last visible one down (hopper/mainloop_fwd_sm90_tma_gmma_ws.hpp:
//     n_block from n_block_max - 1 down to n_block_min), so a causal tile's masked block comes first.
#include "flashlab/schedule/schedule.hpp"

#include "actions.hpp"

namespace flashlab::detail {
namespace {

using namespace schedule_words;

// a as a bulk tensor copy of whole blocks (Action::tma_box)
Action tma(Action a) {
  a.tma_box = true;
  return a;
}

// The asynchronous steps of loading K_j or V_j into the ring, by `loader` (the producer warp, or
// consumer warpgroup 0 without warp specialization): wait for the stage to be empty, issue the TMA
// load, arrive on the stage's full barrier (arrive.expect_tx).
void load_through_ring(std::vector<Action>& out, Tensor t, Role loader, std::uint8_t stages) {
  out.push_back(by(loader, wait(t, Eq::stage_empty, stages)));
  out.push_back(by(loader, tma(load(t, Region::kv_block))));
  out.push_back(by(loader, arrive(t, Eq::stage_full, stages)));
}

// GEMM1 and its stage's release by every consumer warpgroup: wait for V_j full, issue O_i +=
// P~_ij V_j (FA2 Alg. 1 line 10, with the rescale of O_i), commit, wait for it, release V_j's stage.
void gemm1(std::vector<Action>& out, std::uint8_t stages, bool deferred) {
  const Role c = Role::consumers;
  out.push_back(by(c, wait(Tensor::V, Eq::stage_full, stages), deferred));
  out.push_back(by(c, compute(Eq::output_v2), deferred));
  out.push_back(by(c, commit_mma(Eq::output_v2), deferred));
}
void gemm1_done(std::vector<Action>& out, std::uint8_t stages, bool deferred) {
  const Role c = Role::consumers;
  out.push_back(by(c, wait_mma(Eq::output_v2), deferred));
  out.push_back(by(c, arrive(Tensor::V, Eq::stage_empty, stages), deferred));
}

}  // namespace

Schedule make_v3_schedule(const Problem& p) {
  const HopperSwitches& h = p.hopper;
  const auto stages = std::uint8_t(h.stages);
  const Role loader = h.warp_specialize ? Role::producer : Role::consumer0;
  const Role c = Role::consumers;
  const bool causal = p.mask.kind == MaskKind::causal_tl || p.mask.kind == MaskKind::causal_br;
  // FA2 Alg. 1's grid, one thread block per (batch, head, Q block); the persistent scheduler deals
  // the same tiles to one thread block per SM. Causal, both take the longest Q blocks (the last)
  // first (FA3's dynamic scheduler; for the grid, the longest-processing-time-first order of FA3's
  // single-tile LPT scheduler, which scripts/gpu/v3_kernel's grid variant runs: CTA r, Q block T_r - 1 - r)
  Loop q_blocks = grid(Dim::q_block);
  if (causal) q_blocks.order = Order::descending;
  Loop kv_blocks = seq(Dim::kv_block);  // FA3's mainloop: the last visible K/V block first
  kv_blocks.order = Order::descending;
  Launch l = launch("v3_forward", {grid(Dim::batch), grid(Dim::head), q_blocks, kv_blocks});
  l.persistent = h.scheduler == TileScheduler::persistent;
  l.early_write_back = true;  // measured on the V3 kernel, both schedulers (l2_model.hpp)

  // FA2 Alg. 1 lines 4-5 (FA3 Alg. 1: Q_i's load and the consumers' wait for it): the loader issues Q_i's TMA load and
  // arrives on Q's barrier; the consumers wait for it and set O_i = 0, l_i = 0, m_i = -inf
  l.outer_begin = {by(loader, tma(load(Tensor::Q, Region::q_block, true))), by(loader, arrive(Tensor::Q, Eq::stage_full)),
                   by(c, wait(Tensor::Q, Eq::stage_full)), by(c, compute(Eq::init_stats, true))};
  for (Action& a : l.outer_begin) a.if_visited = true;

  // FA2 Alg. 1 lines 7-10, one K/V block j (FA3 Alg. 1: the producer's and the consumers' loop
  // bodies; Alg. 2 with intra-warpgroup overlap)
  load_through_ring(l.body, Tensor::K, loader, stages);
  load_through_ring(l.body, Tensor::V, loader, stages);
  l.body.push_back(by(c, wait(Tensor::K, Eq::stage_full, stages)));
  if (h.pingpong) l.body.push_back(by(c, wait(Tensor::none, Eq::none)));  // this warpgroup's turn
  l.body.push_back(by(c, compute(Eq::scores)));                            // GEMM0: S = scale Q K_j^T
  l.body.push_back(by(c, commit_mma(Eq::scores)));
  if (h.intra_overlap) gemm1(l.body, stages, true);  // GEMM1 of the previous block, issued now
  if (h.pingpong) l.body.push_back(by(c, arrive(Tensor::none, Eq::none)));  // the next warpgroup's turn
  l.body.push_back(by(c, wait_mma(Eq::scores)));
  l.body.push_back(by(c, arrive(Tensor::K, Eq::stage_empty, stages)));  // K_j's stage released
  l.body.push_back(by(c, compute(Eq::softmax_v2)));                     // line 9
  if (h.intra_overlap) {
    gemm1_done(l.body, stages, true);
  } else {
    gemm1(l.body, stages, false);
    gemm1_done(l.body, stages, false);
  }

  // FA2 Alg. 1 lines 12-15 (FA3 Alg. 1's epilogue): O_i = diag(l_i)^-1 O_i, L_i = m_i + log(l_i),
  // each consumer warpgroup writes its rows of O_i and L_i (O_i = 0, L_i = +inf without a tile)
  l.outer_end = {by(c, compute(Eq::finalize_v2, true)), by(c, store(Tensor::O, Region::q_block)),
                 by(c, store(Tensor::L, Region::q_block))};

  const Memory p_home = fa3_p_in_registers(p.tiling.d, p.tiling.b_c) ? Memory::registers : Memory::sram;
  l.placement = {{Tensor::Q, Memory::sram},         {Tensor::K, Memory::sram, h.stages},
                 {Tensor::V, Memory::sram, h.stages}, {Tensor::S, Memory::registers},
                 {Tensor::P, p_home},                 {Tensor::O, Memory::registers},
                 {Tensor::l, Memory::registers},      {Tensor::m, Memory::registers},
                 {Tensor::L, Memory::registers}};
  return {{std::move(l)}};
}

}  // namespace flashlab::detail
