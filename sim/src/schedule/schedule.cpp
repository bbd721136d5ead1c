// schedule.cpp — the three forward schedules as data (docs/model.md cites each line).
#include "flashlab/schedule/schedule.hpp"

namespace flashlab {
namespace {

Action load(Tensor t, Region r, bool if_visited = false) { return {Op::load, t, r, Eq::none, if_visited}; }
Action store(Tensor t, Region r) { return {Op::store, t, r, Eq::none, false}; }
Action compute(Eq e, bool if_visited = false) { return {Op::compute, Tensor::none, Region::none, e, if_visited}; }

constexpr Loop grid(Dim d) { return {d, true, Order::ascending}; }
constexpr Loop seq(Dim d) { return {d, false, Order::ascending}; }

Launch launch(std::string name, std::vector<Loop> loops) {
  Launch l;
  l.name = std::move(name);
  l.loops = std::move(loops);
  return l;
}

// FA1 paper, Algorithm 0 (standard attention): three launches, one step each per (batch, head)
// over whole tensors, as the algorithm writes its lines. The loops are the project's kernels'
// (kernels/src/standard.cu): S = QK^T and O = PV run one thread block per Q block streaming the
// K/V blocks, the softmax one thread block per row; batch * heads is gridDim.y.
Schedule standard_schedule() {
  Launch scores = launch("standard_scores", {grid(Dim::batch), grid(Dim::head), grid(Dim::q_block), seq(Dim::kv_block)});
  // line 1: load Q, K, compute S = QK^T, write S
  scores.prologue = {{load(Tensor::Q, Region::whole), load(Tensor::K, Region::whole), compute(Eq::scores),
                      store(Tensor::S, Region::whole)}};
  scores.placement = {{Tensor::Q, Memory::sram}, {Tensor::K, Memory::sram}, {Tensor::S, Memory::sram}};

  Launch softmax = launch("standard_softmax", {grid(Dim::batch), grid(Dim::head), grid(Dim::q_row)});
  // line 2: read S, compute P = softmax(S), write P
  softmax.prologue = {{load(Tensor::S, Region::whole), compute(Eq::softmax_dense), store(Tensor::P, Region::whole)}};
  softmax.placement = {{Tensor::S, Memory::sram}, {Tensor::P, Memory::sram}};

  Launch output = launch("standard_output", {grid(Dim::batch), grid(Dim::head), grid(Dim::q_block), seq(Dim::kv_block)});
  // line 3: load P and V, compute O = PV, write O
  output.prologue = {{load(Tensor::P, Region::whole), load(Tensor::V, Region::whole), compute(Eq::output_dense),
                      store(Tensor::O, Region::whole)}};
  output.placement = {{Tensor::P, Memory::sram}, {Tensor::V, Memory::sram}, {Tensor::O, Memory::registers}};
  return {{scores, softmax, output}};
}

// FA1 paper, Algorithm 1, literally: one thread block per (batch, head) (FA1 parallelises over
// batch and heads); outer loop over K/V blocks j, inner over Q blocks i; O, l, m live in HBM and
// are read and written every step. The paper loads Q_i, K_j, V_j into SRAM and computes S_ij there.
Schedule v1_schedule() {
  Launch l = launch("v1_forward", {grid(Dim::batch), grid(Dim::head), seq(Dim::kv_block), seq(Dim::q_block)});
  // line 2: initialise O = 0, l = 0, m = -inf in HBM
  l.prologue = {{compute(Eq::init_stats), store(Tensor::O, Region::whole), store(Tensor::l, Region::whole),
                 store(Tensor::m, Region::whole)}};
  // line 6: load K_j, V_j
  l.outer_begin = {load(Tensor::K, Region::kv_block, true), load(Tensor::V, Region::kv_block, true)};
  l.body = {
      // line 8: load Q_i, O_i, l_i, m_i
      load(Tensor::Q, Region::q_block), load(Tensor::O, Region::q_block), load(Tensor::l, Region::q_block),
      load(Tensor::m, Region::q_block),
      compute(Eq::scores),      // line 9
      compute(Eq::softmax_v1),  // lines 10-11
      compute(Eq::output_v1),   // line 12
      // lines 12-13: write O_i, l_i, m_i
      store(Tensor::O, Region::q_block), store(Tensor::l, Region::q_block), store(Tensor::m, Region::q_block),
  };
  l.placement = {{Tensor::Q, Memory::sram},       {Tensor::K, Memory::sram},       {Tensor::V, Memory::sram},
                 {Tensor::S, Memory::sram},       {Tensor::P, Memory::sram},       {Tensor::O, Memory::registers},
                 {Tensor::l, Memory::registers}, {Tensor::m, Memory::registers}};
  return {{l}};
}

// FA2 paper, Algorithm 1: one thread block per Q block (FA2 §3.2; blockIdx.x = i, then heads,
// then batch); O_i, m_i, l_i stay on chip. FA2's kernel keeps Q_i, K_j, V_j in shared memory and
// S_ij/P_ij and the O_i accumulator in registers.
Schedule v2_schedule() {
  Launch l = launch("v2_forward", {grid(Dim::batch), grid(Dim::head), grid(Dim::q_block), seq(Dim::kv_block)});
  // lines 4-5: load Q_i; initialise O_i = 0, l_i = 0, m_i = -inf on chip
  l.outer_begin = {load(Tensor::Q, Region::q_block, true), compute(Eq::init_stats, true)};
  l.body = {
      load(Tensor::K, Region::kv_block), load(Tensor::V, Region::kv_block),  // line 7
      compute(Eq::scores),                                                    // line 8
      compute(Eq::softmax_v2),                                                // line 9
      compute(Eq::output_v2),                                                 // line 10
  };
  // lines 12-15: O_i = diag(l_i)^-1 O_i, L_i = m_i + log(l_i), write O_i and L_i. A Q block that
  // visits no tile still writes O_i = 0 and L_i = +inf.
  l.outer_end = {compute(Eq::finalize_v2, true), store(Tensor::O, Region::q_block), store(Tensor::L, Region::q_block)};
  l.placement = {{Tensor::Q, Memory::sram},       {Tensor::K, Memory::sram},       {Tensor::V, Memory::sram},
                 {Tensor::S, Memory::registers}, {Tensor::P, Memory::registers}, {Tensor::O, Memory::registers},
                 {Tensor::l, Memory::registers}, {Tensor::m, Memory::registers}, {Tensor::L, Memory::registers}};
  return {{l}};
}

}  // namespace

Schedule make_schedule(Algo a) {
  switch (a) {
    case Algo::standard: return standard_schedule();
    case Algo::v1: return v1_schedule();
    case Algo::v2: return v2_schedule();
  }
  return v2_schedule();
}

}  // namespace flashlab
