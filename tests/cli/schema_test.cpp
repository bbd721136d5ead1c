// One JSON schema for a config (docs/output.md "Config"): `count --json`, `compare --json`, every
// algorithm of `run --json` and the header of a `trace` file carry the same keys with the same
// values for the same configuration; the sweep's CSV has one column per metric of the catalogue.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "run_cli.hpp"

namespace {

const std::string kConfig = "--nq 100 --nk 77 --d 16 --br 32 --bc 16 --mask causal-br --warps 2 --heads 3";

std::set<std::string> keys(const nlohmann::json& j) {
  std::set<std::string> out;
  for (const auto& item : j.items()) out.insert(item.key());
  return out;
}

// The config object of a trace file's header (text form: its second line is "header {JSON}").
nlohmann::json trace_config(const std::string& args) {
  const std::string dir = make_temp_dir(), path = dir + "/t.trace";
  const CliResult r = run_cli("trace --format text -o " + path + " " + args);
  INFO(r.err);
  REQUIRE(r.code == 0);
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::getline(in, line);
  REQUIRE(line.rfind("header ", 0) == 0);
  std::filesystem::remove_all(dir);
  return nlohmann::json::parse(line.substr(7)).at("config");
}

}  // namespace

TEST_CASE("the same config keys and values in count, compare, run and trace headers") {
  const std::set<std::string> schema{"algo",  "n_q",   "n_k",        "d",     "b_r",   "b_c",   "t_r",
                                     "t_c",   "batch", "heads",      "kv_heads", "dtype", "e_in",  "mask",  "block_skip",
                                     "scale", "warps", "split",      "sram_capacity_bytes", "gpu", "model", "pass",
                                     "splits", "kernel"};
  // V1 and V2 add the switches of a tiled forward (docs/model.md "Variants"); standard walks no tiles
  std::set<std::string> tiled = schema;
  tiled.insert({"order", "grid", "rescale", "preset"});
  const nlohmann::json count = run_json("count --algo v2 --json " + kConfig).at("config");
  CHECK(keys(count) == tiled);
  CHECK(count.at("preset") == true);
  // T_r = ceil(100 / 32) = 4, T_c = ceil(77 / 16) = 5, fp16: 2 bytes per element
  CHECK(count.at("t_r") == 4);
  CHECK(count.at("t_c") == 5);
  CHECK(count.at("e_in") == 2);
  CHECK(count.at("model") == "");

  const nlohmann::json run = run_json("run --algo all --json " + kConfig);
  CHECK(!run.contains("config"));  // one config per algorithm: V1 and V2 differ in block skip and split
  CHECK(run.at("inputs") == nlohmann::json{{"q", "random"}, {"k", "random"}, {"v", "random"}, {"seed", 0}});
  for (const char* algo : {"standard", "v1", "v2"}) {
    CAPTURE(algo);
    const nlohmann::json c = run.at("results").at(algo).at("config");
    CHECK(keys(c) == (std::string(algo) == "standard" ? schema : tiled));
    CHECK(c.at("algo") == algo);
  }
  CHECK(run.at("results").at("v2").at("config") == count);
  CHECK(run.at("results").at("v1").at("config").at("split") == "split-k");
  CHECK(run.at("results").at("v1").at("config").at("block_skip") == false);

  const nlohmann::json compare = run_json("compare --model none --json " + kConfig);
  CHECK(compare.at("algos").at("v2").at("config") == count);

  CHECK(trace_config("--algo v2 " + kConfig) == count);
  const nlohmann::json gpt2 = trace_config("--model gpt2-small --seq 256");
  CHECK(gpt2.at("model") == "gpt2-small");
  CHECK(gpt2 == run_json("count --json --model gpt2-small --seq 256").at("config"));
}

TEST_CASE("sweep's CSV: a column per metric of the catalogue, the warp model's figures included") {
  const CliResult r = run_cli("sweep --over n --values 64,100 --d 16 --br 32 --bc 32 --warps 4 --algos v1,v2");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto rows = parse_csv(r.out);
  REQUIRE(rows.size() == 4);
  // N = 64: 2 x 2 full tiles of 32 x 32; V1 split-K waits at 5 barriers per tile, V2 split-Q at 2
  CHECK(rows[0].at("algo") == "v1");
  CHECK(rows[0].at("warp_barriers") == "20");
  CHECK(rows[1].at("warp_barriers") == "8");
  CHECK(rows[1].at("warp_smem_bytes") == "0");
  for (const char* column : {"hbm_total_bytes", "read_Q", "write_P", "tiles_skipped", "ops_log", "sram_peak_bytes",
                             "grid_blocks", "blocks_per_sm", "waves", "steps", "hbm_s_p_bytes", "flops_per_hbm_byte",
                             "hbm_seconds", "warp_smem_write_bytes", "warp_extra_max", "warp_extra_ops"})
    CHECK_MESSAGE(rows[0].count(column) == 1, column);
}

TEST_CASE("docs/output.md lists the catalogue exactly as `flashlab metrics` prints it") {
  const CliResult r = run_cli("metrics");
  REQUIRE(r.code == 0);
  std::ifstream in(std::string(FLASHLAB_SOURCE_DIR) + "/docs/output.md");
  std::stringstream doc;
  doc << in.rdbuf();
  const std::string text = doc.str(), begin = "<!-- flashlab metrics: begin -->\n", end = "<!-- flashlab metrics: end -->";
  const std::size_t a = text.find(begin), b = text.find(end);
  REQUIRE(a != std::string::npos);
  REQUIRE(b != std::string::npos);
  CHECK(text.substr(a + begin.size(), b - a - begin.size()) == r.out);
}
