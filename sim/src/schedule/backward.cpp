// backward.cpp — the backward schedules as data: standard attention (FA1 Alg. 3), V1 (FA1 Alg. 4)
// and V2 (FA2 Alg. 2, as printed and as FA2's released kernels run it); docs/model.md "Backward
// pass" cites each line.
#include <stdexcept>

#include "actions.hpp"

namespace flashlab {
namespace {

using namespace schedule_words;

// FA1 paper, Algorithm 3 (standard attention backward): five launches, one step each per (batch,
// head) over whole tensors. P is read back from HBM (the forward wrote it); dP and dS are
// N_q x N_k matrices written and read. The grids are those of the forward's standard kernels:
// a thread block per output row block, per K/V block for dV and dK, per row for dS.
Schedule standard_backward() {
  Launch dv = launch("standard_bwd_dv", {grid(Dim::batch), grid(Dim::head), grid(Dim::kv_block), seq(Dim::q_block)});
  // line 1: load P, dO by blocks, compute dV = P^T dO, write dV
  dv.prologue = {{load(Tensor::P, Region::whole), load(Tensor::dO, Region::whole), compute(Eq::grad_v_dense),
                  store(Tensor::dV, Region::whole)}};
  dv.placement = {{Tensor::P, Memory::sram}, {Tensor::dO, Memory::sram}, {Tensor::dV, Memory::registers}};

  Launch dp = launch("standard_bwd_dp", {grid(Dim::batch), grid(Dim::head), grid(Dim::q_block), seq(Dim::kv_block)});
  // line 2: load dO, V by blocks, compute dP = dO V^T, write dP
  dp.prologue = {{load(Tensor::dO, Region::whole), load(Tensor::V, Region::whole), compute(Eq::grad_p_dense),
                  store(Tensor::dP, Region::whole)}};
  dp.placement = {{Tensor::dO, Memory::sram}, {Tensor::V, Memory::sram}, {Tensor::dP, Memory::sram}};

  Launch ds = launch("standard_bwd_ds", {grid(Dim::batch), grid(Dim::head), grid(Dim::q_row)});
  // line 3: read P, dP, compute dS_ij = P_ij (dP_ij - sum_l P_il dP_il), write dS
  ds.prologue = {{load(Tensor::P, Region::whole), load(Tensor::dP, Region::whole), compute(Eq::grad_s_dense),
                  store(Tensor::dS, Region::whole)}};
  ds.placement = {{Tensor::P, Memory::sram}, {Tensor::dP, Memory::sram}, {Tensor::dS, Memory::sram}};

  Launch dq = launch("standard_bwd_dq", {grid(Dim::batch), grid(Dim::head), grid(Dim::q_block), seq(Dim::kv_block)});
  // line 4: load dS and K by blocks, compute dQ = dS K, write dQ
  dq.prologue = {{load(Tensor::dS, Region::whole), load(Tensor::K, Region::whole), compute(Eq::grad_q_dense),
                  store(Tensor::dQ, Region::whole)}};
  dq.placement = {{Tensor::dS, Memory::sram}, {Tensor::K, Memory::sram}, {Tensor::dQ, Memory::registers}};

  Launch dk = launch("standard_bwd_dk", {grid(Dim::batch), grid(Dim::head), grid(Dim::kv_block), seq(Dim::q_block)});
  // line 5: load dS and Q by blocks, compute dK = dS^T Q, write dK
  dk.prologue = {{load(Tensor::dS, Region::whole), load(Tensor::Q, Region::whole), compute(Eq::grad_k_dense),
                  store(Tensor::dK, Region::whole)}};
  dk.placement = {{Tensor::dS, Memory::sram}, {Tensor::Q, Memory::sram}, {Tensor::dK, Memory::registers}};
  return {{dv, dp, ds, dq, dk}};
}

// FA1 paper, Algorithm 4 (V1 backward): one thread block per (batch, head), K/V blocks outer.
// Everything the algorithm says is "on-chip SRAM" is placed there, S_ij and dS_ij as in V1's
// forward (the paper's kernel); l_i, m_i in registers.
Schedule v1_backward() {
  Launch l = launch("v1_backward", {grid(Dim::batch), grid(Dim::head), seq(Dim::kv_block), seq(Dim::q_block)});
  // line 2: initialise dQ, dK, dV = 0 in HBM
  l.prologue = {{compute(Eq::zero_dq), compute(Eq::init_grads), store(Tensor::dQ, Region::whole),
                 store(Tensor::dK, Region::whole), store(Tensor::dV, Region::whole)}};
  // lines 7-8: load K_j, V_j; dK~_j = 0, dV~_j = 0 on chip (a K/V block no query sees loads nothing)
  l.outer_begin = {load(Tensor::K, Region::kv_block, true), load(Tensor::V, Region::kv_block, true),
                   compute(Eq::init_grads)};
  l.body = {
      // line 10: load Q_i, O_i, dO_i, dQ_i, l_i, m_i
      load(Tensor::Q, Region::q_block), load(Tensor::O, Region::q_block), load(Tensor::dO, Region::q_block),
      load(Tensor::dQ, Region::q_block), load(Tensor::l, Region::q_block), load(Tensor::m, Region::q_block),
      compute(Eq::scores),    // lines 11-12: S_ij = scale Q_i K_j^T, masked
      compute(Eq::probs_v1),  // line 13: P_ij = diag(l_i)^-1 exp(S_ij - m_i)
      compute(Eq::grad_v),    // line 15: dV~_j += P_ij^T dO_i
      compute(Eq::grad_p),    // line 16: dP_ij = dO_i V_j^T
      compute(Eq::bwd_D),     // line 18: D_i = rowsum(dO_i o O_i)
      compute(Eq::grad_s),    // line 19: dS_ij = P_ij o (dP_ij - D_i)
      compute(Eq::grad_q),    // line 20: dQ_i += scale dS_ij K_j, written to HBM
      store(Tensor::dQ, Region::q_block),
      compute(Eq::grad_k),    // line 21: dK~_j += scale dS_ij^T Q_i
  };
  // line 23: write dK_j, dV_j
  l.outer_end = {store(Tensor::dK, Region::kv_block), store(Tensor::dV, Region::kv_block)};
  l.placement = {{Tensor::Q, Memory::sram},  {Tensor::K, Memory::sram},       {Tensor::V, Memory::sram},
                 {Tensor::O, Memory::sram},  {Tensor::dO, Memory::sram},      {Tensor::dQ, Memory::sram},
                 {Tensor::dK, Memory::sram}, {Tensor::dV, Memory::sram},      {Tensor::l, Memory::registers},
                 {Tensor::m, Memory::registers}, {Tensor::S, Memory::sram}, {Tensor::P, Memory::sram},
                 {Tensor::dP, Memory::sram}, {Tensor::dS, Memory::sram}};
  return {{l}};
}

// FA2 paper, Algorithm 2, as printed: lines 3-4 before the loop (one thread block per Q block),
// then one thread block per K/V block j walking the Q blocks; S, P, dP, dS and L_i, D_i on chip in
// registers as in V2's forward, the rest in SRAM as the algorithm says.
Schedule v2_backward_paper() {
  Launch pre = launch("v2_backward_dot_do_o", {grid(Dim::batch), grid(Dim::head), grid(Dim::q_block)});
  // line 3: dQ = 0 in HBM; line 4: D = rowsum(dO o O), written to HBM
  pre.outer_begin = {load(Tensor::O, Region::q_block), load(Tensor::dO, Region::q_block), compute(Eq::bwd_D),
                     store(Tensor::D, Region::q_block), compute(Eq::zero_dq), store(Tensor::dQ, Region::q_block)};
  pre.placement = {{Tensor::O, Memory::registers}, {Tensor::dO, Memory::registers}, {Tensor::D, Memory::registers},
                   {Tensor::dQ, Memory::registers}};

  Launch l = launch("v2_backward", {grid(Dim::batch), grid(Dim::head), grid(Dim::kv_block), seq(Dim::q_block)});
  // lines 6-7: load K_j, V_j; dK_j = 0, dV_j = 0 on chip
  l.outer_begin = {load(Tensor::K, Region::kv_block, true), load(Tensor::V, Region::kv_block, true),
                   compute(Eq::init_grads)};
  l.body = {
      // line 9: load Q_i, O_i, dO_i, dQ_i, L_i, D_i (line 15's load of dQ_i is this one)
      load(Tensor::Q, Region::q_block), load(Tensor::O, Region::q_block), load(Tensor::dO, Region::q_block),
      load(Tensor::dQ, Region::q_block), load(Tensor::L, Region::q_block), load(Tensor::D, Region::q_block),
      compute(Eq::scores),    // line 10: S_ij = Q_i K_j^T (scaled, masked)
      compute(Eq::probs_v2),  // line 11: P_ij = exp(S_ij - L_i)
      compute(Eq::grad_v),    // line 12: dV_j += P_ij^T dO_i
      compute(Eq::grad_p),    // line 13: dP_ij = dO_i V_j^T
      compute(Eq::grad_s),    // line 14: dS_ij = P_ij o (dP_ij - D_i)
      compute(Eq::grad_q),    // line 15: dQ_i += dS_ij K_j, written back to HBM
      store(Tensor::dQ, Region::q_block),
      compute(Eq::grad_k),    // line 16: dK_j += dS_ij^T Q_i
  };
  // line 18: write dK_j, dV_j
  l.outer_end = {store(Tensor::dK, Region::kv_block), store(Tensor::dV, Region::kv_block)};
  l.placement = {{Tensor::Q, Memory::sram},       {Tensor::K, Memory::sram},       {Tensor::V, Memory::sram},
                 {Tensor::O, Memory::sram},       {Tensor::dO, Memory::sram},      {Tensor::dQ, Memory::sram},
                 {Tensor::dK, Memory::sram},      {Tensor::dV, Memory::sram},      {Tensor::L, Memory::registers},
                 {Tensor::D, Memory::registers}, {Tensor::S, Memory::registers}, {Tensor::P, Memory::registers},
                 {Tensor::dP, Memory::registers}, {Tensor::dS, Memory::registers}};
  return {{pre, l}};
}

// FA2's released backward (csrc/flash_attn/src/flash_bwd_preprocess_kernel.h,
// flash_bwd_kernel.h): three launches. The main kernel keeps Q_i, dO_i, K_j, V_j and the tiles of
// P and dS in shared memory (the operands of its transposed matmuls), dK_j and dV_j accumulated
// in registers, L_i and D_i one value per thread; dQ_i goes to the fp32 accumulator with atomic
// adds, so the Q blocks need no ordering between the thread blocks of different K/V blocks.
Schedule v2_backward_released(bool deterministic) {
  Launch pre = launch("flash_bwd_dot_do_o", {grid(Dim::batch), grid(Dim::head), grid(Dim::q_block)});
  // D_i = rowsum(dO_i o O_i), written; dQacc_i = 0 (the accumulator cleared in the same pass)
  // (deterministic: every slice of dQacc_i; FA2 allocates them with torch::zeros instead, a fill
  // launch before these three writing the same bytes, and runs this kernel with Clear_dQaccum off)
  const Region acc = deterministic ? Region::q_block_splits : Region::q_block;
  pre.outer_begin = {load(Tensor::O, Region::q_block), load(Tensor::dO, Region::q_block), compute(Eq::bwd_D),
                     store(Tensor::D, Region::q_block), compute(Eq::zero_dq), store(Tensor::dQacc, acc)};
  pre.placement = {{Tensor::O, Memory::registers}, {Tensor::dO, Memory::registers}, {Tensor::D, Memory::registers},
                   {Tensor::dQacc, Memory::registers}};

  // deterministic (flash_bwd_launch_template.h run_flash_bwd_seqk_parallel: gridDimx = nsplits;
  // flash_bwd_kernel.h compute_dq_dk_dv_seqk_parallel): thread block s walks K/V blocks s,
  // s + nsplits, ..., each as one released thread block does, its atomics going to slice s
  Launch l = launch("flash_bwd_dq_dk_dv",
                    deterministic ? std::vector<Loop>{grid(Dim::batch), grid(Dim::head), grid(Dim::dq_slice),
                                                      seq(Dim::kv_block), seq_down(Dim::q_block)}
                                  : std::vector<Loop>{grid(Dim::batch), grid(Dim::head), grid(Dim::kv_block),
                                                      seq_down(Dim::q_block)});
  l.outer_begin = {load(Tensor::K, Region::kv_block, true), load(Tensor::V, Region::kv_block, true),
                   compute(Eq::init_grads)};
  l.body = {
      load(Tensor::Q, Region::q_block), load(Tensor::dO, Region::q_block), load(Tensor::L, Region::q_block),
      load(Tensor::D, Region::q_block),
      compute(Eq::scores), compute(Eq::probs_v2), compute(Eq::grad_v), compute(Eq::grad_p), compute(Eq::grad_s),
      compute(Eq::grad_q), atomic(Tensor::dQacc, Region::q_block),  // dQacc_i (slice s) += dS_ij K_j (atomicAdd)
      compute(Eq::grad_k),
  };
  // a K/V block that no query sees still writes dK_j = dV_j = 0
  l.outer_end = {store(Tensor::dK, Region::kv_block), store(Tensor::dV, Region::kv_block)};
  l.placement = {{Tensor::Q, Memory::sram},       {Tensor::K, Memory::sram},       {Tensor::V, Memory::sram},
                 {Tensor::dO, Memory::sram},      {Tensor::S, Memory::sram},       {Tensor::P, Memory::sram},
                 {Tensor::dP, Memory::sram},      {Tensor::dS, Memory::sram},      {Tensor::dK, Memory::registers},
                 {Tensor::dV, Memory::registers}, {Tensor::L, Memory::registers}, {Tensor::D, Memory::registers},
                 {Tensor::dQacc, Memory::registers}};

  Launch convert = launch("flash_bwd_convert_dq", {grid(Dim::batch), grid(Dim::head), grid(Dim::q_block)});
  // dQ_i = dQacc_i in the input type (deterministic: the sum of the nsplits slices, s = 0 first;
  // flash_bwd_preprocess_kernel.h convert_dQ)
  convert.outer_begin = {load(Tensor::dQacc, acc), compute(Eq::convert_dq),
                         store(Tensor::dQ, Region::q_block)};
  convert.placement = {{Tensor::dQacc, Memory::registers}, {Tensor::dQ, Memory::registers}};
  return {{pre, l, convert}};
}

}  // namespace

namespace detail {

Schedule make_backward_schedule(Algo a, BackwardForm form) {
  switch (a) {
    case Algo::standard: return standard_backward();
    case Algo::v1: return v1_backward();
    case Algo::v2: break;
    case Algo::v3:  // resolve() refuses it (--pass forward only with --algo v3)
      throw std::logic_error("make_backward_schedule: V3's backward is not modelled");
  }
  return form == BackwardForm::paper ? v2_backward_paper() : v2_backward_released(form == BackwardForm::deterministic);
}

}  // namespace detail
}  // namespace flashlab
