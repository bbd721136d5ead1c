// The L2 model's cost (issue 11): `count` of a config with 10^6 visited tiles — V2, N = 131072,
// d = 128, B_r = B_c = 128, no mask, one head: 1024 x 1024 tiles — with the L2/DRAM levels and the
// time model, against the counting walk alone, both in this process. Target: at most 2 s per count
// on one core (the ns_per_visited_tile counter gives the absolute figure; the ratio after the
// table is the price of the L2 model over the walk).
#include <benchmark/benchmark.h>

#include "flashlab/executor/count.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "flashlab/time/time_model.hpp"
#include "problems.hpp"
#include "ratio_reporter.hpp"

using namespace flashlab;

namespace {

Problem problem() { return bench::v2_problem(131072); }

void report(benchmark::State& st, std::uint64_t visited) {
  st.counters["visited_tiles"] = double(visited);
  st.counters["ns_per_visited_tile"] = benchmark::Counter(double(visited) * double(st.iterations()),
                                                          benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// Baseline: the counting walk alone (HBM requests, FLOPs, ops, tiles).
void BM_count_walk(benchmark::State& st) {
  const Problem p = problem();
  std::uint64_t visited = 0;
  for (auto _ : st) {
    const Counters k = count(p);
    visited = k.tiles.visited;
    benchmark::DoNotOptimize(k.cost.flops);
  }
  report(st, visited);
}

// The walk with the L2 model observing it and its replay (Counters::levels[l2], [dram]).
void BM_count_l2(benchmark::State& st) {
  const Problem p = problem();
  std::uint64_t visited = 0;
  for (auto _ : st) {
    const Counters k = count(p, false, true);
    visited = k.tiles.visited;
    benchmark::DoNotOptimize(k.levels[int(Memory::dram)][0][0]);
  }
  report(st, visited);
}

// What `flashlab count` runs: the walk with the sector level, the L2 model and the time model.
void BM_count_model(benchmark::State& st) {
  const Problem p = problem();
  std::uint64_t visited = 0;
  for (auto _ : st) {
    const Modelled m = model(p);
    visited = m.counters.tiles.visited;
    benchmark::DoNotOptimize(m.time.time_s);
  }
  report(st, visited);
}

BENCHMARK(BM_count_walk)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_count_l2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_count_model)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  return flashlab::bench::run_with_ratios(
      argc, argv,
      {{"BM_count_l2", "BM_count_walk", "count with the L2 model / counting walk alone", ""},
       {"BM_count_model", "BM_count_walk", "count with sectors, L2 and time models / counting walk alone",
        "absolute target: <= 2 s per count"}});
}
