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

#include "flashlab/numerics/numerics.hpp"

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

// Prints the usual table, then tiled / dense from the median time per iteration over the
// repetitions (--benchmark_repetitions=N; one run each by default), in real time and in CPU time
// (the benchmark is single-threaded: on a shared machine its CPU time is the steadier figure).
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      const bool median = r.run_type == Run::RT_Aggregate && r.aggregate_name == "median";
      if (r.iterations <= 0 || !(r.run_type == Run::RT_Iteration || median)) continue;
      Times& t = times_[r.run_name.function_name];
      if (median && !t.medians) {  // the aggregate replaces the single runs
        t.medians = true;
        t.real.clear();
        t.cpu.clear();
      } else if (!median && t.medians) {
        continue;
      }
      t.real.push_back(r.real_accumulated_time / double(r.iterations));
      t.cpu.push_back(r.cpu_accumulated_time / double(r.iterations));
    }
    ConsoleReporter::ReportRuns(runs);
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    const auto tiled = times_.find("BM_numerics_v2_tiled"), dense = times_.find("BM_dense_float");
    if (tiled == times_.end() || dense == times_.end()) return;
    for (const char* kind : {"real", "cpu"}) {
      const bool real = kind[0] == 'r';
      const double t = median(real ? tiled->second.real : tiled->second.cpu);
      const double d = median(real ? dense->second.real : dense->second.cpu);
      std::printf("ratio tiled / dense (%s time) = %.3f  (median %.1f ms / %.1f ms; target <= 1.0)\n", kind, t / d,
                  t * 1e3, d * 1e3);
    }
  }

 private:
  struct Times {
    bool medians = false;  // filled from the median aggregates
    std::vector<double> real, cpu;
  };
  static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }
  std::map<std::string, Times> times_;
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
