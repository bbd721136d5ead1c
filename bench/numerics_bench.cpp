// Numerics, V2, N = 4096, d = 64, fp16, one head (issue 2): the tiled simulation (executor +
// NumericsObserver, FA2 Algorithm 1 tile by tile) against a dense Eigen float
// softmax(scale Q K^T) V on the same inputs, in the same run. Target: ratio tiled / dense <= 1.0.
// The dense baseline gets every advantage: its (N, N) score buffer is allocated once, outside
// the timed loop, and it does no dtype rounding.
#include <benchmark/benchmark.h>

#include "flashlab/numerics/numerics.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "ratio_reporter.hpp"

using namespace flashlab;

namespace {

constexpr std::int64_t kN = 4096, kD = 64;

Problem problem() {
  Config c;
  c.algo = Algo::v2;
  c.n_q = c.n_k = kN;
  c.d = kD;
  c.dtype = Dtype::fp16;  // default tiles for d = 64: B_r = B_c = 128
  return resolve(c);
}

const Inputs& inputs() {
  static const Inputs in = make_inputs(problem(), Fill{}, Fill{}, Fill{}, 1);
  return in;
}

void BM_numerics_v2_tiled(benchmark::State& st) {
  const Problem p = problem();
  const Inputs& in = inputs();
  for (auto _ : st) {
    NumericResult r = simulate(p, in);
    benchmark::DoNotOptimize(r.O.data());
  }
  st.counters["tiles"] = double(p.tiling.t_r() * p.tiling.t_c());
}

void BM_dense_float(benchmark::State& st) {
  const Problem p = problem();
  const Inputs& in = inputs();
  MatrixF S(kN, kN), O(kN, kD);  // (N, N) scores / probabilities, (N, d) output
  const float scale = float(p.scale);
  for (auto _ : st) {
    S.noalias() = scale * (in.Q * in.K.transpose());
    for (Eigen::Index r = 0; r < kN; ++r) {
      auto s = S.row(r).array();
      s = (s - s.maxCoeff()).exp();
      s /= s.sum();
    }
    O.noalias() = S * in.V;
    benchmark::DoNotOptimize(O.data());
  }
}

BENCHMARK(BM_dense_float)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_numerics_v2_tiled)->Unit(benchmark::kMillisecond);

}  // namespace

// The usual table, then tiled / dense (ratio_reporter.hpp).
int main(int argc, char** argv) {
  return flashlab::bench::run_with_ratios(
      argc, argv, {{"BM_numerics_v2_tiled", "BM_dense_float", "tiled / dense", "target <= 1.0"}});
}
