// numerics_util.hpp — small helpers shared by the numerics tests.
#pragma once

#include <cstdint>
#include <map>

#include "flashlab/executor/executor.hpp"
#include "flashlab/numerics/numerics.hpp"
#include "../../common/config_helpers.hpp"

namespace flashlab::test {

/// A config with explicit sizes in fp32 (no mask, the algorithm's default block skip).
inline Config config(Algo a, std::int64_t n_q, std::int64_t n_k, std::int64_t d, std::int64_t b_r, std::int64_t b_c) {
  Config c = small(a, n_q, n_k, d, b_r, b_c);
  c.dtype = Dtype::fp32;
  return c;
}

/// Counts the visited tiles (and the partial ones among them) of each Q block.
struct VisitCounter final : StepObserver {
  std::map<std::int64_t, int> visited, partial;
  int total = 0;
  void on_step(const StepView& s) override {
    if (s.level != Level::inner || s.skip) return;
    ++visited[s.i];
    ++total;
    if (s.cls == TileClass::partial) ++partial[s.i];
  }
};

/// Runs p with numerics and a visit counter on the same executor.
inline NumericResult run(const Problem& p, const Inputs& in, VisitCounter* visits = nullptr,
                         NumericsOptions opt = {}) {
  NumericsObserver numerics(p, in, std::move(opt));
  Executor e(p);
  e.add_observer(&numerics);
  if (visits) e.add_observer(visits);
  e.run();
  return numerics.result();
}

/// x rounded to dtype t by round_to_dtype.
inline float round1(Dtype t, float x) {
  MatrixF m(1, 1);
  m(0, 0) = x;
  round_to_dtype(t, m);
  return m(0, 0);
}

inline constexpr Algo kAlgos[] = {Algo::standard, Algo::v1, Algo::v2};
inline constexpr Dtype kDtypes[] = {Dtype::fp32, Dtype::fp16, Dtype::bf16};

}  // namespace flashlab::test
