// V3's step work (sim/src/time/v3_work.cpp v3_step_work) against the compiled staged kernel: the K/V
// loop of each instance's SASS, per consumer warp and full tile (tests/data/gpu_v3/v3_sass_steps.json:
// cuobjdump -sass digested by scripts/gpu/v3_kernel/sass_steps.py; its meta names the kernel sources'
// hash and the commands). The work the estimate counts from the source, one warp's share of a full
// tile (1 / (4 x B_r / 64) of the step), is what the compiler emitted: MUFU.EX2 = ex2 / 32 exactly, and
// the FP32 lane operations / 32 within 5% of FFMA + FMNMX + FADD + FMUL + F2FP. The whole loop is
// longer than the estimate's instructions (uniform-datapath work for the wgmma descriptors, barriers,
// the loop's own): printed, docs/model.md "Timeline, event by event".
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "../../../sim/src/time/v3_pace.hpp"
#include "../../../sim/src/time/v3_work.hpp"
#include "flashlab/schedule/resolve.hpp"
#include "flashlab/schedule/schedule.hpp"
#include "../../common/approx.hpp"

using namespace flashlab;

TEST_CASE("V3 step work: one warp's ex2 and FP32 work per full tile as the compiled kernel's K/V loop") {
  std::ifstream in(std::string(FLASHLAB_TEST_DATA) + "/gpu_v3/v3_sass_steps.json");
  REQUIRE(in);
  const nlohmann::json j = nlohmann::json::parse(in);
  int rows = 0;
  for (const auto& r : j.at("rows")) {
    if (r.at("causal").get<bool>()) continue;  // the same loop with the causal mask in its skipped part
    Config c;
    c.algo = Algo::v3;
    const std::int64_t d = r.at("d").get<std::int64_t>(), br = r.at("b_r").get<std::int64_t>(),
                       bc = r.at("b_c").get<std::int64_t>();
    c.d = d;
    c.b_r = br;
    c.b_c = bc;
    c.n_q = c.n_k = 8 * br * bc;  // whole tiles
    c.dtype = Dtype::fp16;
    c.gpu = "h200";
    c.stages = r.at("stages").get<int>();
    c.warp_specialize = r.at("warp_specialize").get<bool>();
    c.pingpong = r.at("pingpong").get<bool>();
    c.intra_overlap = r.at("intra_overlap").get<bool>();
    const Problem p = resolve(c);
    const Schedule s = make_schedule(p);
    StepView v;
    v.level = Level::inner;
    v.i = v.j = 0;
    v.cls = TileClass::full;
    const time_detail::V3StepWork w = time_detail::v3_step_work(p, s.launches.at(0), v);
    const double warps = 4.0 * double(br / 64);
    const auto& k = r.at("classes");
    const auto count = [&](const char* op) { return k.contains(op) ? k.at(op).get<double>() : 0.0; };
    const double fp32 = count("FFMA") + count("FMNMX") + count("FADD") + count("FMUL") + count("F2FP");
    CAPTURE(r.dump());
    CHECK(w.ex2 / warps / 32 == flashlab::testing::approx(count("MUFU")));
    CHECK(w.fp32 / warps / 32 == flashlab::testing::approx(fp32).epsilon(0.05));
    CHECK(count("HGMMA") == double(d / 16 + bc / 16));
    // the timeline's compiled instructions per estimated one (v3_pace.hpp): FA3's instances, and those
    // without warp specialization (warpgroup 0's in-line loads), within 2%
    const double compiled = r.at("full").get<double>() / w.warp_instructions;
    if (!p.hopper.warp_specialize)
      CHECK(compiled == flashlab::testing::approx(time_detail::kCompiledPerEstimateInline).epsilon(0.02));
    else if (p.hopper.stages == 2 && p.hopper.pingpong && p.hopper.intra_overlap && r.at("scheduler") == "static")
      CHECK(compiled == flashlab::testing::approx(time_detail::kCompiledPerEstimate).epsilon(0.02));
    std::printf("v3 sass  d %3lld %lld x %lld stages %lld ws %d pp %d intra %d: estimate %.0f, compiled %d (x %.2f) instructions per warp and full tile\n",
                static_cast<long long>(d), static_cast<long long>(br), static_cast<long long>(bc),
                static_cast<long long>(p.hopper.stages), int(p.hopper.warp_specialize), int(p.hopper.pingpong),
                int(p.hopper.intra_overlap),
                w.warp_instructions, r.at("full").get<int>(), r.at("full").get<double>() / w.warp_instructions);
    ++rows;
  }
  CHECK(rows >= 10);
}
