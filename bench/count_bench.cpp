// Counting only, V2 causal, N = 131072, d = 128, B_r = B_c = 128 (issue 2): cost per visited tile.
// Target: at most 50 ns per visited tile on one core. The baseline in the same run is a bare loop
// that classifies every tile (tile_class) and adds its visited count: the least any walk must do.
// After the table: count / classify-only, the walk's cost over that floor (ratio_reporter.hpp).
#include <benchmark/benchmark.h>

#include "flashlab/executor/count.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "problems.hpp"
#include "ratio_reporter.hpp"

using namespace flashlab;

namespace {

Problem problem() { return bench::v2_problem(131072, Mask{MaskKind::causal_tl, 0, 0}); }

// st.range(0): 1 to count the 32-byte-sector level too (the sector counter, an observer of the walk).
void BM_count_v2_causal(benchmark::State& st) {
  const Problem p = problem();
  const bool sectors = st.range(0) != 0;
  std::uint64_t visited = 0;
  for (auto _ : st) {
    const Counters k = count(p, sectors);
    visited = k.tiles.visited;
    benchmark::DoNotOptimize(k.cost.flops);
  }
  st.counters["visited_tiles"] = double(visited);
  st.counters["ns_per_visited_tile"] = benchmark::Counter(double(visited) * double(st.iterations()),
                                                          benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// Baseline: classify every tile, nothing else.
void BM_classify_only(benchmark::State& st) {
  const Problem p = problem();
  const Tiling& t = p.tiling;
  std::uint64_t visited = 0;
  for (auto _ : st) {
    visited = 0;
    for (std::int64_t i = 0; i < t.t_r(); ++i)
      for (std::int64_t j = 0; j < t.t_c(); ++j) visited += tile_class(t, p.band, i, j) != TileClass::skipped;
    benchmark::DoNotOptimize(visited);
  }
  st.counters["ns_per_visited_tile"] = benchmark::Counter(double(visited) * double(st.iterations()),
                                                          benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

BENCHMARK(BM_count_v2_causal)->Arg(0)->Arg(1)->ArgName("sectors")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_classify_only)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  return flashlab::bench::run_with_ratios(
      argc, argv, {{"BM_count_v2_causal", "BM_classify_only", "count / classify-only", "the floor any walk pays"}});
}
