// The analytic time model's V3 (docs/model.md "Time model", "V3"; sim/src/time/v3_work.cpp) against the
// staged kernel's Nsight ablation on the H200 (issue 27 item 5): each switch turned off at 8 shapes,
// the speed relative to FA3's defaults, predicted (`model`'s time of FA3 over the variant's, the kernel's
// tile) beside the measured (tests/data/gpu_v3/v3_ablation.json over v3_ncu.json's FA3 row, medians;
// v3_ablation_rows.hpp). scripts/check/v3_kernel_predicted.py sets the same figures on
// docs/validation/v3_h200.md from the CLI.
//
// No warp specialization (the kernel's variant: also ping-pong off and the grid scheduler) is the
// switch whose rule was written against these rows (v3_work.cpp phased_groups: warpgroup 0 issues the
// loads in line and waits at each stage's empty barrier for the others). The rule has no constant of
// its own; the rows are the check, not a fit.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <string>

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

/// Every row of `variant` (8 shapes) within kTolerance of the measured, and slower than FA3 where the
/// kernel measured it slower; each row printed.
void check_variant(const std::string& variant) {
  int rows = 0;
  for (const test::AblationRow& a : test::ablation_rows()) {
    if (a.variant != variant) continue;
    ++rows;
    const double pred = predicted(a), err = pred / a.measured - 1;
    std::printf("v3 ablation  %-28s predicted %.3f  measured %.3f  (%+.1f%%)\n", a.name.c_str(), pred, a.measured,
                100 * err);
    CAPTURE(a.name);
    CHECK(std::abs(err) <= kTolerance);
    if (std::abs(a.measured - 1) > 0.02) CHECK((pred < 1.0) == (a.measured < 1.0));  // the side, where it is clear
  }
  CHECK(rows == 8);
}

}  // namespace

// Validation run 6 (f0d5b23, the data committed): every shape within 10% with the constants of 8e50de5
// (c 0.90, beta 0.56; worst d 64 none N 16384, predicted 0.767, measured 0.707, +8.6%). Before the rule 1 of
// 8 (predicted 0.88-0.96, measured 0.71-0.87). Run 5 (e6eda3e): 6 of 8 with the rule, 2 before. The refit
// of issue 23's shared deal and split-K phase floor (c 1.00, beta 0.78, fitted on V1/V2/FA2 rows only)
// raised the rule's streams at d 64 (1 + beta: 1.56 -> 1.78) and moved d 128 causal: 5 of 8 (d 64 none
// +14.1%, d 64 causal +10.6%, d 128 causal -10.0%). With the additive streams rule (s = k + beta (W/4 -
// 1): c 0.96, beta 0.72) 7 of 8: d 64 none N 16384 +12.8% (+15.2% since P~ is in registers on that
// 192 x 128 tile, fa3_p_in_registers; +13.8% since the round follows the compiled loop). All 8 again
// since the round counts the other warpgroups' GEMMs queued beside a warpgroup's own where ping-pong
// does not order them (v3_work.cpp consumer_round; the kernel's variant has ping-pong off): d 64 none
// N 16384 0.771 against 0.707 (+9.1%).
TEST_CASE("V3 ablation (analytic): no warp specialization within 10% of the measured on all 8 shapes") {
  check_variant("no_ws");
}

// No ping-pong: FA3's kernel loses nothing at d 128 (measured 0.99-1.01) and 6-9% at d 64 (0.91-0.94),
// where three consumer warpgroups share the pipe. Before the round counted the GEMMs queued beside a
// warpgroup's own (v3_work.cpp consumer_round) the d 64 rows were predicted 1.000 (causal N 16384 +10.3%,
// the others +6-10%); with it 0.958-0.964 (+2.0% to +5.9%), and slower than FA3 there as measured.
TEST_CASE("V3 ablation (analytic): no ping-pong within 10% of the measured on all 8 shapes, slower at d 64") {
  check_variant("no_pingpong");
  for (const test::AblationRow& a : test::ablation_rows())
    if (a.variant == "no_pingpong" && a.config.d == 64) {
      CAPTURE(a.name);
      CHECK(predicted(a) < 0.97);  // measured 0.906-0.940
    }
}

// Every switch: the count within 10% (the page's "N predictions outside 10%"), 40 of 40; 39 of 40 at
// run 6 with the constants of the additive streams rule (c 0.96, beta 0.72) and P~ in registers on the
// kernel's 192 x 128 tile at d 64 without a mask (fa3_p_in_registers; 38 with P~ in SRAM there, which
// put stages1 d 64 none N 4096 at 0.978 against 0.847 measured; 35 with c 1.00 and beta 0.78, 39 with
// c 0.90 and beta 0.56; run 5: 35): no_ws d 64 none N 16384 (+15.2%). Since a consumer warpgroup's
// round is a floor of the step (v3_work.cpp consumer_round; the held-out FA3 rows' median 12.3% -> 3.7%):
// 34 of 40. Since the round and the one-stage ring follow the compiled loop (both GEMMs waited for and V
// released before the softmax; v3_work.cpp one_stage_cycle; held-out median 3.7% -> 6.0%): 36 of 40,
// outside stages1 at d 64 (none N 4096, causal N 16384: the ring's cycle, 2 G GEMMs and a round trip,
// is shorter than the round there; the kernel loses 5-15%), no_pingpong d 64 causal N 16384 (1.000 vs
// 0.906), no_ws d 64 none N 16384 (0.804 vs 0.707). Since the round counts the other warpgroups' GEMMs
// queued beside a warpgroup's own where ping-pong does not order them (v3_work.cpp consumer_round;
// held-out unchanged: FA3's defaults have ping-pong): 38 of 40, outside only stages1 at d 64 none N 4096
// (1.000 vs 0.847) and causal N 16384 (1.000 vs 0.898) (docs/model.md "Time model", V3, "Without
// ping-pong the warpgroups queue on the tensor pipe"). Since a one-stage ring's step carries the DRAM fill
// where the static deal puts a (batch, head)'s Q blocks in one round (v3_work.cpp lockstep_fill_s;
// v3_one_stage_test.cpp): 39 of 40, stages1 d 64 none N 4096 0.886 (+4.7%), N 16384 0.953 (+0.1%);
// outside only stages1 d 64 causal N 16384 (1.000 vs 0.898: the dynamic deal, no lockstep; docs/model.md
// "One stage at d 64: the SMs of a head in step"). Since one stage's landings start the warpgroups'
// turns together and their GEMMs queue as without ping-pong (v3_work.cpp consumer_round `together`;
// scripts/gpu/ring_per_sm.cu; held-out unchanged: FA3's defaults have two stages): 40 of 40, stages1 d 64
// causal N 16384 0.960 (+6.9%), N 4096 0.965 (+6.0%), none N 4096 0.855 (+0.9%), N 16384 0.915 (-3.8%).
TEST_CASE("V3 ablation (analytic): all 40 rows within 10% of the measured") {
  int within = 0;
  for (const test::AblationRow& a : test::ablation_rows()) {
    const double pred = predicted(a), err = pred / a.measured - 1;
    std::printf("v3 ablation  %-28s predicted %.3f  measured %.3f  (%+.1f%%)%s\n", a.name.c_str(), pred, a.measured,
                100 * err, std::abs(err) <= kTolerance ? "" : "  outside 10%");
    within += std::abs(err) <= kTolerance;
  }
  std::printf("v3 ablation  %d of %zu rows within 10%%\n", within, test::ablation_rows().size());
  CHECK(test::ablation_rows().size() == 40);
  CHECK(within == 40);
  for (const test::AblationRow& a : test::ablation_rows()) {
    CAPTURE(a.name);
    CHECK(std::abs(predicted(a) / a.measured - 1) <= kTolerance);  // (relative: tests/common/approx.hpp says why)
  }
}

// The H200's SM clock under each switch (tests/data/gpu_v3/v3_units.json: SM cycles elapsed, summed over
// the 132 SMs, over the kernel's duration; docs/model.md "The clock under load, again"; the page's "in SM
// cycles" count, scripts/check/v3_kernel_predicted.py cycle_speeds). The measured ablation is in time, and
// the card's clock moves with the load: at d 128 without a mask FA3 keeps the tensor pipe busiest and runs
// slowest, and the switches that idle it run faster, so in cycles they cost more than their time ratio
// says. Both time models price every variant at the preset's clock; what they predict is a ratio of
// cycles. Printed: each row's clock and its speed relative to FA3 in time and in cycles. Asserted: the
// claims docs/model.md makes of these data.
TEST_CASE("V3 ablation: the H200's SM clock falls with the tensor pipe's load (units counters)") {
  const nlohmann::json units = test::v3_data("v3_units.json");
  std::map<std::string, double> clock;  // "variant d mask N" -> GHz
  for (const auto& r : units.at("rows")) {
    const auto& k = r.at("kernels").at(0);
    const std::string key = r.at("variant").get<std::string>() + " " + std::to_string(r.at("d").get<int>()) + " " +
                            r.at("mask").get<std::string>() + " " + std::to_string(r.at("n").get<int>());
    clock[key] = k.at("sm_cycles_elapsed").get<double>() / k.at("time_ns").get<double>() / 132.0;
  }
  for (const auto& a : test::ablation_rows()) {
    const std::string tail = " " + std::to_string(a.config.d) + " " + (a.config.mask.kind == MaskKind::none ? "none" : "causal") +
                             " " + std::to_string(a.config.n_q);
    const double fa3 = clock.at("fa3" + tail), mine = clock.at(a.variant + tail);
    std::printf("v3 clock  %-32s %.3f GHz (fa3 %.3f)  speed: time %.3f, cycles %.3f\n", a.name.c_str(), mine, fa3,
                a.measured, a.measured * fa3 / mine);
  }
  CHECK(clock.at("fa3 128 none 16384") <= 1.66);
  for (const char* v : {"stages1", "no_overlap", "no_ws"}) {
    CAPTURE(v);
    CHECK(clock.at(std::string(v) + " 128 none 16384") >= 1.72);
  }
  for (const char* v : {"fa3", "stages1", "no_pingpong", "no_overlap", "no_ws", "grid"}) {
    CAPTURE(v);
    CHECK(std::abs(clock.at(std::string(v) + " 64 none 16384") / clock.at("fa3 64 none 16384") - 1) <= 0.01);
  }
}
