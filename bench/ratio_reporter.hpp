// ratio_reporter.hpp — Google Benchmark's console table, then each benchmark's time over its
// baseline's, both run in the same process: the median time per iteration over the repetitions
// (--benchmark_repetitions=N; one run each by default), in real time and in CPU time (the
// benchmarks are single-threaded: on a shared machine CPU time is the steadier figure).
#pragma once

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>

namespace flashlab::bench {

/// "<label> (<kind> time) = <ratio>  (median <a> ms / <b> ms; <target>)" for each ratio.
struct Ratio {
  std::string benchmark, baseline;  // function names, e.g. "BM_count_v2_causal"
  std::string label;                // e.g. "count / classify-only"
  std::string target;               // e.g. "target <= 1.0"; may be empty
};

class RatioReporter : public benchmark::ConsoleReporter {
 public:
  explicit RatioReporter(std::vector<Ratio> ratios) : ratios_(std::move(ratios)) {}

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
    for (const Ratio& q : ratios_) {
      const auto a = times_.find(q.benchmark), b = times_.find(q.baseline);
      if (a == times_.end() || b == times_.end()) continue;  // filtered out (--benchmark_filter)
      for (const bool real : {true, false}) {
        const double x = median(real ? a->second.real : a->second.cpu);
        const double y = median(real ? b->second.real : b->second.cpu);
        std::printf("ratio %s (%s time) = %.3f  (median %.3f ms / %.3f ms%s%s)\n", q.label.c_str(),
                    real ? "real" : "cpu", x / y, x * 1e3, y * 1e3, q.target.empty() ? "" : "; ", q.target.c_str());
      }
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
  std::vector<Ratio> ratios_;
  std::map<std::string, Times> times_;
};

/// BENCHMARK_MAIN with a RatioReporter.
inline int run_with_ratios(int argc, char** argv, std::vector<Ratio> ratios) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter(std::move(ratios));
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}

}  // namespace flashlab::bench
