// `flashlab explain --algo v3`: the walk from V2 to V3 one switch at a time (docs/model.md "From V2 to
// V3 one switch at a time"). Each step must be what `count` predicts for the same switches, given as
// count's own flags (an independent invocation: count resolves the flags itself), in the order FA3's
// paper builds them; the first step is `count --algo v2`, the last `count --algo v3` (FA3's defaults).
// The tiles expected are FA2's and FA3's tables (docs/model.md, hopper/tile_size.h), typed here.
#include <cmath>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "run_cli.hpp"

namespace {

bool has(const std::string& text, const std::string& s) { return text.find(s) != std::string::npos; }

/// count's flags for V3 with the five switches as given.
std::string v3(const std::string& ws, int stages, const std::string& pingpong, const std::string& overlap,
               const std::string& scheduler) {
  return "--algo v3 --warp-specialize " + ws + " --stages " + std::to_string(stages) + " --pingpong " + pingpong +
         " --intra-overlap " + overlap + " --scheduler " + scheduler;
}

/// Each step of e against `count <flags[k]> <shape> --json`: the predicted time, TFLOP/s and bound,
/// the tile, the warps and the five switches as count resolves them.
void check_steps(const nlohmann::json& e, const std::vector<std::string>& keys, const std::vector<std::string>& flags,
                 const std::string& shape) {
  const nlohmann::json& steps = e.at("steps");
  REQUIRE(steps.size() == keys.size());
  for (std::size_t k = 0; k < steps.size(); ++k) {
    CAPTURE(k);
    const nlohmann::json& s = steps[k];
    CHECK(s.at("step") == keys[k]);
    const nlohmann::json c = run_json("count " + flags[k] + shape + " --json");
    CHECK(s.at("predicted").at("time_s").get<double>() == c.at("predicted").at("time_s").get<double>());
    CHECK(s.at("predicted").at("tflops").get<double>() == c.at("predicted").at("tflops").get<double>());
    CHECK(s.at("predicted").at("bound") == c.at("predicted").at("bound"));
    CHECK(s.at("figures").at("hbm_total_bytes") == c.at("hbm").at("total_bytes"));
    CHECK(s.at("figures").at("grid_blocks") == c.at("grid").at("blocks"));
    for (const char* key : {"algo", "b_r", "b_c", "warps", "warp_specialize", "stages", "pingpong", "intra_overlap",
                            "scheduler"}) {
      CAPTURE(key);
      CHECK(s.at("switches").value(key, nlohmann::json()) == c.at("config").value(key, nlohmann::json()));
    }
  }
}

}  // namespace

TEST_CASE("explain --algo v3 at d = 128: V2, V3 all off, then stages, warp specialization, ping-pong, overlap, scheduler") {
  const std::string shape = " --seq 2048 --heads 4 --d 128";
  const nlohmann::json e = run_json("explain --algo v3" + shape + " --json");
  check_steps(e, {"v2", "v3_off", "stages", "warp_specialize", "pingpong", "intra_overlap", "scheduler"},
              {"--algo v2", v3("off", 1, "off", "off", "grid"), v3("off", 2, "off", "off", "grid"),
               v3("on", 2, "off", "off", "grid"), v3("on", 2, "on", "off", "grid"), v3("on", 2, "on", "on", "grid"),
               "--algo v3"},  // the last: FA3's defaults, no switch given
              shape);
  const nlohmann::json& steps = e.at("steps");
  // FA2's tile for d = 128 is 128 x 64 with 4 warps, FA3's 128 x 176 without a mask (two consumer
  // warpgroups: 8 warps, 12 with the producer warpgroup)
  CHECK(steps[0].at("switches").at("algo") == "v2");
  CHECK(steps[0].at("switches").at("b_c") == 64);
  CHECK(steps[0].at("switches").at("warps") == 4);
  for (std::size_t k = 1; k < steps.size(); ++k) {
    CHECK(steps[k].at("switches").at("b_r") == 128);
    CHECK(steps[k].at("switches").at("b_c") == 176);
    CHECK(steps[k].at("switches").at("warps") == (k < 3 ? 8 : 12));
  }
  CHECK(e.at("skipped").empty());
  CHECK(e.at("measured_ablation") == "docs/validation/v3_h200.md");
}

TEST_CASE("explain --algo v3 skips a switch FA3 leaves off: ping-pong at d = 256, and with one consumer warpgroup") {
  // FA3 turns ping-pong on with two or more consumer warpgroups and d <= 128 only (UseSchedulerBarrier):
  // both configs walk the same steps without it
  const std::vector<std::string> keys = {"v2", "v3_off", "stages", "warp_specialize", "intra_overlap", "scheduler"};
  const std::vector<std::string> flags = {"--algo v2", v3("off", 1, "off", "off", "grid"), v3("off", 2, "off", "off", "grid"),
                                          v3("on", 2, "off", "off", "grid"), v3("on", 2, "off", "on", "grid"), "--algo v3"};
  const std::string d256 = " --seq 1024 --heads 2 --d 256";
  const nlohmann::json e = run_json("explain --algo v3" + d256 + " --json");
  check_steps(e, keys, flags, d256);
  REQUIRE(e.at("skipped").size() == 1);
  CHECK(e.at("skipped")[0].at("step") == "pingpong");
  CHECK(has(e.at("skipped")[0].at("why").get<std::string>(), "d <= 128"));
  // FA3's tile for d = 256: 128 x 80
  CHECK(e.at("steps")[1].at("switches").at("b_c") == 80);

  // A tile given: V2 and V3 both run it; B_r = 64 is one consumer warpgroup, no ping-pong
  const std::string br64 = " --seq 1024 --heads 2 --d 64 --br 64 --bc 128 --mask causal";
  const nlohmann::json g = run_json("explain --algo v3" + br64 + " --json");
  check_steps(g, keys, flags, br64);
  REQUIRE(g.at("skipped").size() == 1);
  CHECK(has(g.at("skipped")[0].at("why").get<std::string>(), "one consumer warpgroup at B_r = 64"));
  for (const nlohmann::json& s : g.at("steps")) CHECK(s.at("switches").at("b_r") == 64);
}

TEST_CASE("explain --algo v3 at d = 64: FA3's 192 x 192 tile, three consumer warpgroups in the ping-pong") {
  const std::string shape = " --seq 1024 --heads 2 --d 64";
  const nlohmann::json e = run_json("explain --algo v3" + shape + " --json");
  const nlohmann::json& steps = e.at("steps");
  REQUIRE(steps.size() == 7);
  CHECK(steps[4].at("step") == "pingpong");
  CHECK(steps[4].at("what") == "+ ping-pong of 3 warpgroups");
  CHECK(steps[1].at("switches").at("b_r") == 192);
  CHECK(steps[1].at("switches").at("b_c") == 192);
  CHECK(steps[1].at("switches").at("warps") == 12);  // 3 consumer warpgroups
  CHECK(steps[6].at("switches").at("warps") == 16);  // and the producer's
  const nlohmann::json fa3 = run_json("count --algo v3" + shape + " --json");
  CHECK(steps[6].at("predicted").at("time_s").get<double>() == fa3.at("predicted").at("time_s").get<double>());
}

TEST_CASE("explain --algo v3's table: each step, its speed-up, the tiles, skipped switches, predictions only") {
  const CliResult r = run_cli("explain --algo v3 --seq 2048 --heads 4 --d 256");
  INFO(r.err);
  REQUIRE(r.code == 0);
  for (const char* s : {"V2 on B_r x B_c x warps = 64 x 64 x 4, T_r = 32, T_c = 32: FA2's tile for d = 256",
                        "V3 on B_r x B_c = 128 x 80, T_r = 16, T_c = 26: FA3's tile for d = 256 with mask none "
                        "(hopper/tile_size.h); 2 consumer warpgroups of 64 rows, 8 warps, 12 from warp specialization on",
                        "V2 on FA2's tile (mma.sync)", "V3 all off: wgmma + TMA, 1 stage", "+ stage ring: 2 K/V stages",
                        "+ warp specialization (producer)", "+ intra-warpgroup overlap",
                        "+ persistent scheduler = V3 (FA3)", "What each step changes:", "tile 64 x 64 -> 128 x 80",
                        "warps 8 -> 12", "grid blocks 64 -> 132",
                        "pingpong: not turned on: FA3 turns it on at d <= 128 only (UseSchedulerBarrier), here d = 256",
                        "Predictions only", "docs/validation/v3_h200.md"})
    CHECK_MESSAGE(has(r.out, s), s);
  CHECK_FALSE(has(r.out, "+ ping-pong"));
  // the default walk is V1 to V2's, and --algo v2 names it
  CHECK(run_json("explain --algo v2 --seq 512 --d 64 --json") == run_json("explain --seq 512 --d 64 --json"));
}

TEST_CASE("explain --algo v3 says why a step bought nothing: its time within 1%, and the bound it did not relieve") {
  const std::string flags = "explain --algo v3 --seq 2048 --heads 4 --d 128";
  const nlohmann::json j = run_json(flags + " --json");
  const CliResult r = run_cli(flags);
  REQUIRE(r.code == 0);
  // the "What each step changes" line of each step after the first, from the JSON's times
  int still = 0;
  for (std::size_t k = 1; k < j.at("steps").size(); ++k) {
    const auto& a = j.at("steps")[k - 1].at("predicted");
    const auto& b = j.at("steps")[k].at("predicted");
    const std::string what = j.at("steps")[k].at("what");
    const std::size_t at = r.out.find("  " + what + " (");
    REQUIRE(at != std::string::npos);
    const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
    CAPTURE(line);
    const double ta = a.at("time_s"), tb = b.at("time_s");
    const bool flat = std::abs(tb - ta) < 0.01 * ta && a.at("bound") == b.at("bound");
    const bool moved_nothing = has(line, "no figure moves by 1% or more");
    CHECK(has(line, "time within 1%: still " + b.at("bound").get<std::string>() + " bound") == (flat && !moved_nothing));
    still += flat && !moved_nothing ? 1 : 0;
  }
  CHECK(still >= 1);  // here: the stage ring without a producer (its loads' wait stays under the units')
}

TEST_CASE("explain --algo v3 refuses what V3 or the walk does not take: exit 2 naming field, value and allowed") {
  const std::vector<std::pair<std::string, std::string>> bad{
      {"--pass backward", "pass = backward: forward with explain --algo v3"},
      {"--dtype fp32", "dtype = fp32: fp16 or bf16 with --algo v3"},
      {"--gpu a100", "gpu = a100: h100 or h200 with --algo v3"},
      {"--br 32", "br = 32: 64, 128 or 192 with --algo v3"},
      {"--d 512", "d = 512: 1 to 256 with --algo v3"},
      {"--stages 2", "stages = 2: not with explain --algo v3"},
      {"--pingpong off", "pingpong = off: not with explain --algo v3"},
      {"--scheduler grid", "scheduler = grid: not with explain --algo v3"},
      {"--warps 8", "warps = 8: not with explain --algo v3"},
      {"--order q-outer", "order = q-outer: not with explain --algo v3"},
  };
  for (const auto& [flags, message] : bad) {
    CAPTURE(flags);
    const CliResult r = run_cli("explain --algo v3 --seq 512 " + flags);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK_MESSAGE(has(r.err, message), r.err);
  }
  for (const char* algo : {"v1", "standard", "v4"}) {
    const CliResult r = run_cli(std::string("explain --algo ") + algo);
    CHECK(r.code == 2);
    CHECK(has(r.err, std::string("algo = ") + algo + ": v2 (the walk from V1 to V2, the default) or v3"));
  }
  // V1 to V2's walk refuses V3's switches as its own
  const CliResult s = run_cli("explain --seq 512 --intra-overlap on");
  CHECK(s.code == 2);
  CHECK(has(s.err, "intra-overlap = on: not with explain, which sets each switch along its walk from V1 to V2"));
}

TEST_CASE("explain --algo v3 says where PyTorch's FA2 launches split-KV instead of V2's row, and not elsewhere") {
  // batch 1, 1 head, N 4096, d 128: FA2's split kernel tile is 64 x 128 (kBlockM 64, kBlockN 128 at
  // d <= 128: flash_fwd_launch_template.h run_mha_fwd_splitkv_dispatch), so 64 Q blocks against
  // 2 x 132 = 264 slots and 32 K/V blocks; num_splits_heuristic (flash_api.cpp) takes the first split
  // count whose efficiency n / ceil(n), n = 64 s / 264, is at least 0.85 of the best: s = 1, 2, 3 give
  // 0.24, 0.48, 0.73, s = 4 gives 0.97 (the best, as s = 8's): 4 splits
  const nlohmann::json e = run_json("explain --algo v3 --seq 4096 --heads 1 --d 128 --json");
  const nlohmann::json& f = e.at("fa2_split_kv");
  REQUIRE(f.is_object());
  CHECK(f.at("splits") == 4);
  CHECK(f.at("b_r") == 64);
  CHECK(f.at("b_c") == 128);
  const nlohmann::json c = run_json("count --kernel fa2 --seq 4096 --heads 1 --d 128 --json");
  CHECK(f.at("predicted").at("time_s").get<double>() == c.at("predicted").at("time_s").get<double>());
  const CliResult r = run_cli("explain --algo v3 --seq 4096 --heads 1 --d 128");
  REQUIRE(r.code == 0);
  CHECK(has(r.out, "PyTorch's FA2 launches split-KV here: 4 splits on B_r x B_c = 64 x 128 and a combine"));
  // 16 heads: 32 x 16 = 512 Q blocks fill the 264 slots, FA2 does not split and nothing is said
  CHECK(run_json("explain --algo v3 --seq 4096 --heads 16 --d 128 --json").at("fa2_split_kv").is_null());
  CHECK_FALSE(has(run_cli("explain --algo v3 --seq 4096 --heads 16 --d 128").out, "split-KV"));
}
