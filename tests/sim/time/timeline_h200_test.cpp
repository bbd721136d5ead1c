// The V3 timeline (flashlab/time/timeline.hpp) against the staged Hopper kernel on the H200 (issue 27
// item 5): its speed relative to FA3's defaults when one switch is turned off, against the kernel's
// Nsight ablation (tests/data/gpu_v3/v3_ablation.json; the baseline: the same shape's row of
// v3_ncu.json), and its busy fraction per unit against the kernel's pipe counters (v3_units.json, the
// fa3 rows at N = 16384; how counters become fractions: scripts/check/v3_kernel_data.py BUSY).
// Measured figures: medians of the rows' kernel time_ns.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flashlab/schedule/resolve.hpp"
#include "flashlab/schedule/schedule.hpp"
#include "flashlab/time/timeline.hpp"
#include "v3_ablation_rows.hpp"
#include "../../common/approx.hpp"

using namespace flashlab;

namespace {

using test::ablation_rows;
using test::config_of;
using test::v3_data;

Timeline run(const Config& c) {
  const Problem p = resolve(c);
  TimelineOptions o;
  o.max_intervals = 1;  // only the totals are read
  return timeline(p, make_schedule(p), o);
}

/// The timeline's speed of an ablation row relative to FA3's defaults (> 1: faster).
double predicted(const test::AblationRow& a) { return run(a.fa3).time_s / run(a.config).time_s; }

}  // namespace

TEST_CASE("timeline h200: ablation rows are read (every mapped variant of every shape)") {
  // 8 shapes (d 64/128 x none/causal x N 4096/16384), 5 mapped variants each
  CHECK(ablation_rows().size() == 40);
}

// Issue 27 item 5: predicted within 10% of measured on every ablation row. Not met: 32 of 40 since the
// timeline paces each softmax by the others executing beside it at that moment, shares the tensor pipe
// among the warpgroups one K landing released together, and takes the ring's measured turnaround
// (docs/model.md "Timeline, event by event"; 28 before, 30 until the analytic deal picked other SMs at
// causal N 4096, twice). Outside: no_ws at d 128 (four rows, 0.581-0.631 against 0.779-0.872), no_overlap
// at d 128 but none N 16384 (three rows, 1.004-1.037 against 0.903-0.907, +11.2% to +14.7%), no_pingpong
// at d 64 causal N 16384 (1.000 against 0.906, +10.4%).
TEST_CASE("timeline h200: every ablation row's relative speed within 10% of the measured" * doctest::should_fail()) {
  int within = 0;
  std::vector<double> pred;
  for (const test::AblationRow& a : ablation_rows()) {
    pred.push_back(predicted(a));
    const double err = pred.back() / a.measured - 1;
    std::printf("timeline ablation  %-28s predicted %.3f  measured %.3f  (%+.1f%%)\n", a.name.c_str(), pred.back(),
                a.measured, 100 * err);
    within += std::abs(err) <= 0.10;
  }
  std::printf("timeline ablation  %d of %zu rows within 10%%\n", within, ablation_rows().size());
  for (std::size_t x = 0; x < ablation_rows().size(); ++x) {
    CAPTURE(ablation_rows()[x].name);
    CHECK(pred[x] == flashlab::testing::approx(ablation_rows()[x].measured).epsilon(0.10));
  }
}

// The count the note above gives, as a floor: a change that loses a row shows here. 29 since the analytic
// round counts the GEMMs queued without ping-pong (v3_work.cpp consumer_round): the timeline draws the
// SM the analytic deal finishes last, and at the causal N 4096 shapes that SM's tiles moved; no_pingpong
// d 64 causal N 4096 went from 1.002 (+10.0%, inside by 0.0004) to 1.006 (+10.4%) against 0.911. 28
// since the analytic round of one stage counts the same queueing (consumer_round `together`; the
// timeline's tensor unit serves one warpgroup's GEMMs at a time and has no such rule): the analytic deal
// moved the SM drawn at stages1 d 64 causal N 4096, 1.000 (+9.8%) -> 1.005 (+10.5%) against 0.910.
// 32 since the ring's turnaround is the measured one (round_trips.hpp ring_wake_s: all eight one-stage
// rows inside, 0.807-0.954 against 0.814-0.951; at d 64 none N 4096 0.834 against 0.847, was 0.995), the
// pace counts the others beside each moment (v3_pace.hpp PacedStreams) and the GEMMs one K landing
// releases share the tensor pipe (tensor_pipe.hpp: no_pingpong d 64 causal N 4096 1.006 -> 1.000
// against 0.911, +9.8%).
TEST_CASE("timeline h200: at least 32 of the 40 ablation rows within 10% of the measured") {
  int within = 0;
  for (const test::AblationRow& a : ablation_rows()) within += std::abs(predicted(a) / a.measured - 1) <= 0.10;
  CHECK(within >= 32);
}

// Issue 27 item 5, per unit: "predicted vs measured busy fraction per unit within 10%", read as 10
// percentage points (the fractions are of one time, so points compare units of different scale alike).
// Units compared: tensor (sm__pipe_tensor_cycles_active over SMSP cycles), sfu (XU instructions x 8
// SMSP cycles: a documented rate, not a measurement), issue (the timeline's lane holds FP32's time:
// the FMA pipe's active cycles). Not compared: smem (the kernel's LSU wavefronts leave out wgmma's and
// TMA's shared-memory reads, which are the timeline's smem work) and l2 (lts__t_sectors is the whole
// L2's load, not one SM's port). All 12 within since the consumer's program follows the compiled loop
// (tensor at d 128: 0.793 none, 0.745 causal, against 0.788, 0.695; before it 10 of 12, the timeline's
// tensor pipe at 0.897 and 0.838, busier than the kernel's).
TEST_CASE("timeline h200: busy fraction per unit within 10 points of the counters (fa3, N = 16384)") {
  const nlohmann::json units = v3_data("v3_units.json");
  int rows = 0;
  for (const auto& r : units.at("rows")) {
    if (r.at("variant") != "fa3" || r.at("n") != 16384) continue;
    ++rows;
    const nlohmann::json& k = r.at("kernels").at(0);
    const double smsp = k.at("smsp_cycles_elapsed").get<double>();
    const double measured[] = {k.at("tensor_cycles").get<double>() / smsp, 8 * k.at("xu_inst").get<double>() / smsp,
                               k.at("fma_cycles").get<double>() / smsp};
    const HwUnit unit[] = {HwUnit::tensor, HwUnit::sfu, HwUnit::issue};
    const Timeline t = run(*config_of(r, "fa3"));
    for (int u = 0; u < 3; ++u) {
      double busy = -1;
      for (const UnitUse& x : t.units)
        if (x.unit == unit[u]) busy = x.busy;
      const std::string name = "d " + std::to_string(r.at("d").get<int>()) + " " + r.at("mask").get<std::string>() +
                               " " + std::string(to_string(unit[u]));
      std::printf("timeline units  %-22s predicted %.3f  measured %.3f\n", name.c_str(), busy, measured[u]);
      CAPTURE(name);
      CHECK(std::abs(busy - measured[u]) <= 0.10);
    }
  }
  CHECK(rows == 4);
}

