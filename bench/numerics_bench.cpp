// Numerics, V2, N = 4096, d = 64, fp16, one head (issue 2): the tiled simulation (executor +
// NumericsObserver, FA2 Algorithm 1 tile by tile) against a dense Eigen float
// softmax(scale Q K^T) V on the same inputs, in the same run. Target: ratio tiled / dense <= 1.0.
// The dense baseline gets every advantage: its (N, N) score buffer is allocated once, outside
// the timed loop, and it does no dtype rounding.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "flashlab/numerics.hpp"

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

// Prints the usual table, then tiled / dense from the median real time per iteration over the
// repetitions (--benchmark_repetitions=N; one run each by default).
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs)
      if (r.run_type == Run::RT_Iteration && r.iterations > 0)
        seconds_[r.run_name.function_name].push_back(r.real_accumulated_time / double(r.iterations));
    ConsoleReporter::ReportRuns(runs);
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    const auto tiled = seconds_.find("BM_numerics_v2_tiled"), dense = seconds_.find("BM_dense_float");
    if (tiled == seconds_.end() || dense == seconds_.end()) return;
    const double t = median(tiled->second), d = median(dense->second);
    std::printf("ratio tiled / dense = %.3f  (median %.1f ms / %.1f ms over %zu / %zu runs; target <= 1.0)\n",
                t / d, t * 1e3, d * 1e3, tiled->second.size(), dense->second.size());
  }

 private:
  static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }
  std::map<std::string, std::vector<double>> seconds_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
