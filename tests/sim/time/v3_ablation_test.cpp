// The analytic time model's V3 (docs/model.md "Time model", "V3"; sim/src/time/v3_work.cpp) against the
// staged kernel's Nsight ablation on the H200 (issue 27 item 5): each switch turned off at 8 shapes,
// the speed relative to FA3's defaults, predicted (`model`'s time of FA3 over the variant's, the kernel's
// tile) beside the measured (tests/data/gpu_v3/v3_ablation.json over v3_ncu.json's FA3 row, medians;
// v3_ablation_rows.hpp). scripts/check/v3_kernel_extra.py sets the same figures on
// docs/validation/v3_h200.md from the CLI.
//
// No warp specialization (the kernel's variant: also ping-pong off and the grid scheduler) is the
// switch whose rule was written against these rows (v3_work.cpp phased_groups: warpgroup 0 issues the
// loads in line and waits at each stage's empty barrier for the others). The rule has no constant of
// its own; the rows are the check, not a fit.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>

#include "flashlab/schedule/resolve.hpp"
#include "flashlab/time/time_model.hpp"
#include "v3_ablation_rows.hpp"

using namespace flashlab;

namespace {

/// The analytic model's speed of an ablation row relative to FA3's defaults (> 1: faster).
double predicted(const test::AblationRow& a) {
  const Modelled base = model(resolve(a.fa3)), variant = model(resolve(a.config));
  REQUIRE(base.timed);
  REQUIRE(variant.timed);
  return base.time.time_s / variant.time.time_s;
}

constexpr double kTolerance = 0.10;  // issue 27 item 5: the prediction within 10% of the measured

}  // namespace

// At run 5 (e6eda3e) before the rule: 2 of 8 within 10% (predicted 0.88-0.96, measured 0.69-0.91); with
// it 6 of 8, the two outside within 12% (d 64 none N 16384, d 128 causal N 16384).
TEST_CASE("V3 ablation (analytic): no warp specialization within 10% of the measured on 6 of 8 shapes and 15% on all") {
  int rows = 0, within = 0;
  for (const test::AblationRow& a : test::ablation_rows()) {
    if (a.variant != "no_ws") continue;
    ++rows;
    const double pred = predicted(a), err = pred / a.measured - 1;
    std::printf("v3 ablation  %-28s predicted %.3f  measured %.3f  (%+.1f%%)\n", a.name.c_str(), pred, a.measured,
                100 * err);
    within += std::abs(err) <= kTolerance;
    CAPTURE(a.name);
    CHECK(std::abs(err) <= 0.15);
    CHECK((pred < 1.0) == (a.measured < 1.0));  // slower than FA3 where the kernel measured it slower
  }
  CHECK(rows == 8);
  CHECK(within >= 6);
}

// Every switch: the count within 10% (the page's "N predictions outside 10%"), at least the 35 of 40 of
// run 5; every row within 10% is the target, not met (stages1 at d 64 none N 4096, d 128 causal
// N 4096; no_overlap at d 64 causal N 16384; the two no_ws rows above).
TEST_CASE("V3 ablation (analytic): at least 35 of the 40 rows within 10% of the measured") {
  int within = 0;
  for (const test::AblationRow& a : test::ablation_rows()) {
    const double pred = predicted(a), err = pred / a.measured - 1;
    std::printf("v3 ablation  %-28s predicted %.3f  measured %.3f  (%+.1f%%)%s\n", a.name.c_str(), pred, a.measured,
                100 * err, std::abs(err) <= kTolerance ? "" : "  outside 10%");
    within += std::abs(err) <= kTolerance;
  }
  std::printf("v3 ablation  %d of %zu rows within 10%%\n", within, test::ablation_rows().size());
  CHECK(test::ablation_rows().size() == 40);
  CHECK(within >= 35);
}

TEST_CASE("V3 ablation (analytic): every row within 10% of the measured" * doctest::should_fail()) {
  for (const test::AblationRow& a : test::ablation_rows()) {
    CAPTURE(a.name);
    CHECK(std::abs(predicted(a) / a.measured - 1) <= kTolerance);  // (doctest::Approx's epsilon is of 1 + the value)
  }
}
