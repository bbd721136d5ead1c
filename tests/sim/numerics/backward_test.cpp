// The backward's numerics (FA1 Alg. 3 and 4, FA2 Alg. 2 as printed and as released) against the
// float64 chain rule, on ragged tiles, every mask and every dtype; the cases the issue names.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "flashlab/schedule/resolve.hpp"
#include "numerics_util.hpp"
#include "../../common/approx.hpp"

using namespace flashlab;
using namespace flashlab::test;

namespace {

struct Form {
  Algo algo;
  BackwardForm form;
  const char* name;
};
constexpr Form kForms[] = {{Algo::standard, BackwardForm::released, "standard"},
                           {Algo::v1, BackwardForm::released, "v1"},
                           {Algo::v2, BackwardForm::paper, "v2 paper"},
                           {Algo::v2, BackwardForm::released, "v2 released"},
                           {Algo::v2, BackwardForm::deterministic, "v2 deterministic"}};

Problem problem(const Form& f, std::int64_t n_q, std::int64_t n_k, std::int64_t d, std::int64_t b_r, std::int64_t b_c,
                Mask m, Dtype t, Pass pass = Pass::backward) {
  Config c = config(f.algo, n_q, n_k, d, b_r, b_c);
  c.mask = m;
  c.dtype = t;
  c.pass = pass;
  c.backward_form = f.form;
  return resolve(c);
}

}  // namespace

// The case: N = 2, d = 1, no mask, Q = 0 so P = 1/2 everywhere, dO = [[1], [0]]:
// dV = P^T dO = [[0.5], [0.5]]. Summing dO by the key row instead of the query row gives [[1], [0]].
TEST_CASE("backward: N = 2, d = 1, Q = 0, dO = [[1], [0]] gives dV = [[0.5], [0.5]]") {
  for (const Form& f : kForms) {
    CAPTURE(f.name);
    const Problem p = problem(f, 2, 2, 1, 1, 1, {}, Dtype::fp32);
    Inputs in{MatrixF::Zero(2, 1), MatrixF(2, 1), MatrixF(2, 1), MatrixF(2, 1)};
    in.K << 1, 2;
    in.V << 3, 5;
    in.dO << 1, 0;
    const NumericResult r = simulate(p, in);
    CHECK(r.dV(0, 0) == flashlab::testing::approx(0.5));
    CHECK(r.dV(1, 0) == flashlab::testing::approx(0.5));
    // O = (3 + 5) / 2 = 4 in both rows; D = rowsum(dO o O) = [4, 0]; dP = dO V^T = [[3, 5], [0, 0]];
    // dS = P o (dP - D) = [[-0.5, 0.5], [0, 0]]; dQ = scale dS K = [[0.5], [0]] (scale = 1);
    // dK = scale dS^T Q = 0 (Q = 0)
    CHECK(r.D[0] == flashlab::testing::approx(4));
    CHECK(r.D[1] == flashlab::testing::approx(0));
    CHECK(r.dQ(0, 0) == flashlab::testing::approx(0.5));
    CHECK(r.dQ(1, 0) == flashlab::testing::approx(0));
    CHECK(r.dK.cwiseAbs().maxCoeff() == 0);
  }
}

TEST_CASE("backward: every form, mask and dtype within tolerance_grad of float64, ragged tiles") {
  struct Case {
    std::int64_t n_q, n_k, d, b_r, b_c;
    Mask mask;
  };
  const Case cases[] = {
      {100, 77, 16, 32, 16, {}},
      {100, 77, 16, 32, 16, Mask{MaskKind::causal_tl, 0, 0}},
      {90, 60, 8, 16, 32, Mask{MaskKind::causal_br, 0, 0}},  // rows 0..29 see no key
      {64, 96, 32, 16, 16, Mask{MaskKind::window, 8, 3}},
      {33, 33, 64, 16, 16, Mask{MaskKind::causal_tl, 0, 0}},
  };
  for (const Form& f : kForms)
    for (const Case& c : cases)
      for (Dtype t : kDtypes) {
        CAPTURE(f.name);
        CAPTURE(to_string(c.mask));
        CAPTURE(to_string(t));
        const Problem p = problem(f, c.n_q, c.n_k, c.d, c.b_r, c.b_c, c.mask, t);
        const Inputs in = make_inputs(p, {}, {}, {}, {}, 7);
        const NumericResult r = simulate(p, in);
        const GradError e = compare_grads(r, grad_reference(p, in), p);
        CAPTURE(e.rel_fro_dQ);
        CAPTURE(e.rel_fro_dK);
        CAPTURE(e.rel_fro_dV);
        CHECK(e.finite);
        CHECK(e.within);
        // the forward's outputs come back too
        CHECK(compare(r, reference(p, in), p).within);
      }
}

TEST_CASE("backward: rows with no visible key give dQ = 0 and add nothing to dK, dV") {
  // bottom-right causal, N_q = 12 > N_k = 8: rows 0..3 see no key
  for (const Form& f : kForms) {
    CAPTURE(f.name);
    const Problem p = problem(f, 12, 8, 4, 4, 4, Mask{MaskKind::causal_br, 0, 0}, Dtype::fp16);
    Inputs in = make_inputs(p, {}, {}, {}, {}, 3);
    const NumericResult r = simulate(p, in);
    REQUIRE(r.dQ.allFinite());
    CHECK(r.dQ.topRows(4).cwiseAbs().maxCoeff() == 0);
    // dO of the hidden rows changes nothing: the same run with those rows set to 1000
    Inputs big = in;
    big.dO.topRows(4).setConstant(1000);
    const NumericResult r2 = simulate(p, big);
    CHECK(r2.dK == r.dK);
    CHECK(r2.dV == r.dV);
  }
}

TEST_CASE("backward: --pass both equals the forward then --pass backward") {
  for (const Form& f : kForms) {
    CAPTURE(f.name);
    const Problem b = problem(f, 40, 50, 8, 16, 16, Mask{MaskKind::causal_tl, 0, 0}, Dtype::bf16);
    const Problem both = problem(f, 40, 50, 8, 16, 16, Mask{MaskKind::causal_tl, 0, 0}, Dtype::bf16, Pass::both);
    const Inputs in = make_inputs(b, {}, {}, {}, {}, 11);
    const NumericResult x = simulate(b, in), y = simulate(both, in);
    CHECK(x.dQ == y.dQ);
    CHECK(x.dK == y.dK);
    CHECK(x.dV == y.dV);
    CHECK(x.O == y.O);
  }
}

// V1 and the paper's V2 round dQ_i to the dtype at every step that adds to it; the released
// kernel accumulates in fp32 and rounds once. At fine tiles in fp16 the difference shows.
TEST_CASE("backward: dQ through HBM at every step (V1, paper) loses more than the fp32 accumulator") {
  Form v1{Algo::v1, BackwardForm::released, "v1"}, paper{Algo::v2, BackwardForm::paper, "paper"},
      released{Algo::v2, BackwardForm::released, "released"};
  const auto err = [](const Form& f) {
    const Problem p = problem(f, 256, 256, 16, 16, 4, {}, Dtype::fp16);  // 64 steps per Q block
    const Inputs in = make_inputs(p, {}, {}, {}, {}, 5);
    return compare_grads(simulate(p, in), grad_reference(p, in), p).rel_fro_dQ;
  };
  const double e_v1 = err(v1), e_paper = err(paper), e_rel = err(released);
  CHECK(e_v1 > 2 * e_rel);
  CHECK(e_paper > 2 * e_rel);
}
