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

using namespace flashlab;

namespace {

/// tests/data/gpu_v3/<name> as JSON; a doctest REQUIRE fails when it cannot be read.
nlohmann::json v3_data(const std::string& name) {
  const std::string path = std::string(FLASHLAB_TEST_DATA) + "/gpu_v3/" + name;
  std::ifstream in(path);
  REQUIRE_MESSAGE(in, "cannot read " << path);
  return nlohmann::json::parse(in);
}

double median_time_ns(const nlohmann::json& row) {
  std::vector<double> t;
  for (const auto& k : row.at("kernels")) t.push_back(k.at("time_ns").get<double>());
  REQUIRE(!t.empty());
  std::sort(t.begin(), t.end());
  const std::size_t n = t.size();
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

bool same_shape(const nlohmann::json& a, const nlohmann::json& b) {
  for (const char* f : {"d", "mask", "n", "batch", "heads"})
    if (a.at(f) != b.at(f)) return false;
  return true;
}

/// FA3's configuration of a measured row (its tiles as the kernel ran them), with the ablation's switch
/// set: stages1 -> 1 stage, no_pingpong, no_overlap, grid; no_ws -> warp specialization off, which the
/// kernel's variant also takes with ping-pong off and the grid scheduler (scripts/gpu/v3_kernel/
/// variants.cuh). Other variants (static, dynamic: persistent schedulers the timeline does not tell
/// apart) give nullopt.
std::optional<Config> config_of(const nlohmann::json& row, const std::string& variant) {
  Config c;
  c.algo = Algo::v3;
  c.n_q = c.n_k = row.at("n").get<std::int64_t>();
  c.d = row.at("d").get<std::int64_t>();
  c.batch = row.at("batch").get<std::int64_t>();
  c.heads = row.at("heads").get<std::int64_t>();
  c.b_r = row.at("run").at("b_r").get<std::int64_t>();
  c.b_c = row.at("run").at("b_c").get<std::int64_t>();
  c.dtype = Dtype::fp16;
  if (row.at("mask") == "causal") c.mask = Mask{MaskKind::causal_tl, 0, 0};
  c.gpu = "h200";
  if (variant == "fa3") return c;
  if (variant == "stages1") c.stages = 1;
  else if (variant == "no_pingpong") c.pingpong = false;
  else if (variant == "no_overlap") c.intra_overlap = false;
  else if (variant == "grid") c.scheduler = TileScheduler::grid;
  else if (variant == "no_ws") c.warp_specialize = false, c.pingpong = false, c.scheduler = TileScheduler::grid;
  else return std::nullopt;
  return c;
}

Timeline run(const Config& c) {
  const Problem p = resolve(c);
  TimelineOptions o;
  o.max_intervals = 1;  // only the totals are read
  return timeline(p, make_schedule(p), o);
}

struct AblationRow {
  std::string name;
  double predicted = 0, measured = 0;  // speed relative to FA3's defaults (> 1: faster)
};

const std::vector<AblationRow>& ablation_rows() {
  static const std::vector<AblationRow> rows = [] {
    const nlohmann::json abl = v3_data("v3_ablation.json"), ncu = v3_data("v3_ncu.json");
    std::vector<AblationRow> out;
    for (const auto& r : abl.at("rows")) {
      const std::string variant = r.at("variant").get<std::string>();
      const std::optional<Config> c = config_of(r, variant);
      if (!c || r.at("exit") != 0) continue;
      const nlohmann::json* base = nullptr;
      for (const auto& b : ncu.at("rows"))
        if (same_shape(b, r)) base = &b;
      REQUIRE_MESSAGE(base, "no v3_ncu.json row for an ablation row's shape");
      const double t_var = run(*c).time_s, t_base = run(*config_of(*base, "fa3")).time_s;
      AblationRow a;
      a.name = variant + " d " + std::to_string(c->d) + " " + r.at("mask").get<std::string>() + " N " +
               std::to_string(c->n_q);
      a.predicted = t_base / t_var;
      a.measured = median_time_ns(*base) / median_time_ns(r);
      out.push_back(a);
    }
    return out;
  }();
  return rows;
}

}  // namespace

TEST_CASE("timeline h200: ablation rows are read (every mapped variant of every shape)") {
  // 8 shapes (d 64/128 x none/causal x N 4096/16384), 5 mapped variants each
  CHECK(ablation_rows().size() == 40);
}

// Issue 27 item 5: predicted within 10% of measured on every ablation row. Today (sim at this commit):
// not met; the worst rows are stages1 (the timeline ~0.5, measured ~0.85) and no_ws.
TEST_CASE("timeline h200: every ablation row's relative speed within 10% of the measured" * doctest::should_fail()) {
  int within = 0;
  for (const AblationRow& a : ablation_rows()) {
    const double err = a.predicted / a.measured - 1;
    std::printf("timeline ablation  %-28s predicted %.3f  measured %.3f  (%+.1f%%)\n", a.name.c_str(), a.predicted,
                a.measured, 100 * err);
    within += std::abs(err) <= 0.10;
  }
  std::printf("timeline ablation  %d of %zu rows within 10%%\n", within, ablation_rows().size());
  for (const AblationRow& a : ablation_rows()) {
    CAPTURE(a.name);
    CHECK(a.predicted == doctest::Approx(a.measured).epsilon(0.10));
  }
}

// Issue 27 item 5, per unit: "predicted vs measured busy fraction per unit within 10%", read as 10
// percentage points (the fractions are of one time, so points compare units of different scale alike).
// Units compared: tensor (sm__pipe_tensor_cycles_active over SMSP cycles), sfu (XU instructions x 8
// SMSP cycles: a documented rate, not a measurement), issue (the timeline's lane holds FP32's time:
// the FMA pipe's active cycles). Not compared: smem (the kernel's LSU wavefronts leave out wgmma's and
// TMA's shared-memory reads, which are the timeline's smem work) and l2 (lts__t_sectors is the whole
// L2's load, not one SM's port).
TEST_CASE("timeline h200: busy fraction per unit within 10 points of the counters (fa3, N = 16384)" *
          doctest::should_fail()) {
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

// What does hold today: turning ping-pong off is predicted within 10% of the measured on all 8 shapes
// (worst: d 64 none N 4096, predicted 1.027, measured 0.955, +7.5%).
TEST_CASE("timeline h200: no_pingpong rows within 10% of the measured") {
  int n = 0;
  for (const AblationRow& a : ablation_rows()) {
    if (a.name.rfind("no_pingpong", 0) != 0) continue;
    ++n;
    CAPTURE(a.name);
    CHECK(a.predicted == doctest::Approx(a.measured).epsilon(0.10));
  }
  CHECK(n == 8);
}
