// The five switches from V1 to V2 through the command line (docs/model.md "Variants"): every one
// of the 32 combinations counts (its switches in `count --json`'s config), runs within tolerance
// of float64, and writes a trace that reads back; a bad value names the switch.
#include <doctest/doctest.h>

#include <string>

#include "run_cli.hpp"

namespace {

const std::string kSmall = "--nq 40 --nk 33 --d 8 --br 8 --bc 8 --mask causal-br --dtype fp16 ";

}  // namespace

TEST_CASE("every combination of --order --grid --rescale --warp-split --block-skip: count, run, trace") {
  const std::string dir = make_temp_dir();
  int n = 0;
  for (const char* order : {"kv-outer", "q-outer"})
    for (const char* grid : {"head", "qblock"})
      for (const char* rescale : {"step", "delayed"})
        for (const char* split : {"split-k", "split-q"})
          for (const char* skip : {"off", "on"}) {
            const std::string sw = std::string("--order ") + order + " --grid " + grid + " --rescale " + rescale +
                                   " --warp-split " + split + " --block-skip " + skip + " ";
            CAPTURE(sw);
            const nlohmann::json c = run_json("count --json --algo v1 " + kSmall + sw);
            const nlohmann::json& cfg = c.at("config");
            CHECK(cfg.at("order") == order);
            CHECK(cfg.at("grid") == grid);
            CHECK(cfg.at("rescale") == rescale);
            CHECK(cfg.at("split") == split);
            CHECK(cfg.at("block_skip") == (std::string(skip) == "on"));
            const bool v1 = std::string(order) == "kv-outer" && std::string(grid) == "head" &&
                            std::string(rescale) == "step" && std::string(split) == "split-k" && std::string(skip) == "off";
            CHECK(cfg.at("preset") == v1);

            const nlohmann::json r = run_json("run --json --algo v1 " + kSmall + sw);
            CHECK(r.at("results").at("v1").at("within") == true);

            const std::string file = dir + "/variant" + std::to_string(n++) + ".trace";
            const CliResult t = run_cli("trace --algo v1 -o " + file + " " + kSmall + sw);
            INFO(t.err);
            REQUIRE(t.code == 0);
            const CliResult same = run_cli("diff " + file + " " + file);
            CHECK(same.code == 0);
          }
  CHECK(n == 32);
}

TEST_CASE("a switch given with a preset overrides that one property, the text line names the switches") {
  const nlohmann::json j = run_json("count --json --algo v2 --grid head " + kSmall);
  CHECK(j.at("config").at("order") == "q-outer");
  CHECK(j.at("config").at("grid") == "head");
  CHECK(j.at("config").at("rescale") == "delayed");
  CHECK(j.at("config").at("split") == "split-q");
  CHECK(j.at("config").at("block_skip") == true);
  CHECK(j.at("config").at("preset") == false);
  const CliResult text = run_cli("count --algo v2 --grid head " + kSmall);
  REQUIRE(text.code == 0);
  CHECK(text.out.find("order q-outer, grid head, rescale delayed, warp split split-q") != std::string::npos);
  const CliResult preset = run_cli("count --algo v2 " + kSmall);
  REQUIRE(preset.code == 0);
  CHECK(preset.out.find("order ") == std::string::npos);  // the presets' line is as before
}

TEST_CASE("traces of different variants differ in their config, diff says which switch") {
  const std::string dir = make_temp_dir();
  REQUIRE(run_cli("trace --algo v1 -o " + dir + "/a.trace " + kSmall).code == 0);
  REQUIRE(run_cli("trace --algo v1 --grid qblock -o " + dir + "/b.trace " + kSmall).code == 0);
  const CliResult d = run_cli("diff " + dir + "/a.trace " + dir + "/b.trace");
  CHECK(d.code == 2);
  CHECK((d.out + d.err).find("grid: head in A, qblock in B") != std::string::npos);
}

TEST_CASE("a bad switch value names the flag, the value and what is allowed") {
  const struct {
    const char* args;
    const char* message;
  } cases[] = {
      {"--order sideways", "order = sideways: one of kv-outer, q-outer"},
      {"--grid block", "grid = block: one of head, qblock"},
      {"--rescale lazy", "rescale = lazy: one of step, delayed"},
      {"--block-skip yes", "block-skip = yes: one of on, off"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.args);
    const CliResult r = run_cli(std::string("count ") + c.args);
    CHECK(r.code == 2);
    CHECK(r.err.find(c.message) != std::string::npos);
  }
}
