// V3 timed by the project's time model (issue 27 item 2, docs/model.md "Time model", V3) against the
// staged V3 kernel (scripts/gpu/v3_kernel/) measured kernel-only on the H200 by Nsight Compute:
// tests/data/gpu_v3/v3_ncu.json, 12 shapes (fp16, d 64 and 128, no mask and causal, N 1024/4096/16384,
// batch 16384 / N, heads 2048 / d), 5 kernel durations each (the median is the measurement).
// Each shape is predicted with the kernel's tile, warpgroups and persistent grid.
//
// The held-out half, fixed before any ratio was looked at: the four N = 4096 rows and d = 64 at
// N = 16384 (none and causal). The other six (N = 1024, d = 128 at N = 16384) are the training rows:
// no constant of the model is fitted on them (V3's rules take measured ceilings and the kernel's
// code), they are printed beside the held-out ones.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flashlab/schedule/resolve.hpp"
#include "flashlab/time/time_model.hpp"
#include "../../common/config_helpers.hpp"

using namespace flashlab;

namespace {

struct Shape {
  std::int64_t d, n, batch, heads, b_r, b_c, threads, grid;
  bool causal;
  double measured_s;  // median of the kernel's 5 durations
};

std::vector<Shape> shapes() {
  std::ifstream in(std::string(FLASHLAB_TEST_DATA) + "/gpu_v3/v3_ncu.json");
  REQUIRE(in);
  const nlohmann::json j = nlohmann::json::parse(in);
  std::vector<Shape> out;
  for (const auto& r : j.at("rows")) {
    const auto& run = r.at("run");
    REQUIRE(run.at("dtype") == "fp16");
    std::vector<double> t;
    for (const auto& k : r.at("kernels")) t.push_back(k.at("time_ns").get<double>() * 1e-9);
    REQUIRE(t.size() == 5);
    std::sort(t.begin(), t.end());
    out.push_back({run.at("d"), run.at("n"), run.at("batch"), run.at("heads"), run.at("b_r"), run.at("b_c"),
                   run.at("threads"), run.at("grid"), run.at("mask") == "causal", t[2]});
  }
  return out;
}

bool held_out(const Shape& s) { return s.n == 4096 || (s.d == 64 && s.n == 16384); }

Problem problem(const Shape& s) {
  Config c = test::small(Algo::v3, s.n, s.n, s.d, s.b_r, s.b_c,
                         s.causal ? Mask{MaskKind::causal_tl, 0, 0} : Mask{});
  c.batch = s.batch;
  c.heads = s.heads;
  return resolve(c);  // FA3's switches: warp specialization, 2 stages, ping-pong, intra-overlap, persistent
}

double ratio(const Shape& s) {
  const Modelled m = model(problem(s));
  REQUIRE(m.timed);
  return m.time.time_s / s.measured_s;
}

}  // namespace

TEST_CASE("V3 time: the 12 measured shapes of the staged V3 kernel, each with the kernel's tile, threads and grid") {
  const std::vector<Shape> all = shapes();
  REQUIRE(all.size() == 12);
  int held = 0;
  for (const Shape& s : all) {
    const Problem p = problem(s);
    CAPTURE(s.d);
    CAPTURE(s.n);
    CHECK(p.tiling.b_r == s.b_r);
    CHECK(p.tiling.b_c == s.b_c);
    CHECK(32 * p.warps == s.threads);  // producer warpgroup + B_r / 64 consumer warpgroups
    const Modelled m = model(p);
    REQUIRE(m.time.launches.size() == 1);
    CHECK(m.time.launches[0].grid == s.grid);  // the persistent grid: one thread block per SM
    held += held_out(s) ? 1 : 0;
    std::printf("v3 time: %-8s d %3lld %-6s N %5lld  predicted %.1f us  measured %.1f us  ratio %.3f  (%s)\n",
                held_out(s) ? "held-out" : "train", (long long)s.d, s.causal ? "causal" : "none", (long long)s.n,
                1e6 * m.time.time_s, 1e6 * s.measured_s, m.time.time_s / s.measured_s,
                std::string(to_string(m.time.bound)).c_str());
  }
  CHECK(held == 6);
}

namespace {

/// |predicted / measured - 1| of the held-out rows, sorted.
std::vector<double> held_out_errors() {
  std::vector<double> e;
  for (const Shape& s : shapes())
    if (held_out(s)) e.push_back(std::abs(ratio(s) - 1));
  std::sort(e.begin(), e.end());
  return e;
}

}  // namespace

// Issue 27 item 2's bounds on the held-out rows: median |predicted / measured - 1| <= 8%, max <= 30%.
TEST_CASE("V3 time: held-out shapes (N = 4096, and d = 64 at N = 16384) within max 30%") {
  const std::vector<double> e = held_out_errors();
  REQUIRE(e.size() == 6);
  std::printf("v3 time: held-out median %.1f%%, max %.1f%%\n", 50 * (e[2] + e[3]), 100 * e.back());
  CHECK(e.back() <= 0.30);
}

// The median bound held on validation run 5 (6.4%) and misses on run 6 (8.3%: the kernel with O in
// whole sectors runs d = 128 up to 11% faster, so d 128 none N 4096 is now predicted 1.088, and d 64
// causal stays 0.80; 8.9% with issue 23's refit, c 1.00 and beta 0.78: d 128 none N 4096 1.123; 8.6%
// with the additive streams rule, c 0.96 and beta 0.72: d 128 none N 4096 1.110, d 64 causal 0.82;
// 12.3% once P~ is in registers on the kernel's 192 x 128 tile at d 64 without a mask, as the kernel
// has it: d 64 none 0.944 -> 0.878, the smem rule no longer charging P~'s store and read):
// 3.7% since a consumer warpgroup's round is a floor of the step (v3_work.cpp consumer_round, the PC
// samples' pace, fitted without the held-out d = 64 shape): d 64 0.95-1.00, d 128 1.07-1.12. 6.0% (max
// 12.4%) since the round waits for both GEMMs, as the compiled loop does (DEPBAR.LE 0 before the
// softmax, docs/model.md "The compiled order"): d 64 1.01-1.06, d 128 1.08-1.12.
TEST_CASE("V3 time: held-out shapes (N = 4096, and d = 64 at N = 16384) within median 8%") {
  const std::vector<double> e = held_out_errors();
  REQUIRE(e.size() == 6);
  CHECK(0.5 * (e[2] + e[3]) <= 0.08);
}
