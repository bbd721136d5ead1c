// fit_time_model — derives the time model's five constants (time_model.hpp TimeParams) from the
// training rows of the committed H200 data set, and prints them with the errors on both splits.
//
//     build/tools/time_fit/fit_time_model [tests/data/gpu_time/h200.json]
//
// The figures it prints are the ones sim/src/time/time_model.cpp's kFittedTimeParams must hold;
// tests/sim/time/time_dataset_test.cpp checks that they are a fixed point of the fit's search (one
// round of it from them moves none), a third of the full fit's time.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>

#include "flashlab/contract/error.hpp"
#include "time_data.hpp"

namespace {

void report(const char* what, std::vector<double> e) {
  std::sort(e.begin(), e.end());
  if (e.empty()) return;
  auto q = [&](double f) { return e[std::min(e.size() - 1, std::size_t(f * double(e.size())))]; };
  std::printf("%-6s %3zu rows: median |pred/meas - 1| %.1f%%, 95th percentile %.1f%%, max %.1f%%\n", what, e.size(),
              100 * q(0.5), 100 * q(0.95), 100 * e.back());
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc > 1 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
      std::printf("usage: fit_time_model [DATA.json [--rows [--current]]]\n"
                  "Fits the time model's c, beta, lambda, iota, phi on the training rows of DATA.json (default\n"
                  "tests/data/gpu_time/h200.json) and prints the errors on both splits; --rows lists every\n"
                  "row's ratio, --current uses time_model.cpp's constants instead of fitting.\n");
      return 0;
    }
    const std::string path = argc > 1 ? argv[1] : "tests/data/gpu_time/h200.json";
    const auto rows = flashlab::timefit::load_rows(path);
    std::fprintf(stderr, "fit_time_model: %zu rows walked; fitting (a few minutes)...\n", rows.size());
    const bool refit = !(argc > 3 && std::string(argv[3]) == "--current");
    const flashlab::TimeParams p = refit ? flashlab::timefit::fit(rows) : flashlab::kFittedTimeParams;
    std::printf("fitted on the training rows of %s:\n", path.c_str());
    std::printf("  overlap c = %.2f, warp_stream beta = %.2f, latency lambda = %.2f us, issue interval iota = %.1f cycles,\n"
                "  split-K phase floor phi = %.2f\n",
                p.overlap, p.warp_stream, p.latency_s * 1e6, p.issue_interval, p.phase_floor);
    report("train", flashlab::timefit::errors(rows, "train", p));
    report("test", flashlab::timefit::errors(rows, "test", p));
    for (const char* split : {"train", "test"}) {
      const std::vector<double> e = flashlab::timefit::dram_errors(rows, split);
      const auto within = std::count_if(e.begin(), e.end(), [](double x) { return x <= 0.10; });
      std::printf("%-6s DRAM reads (the L2 model's) within 10%% of Nsight Compute's on %td of %zu rows\n", split, within,
                  e.size());
    }
    if (argc > 2 && std::string(argv[2]) == "--rows")
      for (const auto& r : rows)
        if (r.skipped.empty()) {
          const auto t = r.predict(p);
          std::printf("%.3f\t%s\t%s\t%s\tdram %.3f", t.time_s / r.measured(), r.split.c_str(), r.family.c_str(),
                      r.flags.c_str(), flashlab::timefit::predicted_dram_read(r) / flashlab::timefit::measured_dram_read(r));
          for (std::size_t l = 0; l < t.launches.size(); ++l)
            std::printf("\t%s %.3f", t.launches[l].name.c_str(), t.launches[l].time_s / r.measured_s[l]);
          std::printf("\n");
        }
    return 0;
  } catch (const flashlab::ConfigError& e) {
    std::fprintf(stderr, "fit_time_model: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fit_time_model: error: %s\n", e.what());
    return 1;
  }
}
