// Writing the binary trace of V2 causal, N = 32768, d = 128, B_r = B_c = 128 (issue 3), against
// writing the same number of bytes with plain fwrite in the same run. Target: the trace writer's
// throughput is at least half of fwrite's. Three ways to write the trace are timed:
//   BM_trace_stream     the `flashlab trace` path: executor + events + binary writer, streaming
//   BM_trace_recorded   the writer alone: a recorded trace (events in memory) to a file
//   BM_fwrite_baseline  fopen, fwrite in 1 MiB chunks, fclose of the same number of bytes
// All write to the same temporary folder; the ratios are printed after the table.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>

#include "flashlab/executor/executor.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "flashlab/trace/trace_io.hpp"
#include "problems.hpp"

using namespace flashlab;

namespace {

Problem problem() { return bench::v2_problem(32768, Mask{MaskKind::causal_tl, 0, 0}); }

std::string out_path(const char* name) {
  return (std::filesystem::temp_directory_path() / (std::string("flashlab_bench_") + name)).string();
}

const Trace& recorded() {
  static const Trace t = record_trace(problem(), TraceLevel::block);
  return t;
}

std::uint64_t trace_bytes() {
  static const std::uint64_t n = encode_trace(recorded(), TraceFormat::binary).size();
  return n;
}

void BM_trace_stream(benchmark::State& st) {
  const Problem p = problem();
  TraceHeader h;
  h.config = resolved_config(p);
  const std::string path = out_path("stream.trace");
  for (auto _ : st) {
    TraceFileWriter w(path, p, h, TraceFormat::binary);
    Executor ex(p);
    ex.add_observer(&w);
    ex.run();
    w.finish();
  }
  const auto size = std::filesystem::file_size(path);
  st.SetBytesProcessed(std::int64_t(size) * st.iterations());
  st.counters["file_bytes"] = double(size);
  std::filesystem::remove(path);
}

void BM_trace_recorded(benchmark::State& st) {
  const Trace& t = recorded();
  const std::string path = out_path("recorded.trace");
  for (auto _ : st) write_trace(path, t, TraceFormat::binary);
  st.SetBytesProcessed(std::int64_t(std::filesystem::file_size(path)) * st.iterations());
  std::filesystem::remove(path);
}

void BM_fwrite_baseline(benchmark::State& st) {
  const std::uint64_t total = trace_bytes();
  const std::string chunk(std::size_t(1) << 20, 'x');
  const std::string path = out_path("fwrite.bin");
  for (auto _ : st) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    for (std::uint64_t left = total; left > 0;) {
      const std::size_t n = std::size_t(std::min<std::uint64_t>(left, chunk.size()));
      std::fwrite(chunk.data(), 1, n, f);
      left -= n;
    }
    std::fclose(f);
  }
  st.SetBytesProcessed(std::int64_t(total) * st.iterations());
  std::filesystem::remove(path);
}

BENCHMARK(BM_trace_stream)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_trace_recorded)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_fwrite_baseline)->Unit(benchmark::kMillisecond)->MinTime(2.0);

// Keeps each benchmark's bytes per second, by wall-clock time and by CPU time, so that the
// ratios to the fwrite baseline can be printed after the table.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.run_type != Run::RT_Iteration) continue;
      const double bytes = r.counters.at("bytes_per_second").value * r.cpu_accumulated_time;  // total bytes
      rate_[r.run_name.function_name] = {bytes / r.real_accumulated_time, bytes / r.cpu_accumulated_time};
    }
    ConsoleReporter::ReportRuns(runs);
  }
  void print_ratios() const {
    const auto base = rate_.find("BM_fwrite_baseline");
    if (base == rate_.end()) return;
    std::printf("fwrite baseline: %.0f MB/s wall-clock, %.0f MB/s CPU\n", base->second.first / 1e6,
                base->second.second / 1e6);
    for (const char* name : {"BM_trace_stream", "BM_trace_recorded"}) {
      const auto it = rate_.find(name);
      if (it == rate_.end()) continue;
      std::printf("%s: %.0f MB/s wall-clock = %.2f x fwrite, %.0f MB/s CPU = %.2f x fwrite (target >= 0.50)\n", name,
                  it->second.first / 1e6, it->second.first / base->second.first, it->second.second / 1e6,
                  it->second.second / base->second.second);
    }
  }

 private:
  std::map<std::string, std::pair<double, double>> rate_;  // wall-clock, CPU bytes per second
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  std::printf("trace: V2 causal, N = 32768, d = 128, B_r = B_c = 128: %zu events, %llu bytes (binary)\n",
              recorded().events.size(), static_cast<unsigned long long>(trace_bytes()));
  RatioReporter rep;
  benchmark::RunSpecifiedBenchmarks(&rep);
  rep.print_ratios();
  benchmark::Shutdown();
  return 0;
}
