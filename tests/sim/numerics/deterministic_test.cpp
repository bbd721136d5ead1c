// FA2's deterministic backward: dQ does not depend on the order in which the main kernel's thread
// blocks run, the released (atomic) form's does. The steps of one run are replayed into the
// numerics in two legal orders — the main launch's thread blocks as dispatched, then in reverse
// (each block's own steps in order; the launches before and after unchanged) — and compared.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "flashlab/schedule/resolve.hpp"
#include "numerics_util.hpp"

using namespace flashlab;
using namespace flashlab::test;

namespace {

// Every step of a run, as the executor handed it over (the actions point into the executor's
// schedule, which outlives the replay).
struct Recorded final : StepObserver {
  std::vector<StepView> steps;
  void on_step(const StepView& s) override {
    steps.push_back(s);
    steps.back().cost = nullptr;
  }
};

Problem det_problem(BackwardForm form) {
  // 4 x 11 = 44 (batch, head) pairs on 132 SMs: nsplits = 3; T_c = 8, so the slices take the
  // contributions of K/V blocks {0, 3, 6}, {1, 4, 7}, {2, 5}
  Config c = config(Algo::v2, 128, 128, 16, 16, 16);
  c.batch = 4;
  c.heads = 11;
  c.pass = Pass::both;  // the forward's steps too, so the numerics get O and L from the walk
  c.backward_form = form;
  return resolve(c);
}

// dQ, dK, dV of the steps replayed with the main backward launch's thread blocks in `reverse`d
// dispatch order.
NumericResult replay(const Problem& p, const Inputs& in, const std::vector<StepView>& steps, std::uint16_t main,
                     bool reverse) {
  std::vector<StepView> order = steps;
  if (reverse) {
    const auto first = std::find_if(order.begin(), order.end(), [&](const StepView& s) { return s.launch == main; });
    const auto last = std::find_if(first, order.end(), [&](const StepView& s) { return s.launch != main; });
    // blocks in reverse, each block's steps in their own order
    std::stable_sort(first, last, [](const StepView& a, const StepView& b) { return a.block > b.block; });
  }
  NumericsObserver numerics(p, in);
  for (const StepView& s : order) numerics.on_step(s);
  return numerics.result();
}

}  // namespace

TEST_CASE("deterministic backward: dQ the same bit for bit in any thread-block order, released: not") {
  for (const BackwardForm form : {BackwardForm::released, BackwardForm::deterministic}) {
    const Problem p = det_problem(form);
    CAPTURE(to_string(form));
    const Inputs in = make_inputs(p, {}, {}, {}, {}, 5);
    Recorded rec;
    Executor e(p);
    e.add_observer(&rec);
    e.run();
    const std::uint16_t main = 2;  // the forward's v2_forward, then dot_do_o, then the main kernel
    REQUIRE(std::any_of(rec.steps.begin(), rec.steps.end(), [&](const StepView& s) { return s.launch == main && s.j >= 0; }));
    const NumericResult a = replay(p, in, rec.steps, main, false), b = replay(p, in, rec.steps, main, true);
    REQUIRE(a.dQ.allFinite());
    REQUIRE(b.dQ.allFinite());
    // dK_j and dV_j are each one thread block's own: the same in both orders, in both forms
    CHECK(a.dK == b.dK);
    CHECK(a.dV == b.dV);
    const float diff = (a.dQ - b.dQ).cwiseAbs().maxCoeff();
    if (form == BackwardForm::deterministic) {
      CHECK(p.dq_splits == 3);
      CHECK(a.dQ == b.dQ);  // each slice's additions in the block's own walk order, slices in order
    } else {
      // the atomics reach dQacc in dispatch order: reversed, fp32 rounds the sums differently
      CHECK(a.dQ != b.dQ);
      CHECK(diff > 0);
    }
    // both within a few units of roundoff of each other (the order changes rounding only)
    const float scale = a.dQ.cwiseAbs().maxCoeff();
    CHECK(diff <= 1e-5f * scale);
  }
}

