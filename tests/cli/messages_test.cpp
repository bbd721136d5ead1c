// Messages a new user found wrong or silent: an output error naming `output` for `timeline --json`
// and `--csv`, sweep's help saying V3 has no predicted time (it has), compare's "the tile its kernels
// compile at d = 1" (none is compiled there), `run --rows` without `--steps` silently ignored, and
// `timeline` saying "tiles" for thread blocks and not saying which launch of several it lays out.
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include "run_cli.hpp"

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("timeline --json / --csv to a device: the error names the flag (was: output = /dev/full)") {
  for (const char* flag : {"json", "csv"}) {
    const CliResult r = run_cli(std::string("timeline --seq 256 --") + flag + " /dev/full");
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(r.err == std::string("flashlab: error: ") + flag + " = /dev/full: a regular file path (it is a character device)\n");
  }
}

TEST_CASE("sweep --help says what v3 is, and a v3 sweep row has a predicted time") {
  const CliResult h = run_cli("sweep --help");
  CHECK(h.code == 0);
  CHECK_FALSE(has(h.out, "no predicted time"));
  CHECK(has(h.out, "v3: FA3's Hopper forward, --pass forward only"));
  const CliResult r = run_cli("sweep --algos v3 --over seq --values 512");
  REQUIRE(r.code == 0);
  const auto rows = parse_csv(r.out);
  REQUIRE(rows.size() == 1);
  CHECK(std::stod(rows[0].at("predicted_seconds")) > 0);
}

TEST_CASE("compare --d 1: the reference tiles say no kernel is compiled at d = 1") {
  const CliResult r = run_cli("compare --d 1");
  REQUIRE(r.code == 0);
  CHECK_FALSE(has(r.out, "compile at d = 1"));
  CHECK_FALSE(has(r.out, "compiles at d = 1"));
  CHECK(has(r.out, "the largest tile its kernels compile at d = 32, 64 and 128 (no kernel is compiled at d = 1: "
                   "they are at d = 32, 64 and 128)"));
  CHECK(has(r.out, "the largest tile it compiles at d = 32 and 64 (no kernel is compiled at d = 1"));
  // a compiled head dim keeps its plain text
  CHECK(has(run_cli("compare --d 64").out, "the largest tile it compiles at d = 64\n"));
}

TEST_CASE("run --rows without --steps is refused (it was ignored)") {
  const CliResult r = run_cli("run --seq 256 --rows 5");
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "flashlab: error: rows = 5: no value without --steps (--rows is how many rows of the Q block "
                 "--steps I prints)\n");
  CHECK(run_cli("run --seq 256 --rows 5 --steps 0").code == 0);
}

TEST_CASE("timeline names what the SM runs and which launch of several it lays out") {
  // N = 128 on V2's 128 x 128 tile: one Q block, one thread block in the whole grid
  const CliResult one = run_cli("timeline --seq 128");
  REQUIRE(one.code == 0);
  CHECK(has(one.out, "Timeline of SM 0 (step by step): 1 thread block, "));
  CHECK_FALSE(has(one.out, "launch"));
  // V2's released backward: FA2's three launches (dot_do_o, the main kernel, convert_dq); the first walks its Q block
  const std::string dir = make_temp_dir();
  const CliResult bwd = run_cli("timeline --algo v2 --pass backward --seq 256 --json " + dir + "/t.json");
  REQUIRE(bwd.code == 0);
  CHECK(has(bwd.out, "(step by step, launch 1 of 3: flash_bwd_dot_do_o): "));
  CHECK(has(bwd.out, "(only launch 1 is laid out; the other 2 are not: flashlab count times every launch)"));
  std::ifstream in(dir + "/t.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  CHECK(j.at("launch") == nlohmann::json{{"index", 1}, {"count", 3}, {"name", "flash_bwd_dot_do_o"}});
  CHECK(j.contains("tiles"));  // the keys before stay
  // split-KV: the split launch, then the combine
  CHECK(has(run_cli("timeline --algo v2 --splits 3 --seq 4096").out,
            "launch 1 of 2: v2_forward_split): 2 thread blocks, "));
}
