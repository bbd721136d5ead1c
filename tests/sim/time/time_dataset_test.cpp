// The time model against the committed H200 data set (issue 23): tests/data/gpu_time/h200.json,
// written by scripts/gpu/time_dataset.py (every launch timed kernel-only by Nsight Compute, this
// project's kernels and PyTorch's FA2 alike), split into training and test rows by a hash of each
// row's flags (scripts/gpu/time_configs.py split_of). The constants are fitted on the training rows
// only (tools/time_fit); the model is scored on both, and the page
// docs/validation/time_model_h200.md is generated here (FLASHLAB_WRITE_DOCS=1 rewrites it).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "../../common/generated_doc.hpp"
#include "flashlab/executor/executor.hpp"
#include "flashlab/trace/trace.hpp"
#include "same_run_checks.hpp"
#include "time_data_files.hpp"
#include "../../common/approx.hpp"

using namespace flashlab;

namespace {

// The fit's round predicts every training row 389 times (half a minute in the release build): the
// sanitizer run, which finds memory errors and not numbers, leaves it and the L2 model's score out.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

nlohmann::json data() { return test::time_data_json("h200.json"); }

const std::vector<timefit::Row>& rows() { return test::time_data_rows("h200.json"); }

struct Score {
  std::size_t n = 0;
  double median = 0, p95 = 0, max = 0;
};

Score score(std::vector<double> e) {
  std::sort(e.begin(), e.end());
  Score s;
  s.n = e.size();
  if (e.empty()) return s;
  auto q = [&](double f) { return e[std::min(e.size() - 1, std::size_t(f * double(e.size())))]; };
  s.median = q(0.5), s.p95 = q(0.95), s.max = e.back();
  return s;
}

}  // namespace

TEST_CASE("time data set: at least 200 timed runs of every kind, on the H200, with their kernel sources' hash") {
  const nlohmann::json d = data();
  CHECK(d["meta"]["gpu"] == "NVIDIA H200");
  CHECK(d["meta"]["kernel_sources_sha256"].get<std::string>().size() == 64);
  CHECK(d["ours"].size() + d["torch"].size() >= 200);
  std::map<std::string, int> kinds;
  for (const auto& r : rows()) ++kinds[r.family.substr(0, r.family.find(' '))];
  for (const char* k : {"v2", "v1", "standard", "variant", "backward", "split-KV", "fa2", "torch"}) {
    CAPTURE(k);
    CHECK(kinds[k] >= 5);
  }
  // a third of the rows or more are held out, and every row has its samples
  std::size_t test = 0;
  for (const auto& r : rows()) {
    test += r.split == "test";
    for (double t : r.measured_s) CHECK(t > 0);
  }
  CHECK(3 * test >= rows().size());
}

TEST_CASE("time data set: every timed kernel instance was checked in the same run — events and numbers, recomputed here") {
  flashlab::test::check_same_run_checks(data());
}

// The committed constants are where tools/time_fit's search stops: one round of it from them (every
// grid value of each constant, the others held) finds no lower loss, so it moves none of them. A
// constant one grid step off its fitted value fails here (the round moves it back). The full fit from
// its fixed start is `build/tools/time_fit/fit_time_model` (about five minutes on two cores).
TEST_CASE("time model: the fitted constants are a fixed point of tools/time_fit's search over the training rows" *
          doctest::skip(kSanitized)) {
  const TimeParams& k = kFittedTimeParams;
  const timefit::SearchRound round = timefit::search_round(rows(), k);
  CHECK(round.tried == 91 + 76 + 101 + 121 + 51);  // the grids of c, beta, lambda, iota and phi, each in full
  // the grids hold the doubles nearest the decimals time_model.cpp writes (0.96 is 48 / 50.0): the
  // loss there is the same to its last bits, the relative 1e-12 and Approx's 1e-9 only for other compilers
  CHECK(round.start_loss <= round.lowest_tried_loss * (1 + 1e-12));
  CHECK(round.best.overlap == flashlab::testing::approx(k.overlap).epsilon(1e-9));
  CHECK(round.best.warp_stream == flashlab::testing::approx(k.warp_stream).epsilon(1e-9));
  CHECK(round.best.latency_s == flashlab::testing::approx(k.latency_s).epsilon(1e-9));
  CHECK(round.best.issue_interval == flashlab::testing::approx(k.issue_interval).epsilon(1e-9));
  CHECK(round.best.phase_floor == flashlab::testing::approx(k.phase_floor).epsilon(1e-9));
}

// Issue 23's targets, on the held-out rows and on the training rows alike.
void check_targets(const char* split) {
  const Score s = score(timefit::errors(rows(), split, kFittedTimeParams));
  CHECK(s.median <= 0.08);
  CHECK(s.p95 <= 0.20);
  CHECK(s.max <= 0.30);
}

TEST_CASE("time model: held-out rows within issue 23's targets (median 8%, 95th percentile 20%, max 30%)") {
  check_targets("test");
}

// The same targets on the training rows, so that a reader sees both (the generated page lists every
// row outside 20%).
TEST_CASE("time model: training rows within issue 23's targets (median 8%, 95th percentile 20%, max 30%)") {
  check_targets("train");
}

// Issue 23's "Done means": `--kernel fa2` times within 10% of FA2's kernel durations on the test set,
// with the same rules as this project's kernels. The rows are PyTorch 2.11's FA2 calls (forward,
// split-KV with its combine, backward's three launches), timed by Nsight Compute in the same data set;
// the model predicts each as `--kernel fa2 --algo v2` with the call's shape (timefit::simulator_flags).
TEST_CASE("time model: --kernel fa2 within 10% of PyTorch's FA2 kernels on every held-out row") {
  int n = 0;
  for (const timefit::Row& r : rows()) {
    if (r.split != "test" || r.flags.rfind("torch ", 0) != 0) continue;
    REQUIRE(r.skipped.empty());
    const double ratio = r.predict(kFittedTimeParams).time_s / r.measured();
    CAPTURE(r.flags);
    CAPTURE(ratio);
    CHECK(std::abs(ratio - 1) <= 0.10);
    ++n;
  }
  CHECK(n >= 10);  // the data set's held-out FA2 calls: forward, split-KV and backward
}

// Issue 23 item 6: the L2 model's DRAM reads within 10% of Nsight Compute's on at least 95% of the
// held-out rows (those that read at least 1 MiB), and of the training rows; the rows outside are
// listed on the generated page.
TEST_CASE("L2 model: DRAM reads within 10% of Nsight Compute's on 95% of the held-out rows" * doctest::skip(kSanitized)) {
  for (const char* split : {"test", "train"}) {
    const std::vector<double> e = timefit::dram_errors(rows(), split);
    REQUIRE(e.size() >= 90);
    const auto within = std::count_if(e.begin(), e.end(), [](double x) { return x <= 0.10; });
    const std::string which = split;
    CAPTURE(which);
    CHECK(double(within) >= 0.95 * double(e.size()));
  }
}

TEST_CASE("time model: docs/validation/time_model_h200.md is this test's page (FLASHLAB_WRITE_DOCS=1 rewrites it)") {
  const nlohmann::json d = data();
  const nlohmann::json& m = d["meta"];
  std::string doc = fmt::format(
      "# Time model against the H200\n\n"
      "Generated by `FLASHLAB_WRITE_DOCS=1 build/tests/sim/test_sim -tc=\"time model: docs*\"`\n"
      "(tests/sim/time/time_dataset_test.cpp) from the committed data set tests/data/gpu_time/h200.json,\n"
      "written by `scripts/gpu/time_dataset.py` (configurations: `scripts/gpu/time_configs.py`). Every launch is\n"
      "timed kernel-only by Nsight Compute (`gpu__time_duration.sum`, {}), this project's kernels and\n"
      "PyTorch's FA2 alike; a row's time is the sum of its launches', the mean of its samples.\n\n"
      "| | |\n|---|---|\n| GPU | {} (driver {}) |\n| PyTorch | {} |\n| Nsight Compute | {} |\n"
      "| kernel sources (sha256 of kernels/**) | `{}` |\n| commit | {} |\n| date | {} |\n\n",
      m["ncu_flags"].get<std::string>(), m["gpu"].get<std::string>(), m["driver"].get<std::string>(),
      m["torch"].get<std::string>(), m["ncu"].get<std::string>(), m["kernel_sources_sha256"].get<std::string>(),
      m["commit"].get<std::string>(), m["date"].get<std::string>());
  const TimeParams& p = kFittedTimeParams;
  doc += fmt::format(
      "The model's five constants, fitted on the training rows only by `build/tools/time_fit/fit_time_model`\n"
      "(a coordinate search minimising the mean |ln(predicted / measured)|): overlap c = {:.2f}, warp stream\n"
      "beta = {:.2f}, extra round-trip latency lambda = {:.2f} us (beside the measured L2-hit and DRAM latencies),\n"
      "issue interval iota = {:.1f} cycles, split-K phase floor phi = {:.2f} (docs/model.md \"Time model\"). No\n"
      "other constant is fitted; no kernel, family or library has a factor of its own.\n\n",
      p.overlap, p.warp_stream, p.latency_s * 1e6, p.issue_interval, p.phase_floor);
  doc += "| split | rows | median \\|pred/meas - 1\\| | 95th percentile | max | issue 23's target |\n|---|---|---|---|---|---|\n";
  for (const char* split : {"train", "test"}) {
    const Score s = score(timefit::errors(rows(), split, p));
    doc += fmt::format("| {} | {} | {:.1f}% | {:.1f}% | {:.1f}% | 8% / 20% / 30% |\n", split, s.n, 100 * s.median,
                       100 * s.p95, 100 * s.max);
  }
  // per family, both splits
  std::map<std::string, std::vector<double>> fam[2];
  for (const auto& r : rows())
    if (r.skipped.empty())
      fam[r.split == "test"][r.family].push_back(std::abs(r.predict(p).time_s / r.measured() - 1));
  doc += "\n## Per kind of run\n\n| kind | train rows | train median | test rows | test median | test max |\n|---|---|---|---|---|---|\n";
  std::map<std::string, int> names;
  for (const auto& f : fam) for (const auto& [k, v] : f) names[k] = 1;
  for (const auto& [k, unused] : names) {
    const Score a = score(fam[0][k]), b = score(fam[1][k]);
    doc += fmt::format("| {} | {} | {:.1f}% | {} | {:.1f}% | {:.1f}% |\n", k, a.n, 100 * a.median, b.n, 100 * b.median,
                       100 * b.max);
  }
  doc += "\n## Rows outside the targets (|predicted / measured - 1| > 20%)\n\n| split | ratio | kind | flags |\n|---|---|---|---|\n";
  int outside = 0;
  for (const auto& r : rows()) {
    if (!r.skipped.empty()) continue;
    const double ratio = r.predict(p).time_s / r.measured();
    if (std::abs(ratio - 1) <= 0.20) continue;
    ++outside;
    doc += fmt::format("| {} | {:.3f} | {} | `{}` |\n", r.split, ratio, r.family, r.flags);
  }
  doc += fmt::format("\n{} rows outside 20%.\n\n", outside);
  // issue 23 item 6: the L2 model's DRAM reads against Nsight Compute's dram__bytes_read.sum
  doc += "## DRAM reads: the L2 model against Nsight Compute\n\nRows that read at least 1 MiB from DRAM "
         "(issue 23's target: within 10% on at least 95% of the held-out rows).\n\n"
         "| split | rows | within 10% | target |\n|---|---|---|---|\n";
  for (const char* split : {"train", "test"}) {
    const std::vector<double> e = timefit::dram_errors(rows(), split);
    const auto within = std::count_if(e.begin(), e.end(), [](double x) { return x <= 0.10; });
    doc += fmt::format("| {} | {} | {} ({:.1f}%) | 95% |\n", split, e.size(), within, 100.0 * double(within) / double(e.size()));
  }
  doc += "\n| split | predicted / measured DRAM reads | kind | flags |\n|---|---|---|---|\n";
  for (const auto& r : rows()) {
    if (!r.skipped.empty() || timefit::measured_dram_read(r) < double(1 << 20)) continue;
    const double ratio = timefit::predicted_dram_read(r) / timefit::measured_dram_read(r);
    if (std::abs(ratio - 1) > 0.10) doc += fmt::format("| {} | {:.3f} | {} | `{}` |\n", r.split, ratio, r.family, r.flags);
  }
  doc += "\n## Rows not predicted\n\n";
  for (const auto& r : rows())
    if (!r.skipped.empty()) doc += fmt::format("- `{}`: {}\n", r.flags, r.skipped);
  flashlab::test::check_generated_doc("docs/validation/time_model_h200.md", doc);
}
