// event.hpp — the event record shared by the simulator and the instrumented CUDA kernels.
//
// One record per load, store, compute, skip, barrier or inter-warp reduce (docs/events.md). It is
// a standard-layout struct of fixed size so that a kernel can write it into a device buffer and the
// host can copy the buffer out and compare it field by field.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "flashlab/contract/hd.hpp"

namespace flashlab {

/// What an event does.
/// `atomic`: a read-modify-write of HBM done by the memory system (FA2's backward adds dQ_i into
/// the fp32 accumulator dQacc with atomicAdd; Nsight Compute counts these as reductions, neither
/// loads nor stores).
/// The asynchronous steps of FA3's Hopper schedule (docs/events.md "V3"): `arrive` on and `wait`
/// for a barrier — an mbarrier of the K/V stage ring, Q's mbarrier, or a named barrier between
/// consumer warpgroups (ping-pong) — and `commit` of the WGMMAs issued so far as one group
/// (wgmma.commit_group; a `wait` with no tensor and an equation is wgmma.wait_group on it).
enum class Op : std::uint8_t {
  load = 0, store = 1, compute = 2, skip = 3, barrier = 4, reduce = 5, atomic = 6, arrive = 7, wait = 8, commit = 9
};
inline constexpr int kOpCount = 10;

/// Who issues an event (Event::agent): the whole thread block (every event of standard attention,
/// V1 and V2: 0), the producer warp of a warp-specialized thread block (FA3: one warp issuing TMA
/// loads), or consumer warpgroup k (4 warps owning rows [64 k, 64 k + 64) of the Q block): agent
/// kAgentConsumer + k.
inline constexpr std::uint8_t kAgentBlock = 0;
inline constexpr std::uint8_t kAgentProducer = 1;
inline constexpr std::uint8_t kAgentConsumer = 2;

/// The tensors that HBM counters and events name (docs/model.md, "Notation").
/// Q K V O are e_in bytes per element; l m L are fp32 statistics; S P are standard attention's
/// N_q x N_k matrices (e_in bytes per element). The backward pass adds dO (the output's gradient,
/// N_q x d), dQ (N_q x d), dK, dV (N_k x d), all e_in; D = rowsum(dO o O) (N_q, fp32); dQacc, FA2's
/// fp32 accumulator of dQ (N_q x d, 4 bytes); dP, dS, standard attention's backward N_q x N_k
/// matrices (e_in). Split-KV (FA2's flash_fwd_splitkv kernels, Flash-Decoding) adds Oacc, one
/// partial O per split of the K/V blocks (splits x N_q x d, fp32; FA2's out_accum), and Lacc, its
/// log-sum-exp (splits x N_q, fp32; FA2's softmax_lse_accum), read back by the combine launch.
enum class Tensor : std::uint8_t { Q = 0, K, V, O, l, m, L, S, P, dO, dQ, dK, dV, D, dQacc, dP, dS, Oacc, Lacc, none };
inline constexpr int kTensorCount = 19;  // Q..Lacc, `none` excluded

/// Which equation a compute event evaluates (the algorithm line it stands for; docs/model.md).
enum class Eq : std::uint8_t {
  none = 0,
  init_stats,    // V1 Alg. 1 line 2 / V2 Alg. 1 line 4: O = 0, l = 0, m = -inf
  scores,        // S = scale * Q K^T                      (matmul + scale)
  softmax_v1,    // V1 lines 10-11: m~, P~, l~, m_new, l_new
  output_v1,     // V1 line 12: O = diag(l_new)^-1 (diag(l) e^(m-m_new) O + e^(m~-m_new) P~ V)
  softmax_v2,    // V2 line 9: m_new, P~ = exp(S - m_new), l_new
  output_v2,     // V2 line 10: O = diag(e^(m_old-m_new)) O + P~ V
  finalize_v2,   // V2 lines 12-13: O = diag(l)^-1 O, L = m + log(l)
  softmax_dense, // standard Alg. 0 line 2: P = softmax(S)
  output_dense,  // standard Alg. 0 line 3: O = P V
  normalize,     // --order kv-outer --rescale delayed, once per Q block at the end: O = diag(l)^-1 O
  logsumexp,     // --order q-outer --rescale step, once per Q block at the end: L = m + log(l)
  // the backward pass (docs/model.md "Backward pass"; FA1 Alg. 3 and 4, FA2 Alg. 2)
  bwd_D,         // D = rowsum(dO o O): FA2 Alg. 2 line 4 (rows x d), FA1 Alg. 4 line 18 per tile
  init_grads,    // dK_j = 0, dV_j = 0: FA1 Alg. 4 lines 2 and 8, FA2 Alg. 2 line 7 (cols x d)
  zero_dq,       // dQ = 0 (FA1 Alg. 4 line 2, FA2 Alg. 2 line 3) or dQacc = 0 (rows x d)
  probs_v1,      // P_ij = diag(l_i)^-1 exp(S_ij - m_i): FA1 Alg. 4 line 13
  probs_v2,      // P_ij = exp(S_ij - L_i): FA2 Alg. 2 line 11
  grad_v,        // dV_j += P_ij^T dO_i: FA1 line 15, FA2 line 12
  grad_p,        // dP_ij = dO_i V_j^T: FA1 line 16, FA2 line 13
  grad_s,        // dS_ij = scale P_ij o (dP_ij - D_i): FA1 line 19 (with lines 20-21's scale), FA2 line 14
  grad_q,        // dQ_i += dS_ij K_j: FA1 line 20, FA2 line 15
  grad_k,        // dK_j += dS_ij^T Q_i: FA1 line 21, FA2 line 16
  convert_dq,    // dQ = dQacc (FA2's released convert launch; rows x d)
  grad_v_dense,  // standard backward (FA1 Alg. 3) line 1: dV = P^T dO (N_k x d)
  grad_p_dense,  // line 2: dP = dO V^T (N_q x N_k)
  grad_s_dense,  // line 3: dS = scale P o (dP - rowsum(P o dP)) (N_q x N_k)
  grad_q_dense,  // line 4: dQ = dS K (N_q x d)
  grad_k_dense,  // line 5: dK = dS^T Q (N_k x d)
  // split-KV (docs/model.md "Split-KV"): FA2's flash_fwd_splitkv kernel and its combine kernel
  finalize_split,  // a split's epilogue: O_s = diag(l)^-1 O, L_s = m + log(l); L_s = -inf, O_s = 0 for
                   // a row with no visible key in the split (rows x d)
  combine,       // L = max_s L_s + log(sum_s exp(L_s - max)), O = sum_s exp(L_s - L) O_s (rows x d)
  // V3's barriers (arrive and wait events, not equations; docs/events.md "V3"): which mbarrier of
  // a stage of the K/V ring (or Q's) the event names — `full` (the tile has landed in SRAM) or
  // `empty` (every consumer warpgroup is done with it, the producer may overwrite it)
  stage_full,
  stage_empty,
};
inline constexpr int kEqCount = 32;  // none..stage_empty

/// One event. 40 bytes, standard layout; -1 marks "not applicable" in i, j and warp.
/// Stream order is by launch, then block, then step (docs/events.md "Stream order").
struct Event {
  std::uint32_t block = 0;  // thread block (program) id within one (batch, head)
  std::uint32_t step = 0;   // step number within that block
  std::uint64_t bytes = 0;  // HBM bytes moved (load/store), shared-memory bytes (reduce), else 0
  std::int32_t i = -1;      // Q block index of the tile
  std::int32_t j = -1;      // K/V block index of the tile
  std::uint32_t rows = 0;   // rows of the region touched (elements)
  std::uint32_t cols = 0;   // columns of the region touched (elements)
  Op op = Op::load;
  Tensor tensor = Tensor::none;
  std::int16_t warp = -1;   // warp index, -1 for the whole thread block
  Eq eq = Eq::none;         // compute events: which equation
  std::uint8_t agent = 0;   // who issues it: kAgentBlock (0; standard, V1, V2), kAgentProducer,
                            // kAgentConsumer + k (consumer warpgroup k); format versions 1-5: 0 (pad)
  std::uint16_t launch = 0; // kernel launch within the schedule: standard 0 (S), 1 (softmax), 2 (PV); V1, V2 0
};

static_assert(std::is_standard_layout_v<Event>);
static_assert(std::is_trivially_copyable_v<Event>);
static_assert(sizeof(Event) == 40);
static_assert(offsetof(Event, block) == 0);
static_assert(offsetof(Event, step) == 4);
static_assert(offsetof(Event, bytes) == 8);
static_assert(offsetof(Event, i) == 16);
static_assert(offsetof(Event, j) == 20);
static_assert(offsetof(Event, rows) == 24);
static_assert(offsetof(Event, cols) == 28);
static_assert(offsetof(Event, op) == 32);
static_assert(offsetof(Event, tensor) == 33);
static_assert(offsetof(Event, warp) == 34);
static_assert(offsetof(Event, eq) == 36);
static_assert(offsetof(Event, agent) == 37);
static_assert(offsetof(Event, launch) == 38);

FL_HD bool same_event(const Event& a, const Event& b) {
  return a.launch == b.launch && a.block == b.block && a.step == b.step && a.bytes == b.bytes && a.i == b.i &&
         a.j == b.j && a.rows == b.rows && a.cols == b.cols && a.op == b.op && a.tensor == b.tensor &&
         a.warp == b.warp && a.eq == b.eq && a.agent == b.agent;
}

}  // namespace flashlab
