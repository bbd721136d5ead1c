// schedule.cpp — the three forward schedules as data (docs/model.md cites each line).
#include "flashlab/schedule/schedule.hpp"

namespace flashlab {
namespace {

Action load(Tensor t, Region r, bool if_visited = false) { return {Op::load, t, r, Eq::none, if_visited}; }
Action store(Tensor t, Region r) { return {Op::store, t, r, Eq::none, false}; }
Action compute(Eq e, bool if_visited = false) { return {Op::compute, Tensor::none, Region::none, e, if_visited}; }

// FA1 paper, Algorithm 0 (standard attention), one step per line.
Schedule standard_schedule() {
  Schedule s;
  s.algo = Algo::standard;
  s.order = LoopOrder::none;
  s.prologue = {
      // line 1: load Q, K, compute S = QK^T, write S
      {load(Tensor::Q, Region::whole), load(Tensor::K, Region::whole), compute(Eq::scores),
       store(Tensor::S, Region::whole)},
      // line 2: read S, compute P = softmax(S), write P
      {load(Tensor::S, Region::whole), compute(Eq::softmax_dense), store(Tensor::P, Region::whole)},
      // line 3: load P and V, compute O = PV, write O
      {load(Tensor::P, Region::whole), load(Tensor::V, Region::whole), compute(Eq::output_dense),
       store(Tensor::O, Region::whole)},
  };
  return s;
}

// FA1 paper, Algorithm 1, literally: O, l, m live in HBM and are read and written every step.
Schedule v1_schedule() {
  Schedule s;
  s.algo = Algo::v1;
  s.order = LoopOrder::kv_outer;
  // line 2: initialise O = 0, l = 0, m = -inf in HBM
  s.prologue = {{compute(Eq::init_stats), store(Tensor::O, Region::whole), store(Tensor::l, Region::whole),
                 store(Tensor::m, Region::whole)}};
  // line 6: load K_j, V_j
  s.outer_begin = {load(Tensor::K, Region::kv_block, true), load(Tensor::V, Region::kv_block, true)};
  s.inner = {
      // line 8: load Q_i, O_i, l_i, m_i
      load(Tensor::Q, Region::q_block), load(Tensor::O, Region::q_block), load(Tensor::l, Region::q_block),
      load(Tensor::m, Region::q_block),
      compute(Eq::scores),      // line 9
      compute(Eq::softmax_v1),  // lines 10-11
      compute(Eq::output_v1),   // line 12
      // lines 12-13: write O_i, l_i, m_i
      store(Tensor::O, Region::q_block), store(Tensor::l, Region::q_block), store(Tensor::m, Region::q_block),
  };
  return s;
}

// FA2 paper, Algorithm 1: one thread block per Q block; O_i, m_i, l_i stay on chip.
Schedule v2_schedule() {
  Schedule s;
  s.algo = Algo::v2;
  s.order = LoopOrder::q_outer;
  // lines 4-5: load Q_i; initialise O_i = 0, l_i = 0, m_i = -inf on chip
  s.outer_begin = {load(Tensor::Q, Region::q_block, true), compute(Eq::init_stats, true)};
  s.inner = {
      load(Tensor::K, Region::kv_block), load(Tensor::V, Region::kv_block),  // line 7
      compute(Eq::scores),                                                    // line 8
      compute(Eq::softmax_v2),                                                // line 9
      compute(Eq::output_v2),                                                 // line 10
  };
  // lines 12-15: O_i = diag(l_i)^-1 O_i, L_i = m_i + log(l_i), write O_i and L_i. A Q block that
  // visits no tile still writes O_i = 0 and L_i = +inf.
  s.outer_end = {compute(Eq::finalize_v2, true), store(Tensor::O, Region::q_block),
                 store(Tensor::L, Region::q_block)};
  return s;
}

}  // namespace

Schedule make_schedule(const Problem& p) {
  switch (p.algo) {
    case Algo::standard: return standard_schedule();
    case Algo::v1: return v1_schedule();
    case Algo::v2: return v2_schedule();
  }
  return v2_schedule();
}

}  // namespace flashlab
