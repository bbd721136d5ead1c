// grad_steps.hpp — the backward's numerics (internal to sim/src/numerics): the actions of the
// backward launches on real tiles, step by step, as NumericsObserver hands them over.
//
// Loads copy a region of an HBM tensor on chip, compute actions evaluate their equation (FA1
// Alg. 3 and 4, FA2 Alg. 2) in fp32, stores copy back: dQ, dK, dV, dP and dS rounded to the input
// dtype at every store (V1 and the paper's V2 round dQ_i at every step that adds to it), D and the
// accumulator dQacc in fp32, atomics added to dQacc in the order the walk reaches them. P and dS
// are rounded to the dtype before the matmuls that take them (dV += P^T dO, dQ += dS K,
// dK += dS^T Q), as FA2's kernels convert them for the tensor cores; dP and dS themselves are
// computed in fp32 from the fp32 P, the softmax scale folded into dS.
#pragma once

#include <memory>

#include "flashlab/numerics/numerics.hpp"

namespace flashlab {

class GradSteps {
 public:
  /// `in` (with dO of N_q x d) must outlive this; `fwd` is what the forward left in HBM.
  GradSteps(const Problem& p, const Inputs& in, ForwardHbm fwd);
  ~GradSteps();
  void on_step(const StepView& s);
  /// Sets r.dQ, r.dK, r.dV and r.D (NumericResult).
  void fill(NumericResult& r) const;

 private:
  struct State;
  std::unique_ptr<State> st_;
};

}  // namespace flashlab
