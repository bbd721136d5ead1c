// The rules every flag value follows (flags/values.hpp), over every flag of every `flashlab`
// command: the flags are listed from the CLI11 app main.cpp builds (register_commands), so that a
// flag added later is covered without touching this test. An empty value is exit 2 naming the
// flag; a list with an empty element too; integers beyond 64 bits say "out of range" with the range.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "flashlab/flags/values.hpp"
#include "run_cli.hpp"

TEST_CASE("every flag of every command: an empty value is exit 2 naming the flag, before any work") {
  CLI::App app{"flashlab", "flashlab"};
  flashlab::cli::register_commands(app, "flashlab");
  int walked = 0;
  std::vector<std::string> seen;
  for (CLI::App* cmd : app.get_subcommands([](CLI::App*) { return true; })) {
    std::string positionals;  // a positional argument comes after valid ones for those before it
    for (CLI::Option* opt : flashlab::cli::value_options(*cmd)) {
      const std::string flag = flashlab::cli::flag_spelling(*opt);
      const std::string args = cmd->get_name() + (flag.empty() ? positionals : " " + flag) + " ''";
      if (flag.empty()) positionals += " x";
      const CliResult r = run_cli(args);
      INFO("flashlab ", args, "\nstdout: ", r.out, "\nstderr: ", r.err);
      CHECK(r.code == 2);
      CHECK(r.out.empty());
      const std::string want = "flashlab: error: " + opt->get_single_name() + " = \"\": a non-empty value";
      CHECK(r.err.rfind(want, 0) == 0);
      seen.push_back(cmd->get_name() + " " + (flag.empty() ? opt->get_single_name() : flag));
      ++walked;
    }
  }
  // The walk reached the flags the issue named (and so every flag of each command's table).
  for (const char* f : {"run --steps", "trace --stats-blocks", "count --model", "diff --tol-ml", "count --nq",
                        "sweep --over", "trace --output", "run --seed", "compare --gpu", "diff A", "diff B"}) {
    CAPTURE(f);
    CHECK(std::find(seen.begin(), seen.end(), f) != seen.end());
  }
  CHECK(walked > 100);
}

TEST_CASE("a list with an empty element is refused by every list flag, naming it") {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"trace -o /nonexistent-dir/x.trace --stats-blocks 0,", "stats-blocks = 0,: Q block indices"},
      {"trace -o /nonexistent-dir/x.trace --stats-blocks ,0", "stats-blocks = ,0: Q block indices"},
      {"trace -o /nonexistent-dir/x.trace --stats-blocks 0,,1", "stats-blocks = 0,,1: Q block indices"},
      {"run --seq 64 --show-rows 1,", "show-rows = 1,: row indices"},
      {"run --seq 64 --algo v1,", "algo = v1,: all, or a comma-separated list"},
      {"sweep --over n --values 512,", "values = 512,: a comma-separated list of integers"},
      {"compare --seq 64 --mask window:1,", "mask = window:1,: window:LEFT,RIGHT"},
  };
  for (const auto& [args, message] : cases) {
    const CliResult r = run_cli(args);
    INFO("flashlab ", args, "\nstderr: ", r.err);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("flashlab: error: " + message) == 0);
    if (args.find("window") == std::string::npos) CHECK(r.err.find("; no empty element") != std::string::npos);
  }
}

TEST_CASE("integers beyond 64 bits are out of range, with the flag's range, and seeds take all 64 bits") {
  // 2^63 does not fit an int64; --seq takes 1 to 2^31 - 1 (events store rows in 32 bits).
  CliResult r = run_cli("count --seq 9223372036854775808");
  CHECK(r.code == 2);
  CHECK(r.err == "flashlab: error: seq = 9223372036854775808: out of range: an integer from 1 to 2147483647\n");
  r = run_cli("count --nq 5000000000");  // fits 64 bits: resolve()'s range, the same text
  CHECK(r.err == "flashlab: error: nq = 5000000000: an integer from 1 to 2147483647\n");
  r = run_cli("count --d 99999999999999999999");
  CHECK(r.err == "flashlab: error: d = 99999999999999999999: out of range: an integer from 1 to 4096\n");
  // seeds: 0 to 2^64 - 1, the range traces store
  const nlohmann::json j = run_json("run --seq 64 --d 16 --seed 18446744073709551615 --json");
  CHECK(j.at("inputs").at("seed").get<std::uint64_t>() == 18446744073709551615ull);  // as in a trace header
  const std::string dir = make_temp_dir();
  r = run_cli("trace --seq 64 --d 16 --br 16 --bc 16 --stats-blocks 0 --seed 18446744073709551615 --format text -o " +
              dir + "/s.trace");
  CHECK(r.code == 0);
  std::stringstream header;
  header << std::ifstream(dir + "/s.trace").rdbuf();
  CHECK(header.str().find("18446744073709551615") != std::string::npos);  // the header's seed
  r = run_cli("run --seq 64 --seed 18446744073709551616");
  CHECK(r.err ==
        "flashlab: error: seed = 18446744073709551616: out of range: an integer from 0 to 18446744073709551615 "
        "(2^64 - 1)\n");
  r = run_cli("trace --seq 64 --stats-blocks 0 --seed=-1 -o " + dir + "/t.trace");
  CHECK(r.err == "flashlab: error: seed = -1: an integer from 0 to 18446744073709551615 (2^64 - 1)\n");
  std::filesystem::remove_all(dir);
}

TEST_CASE("--seq with --nq or --nk: defined (they override their side) and said in --help") {
  const CliResult help = run_cli("count --help");
  CHECK(help.out.find("--nq or --nk given with it override their side (--seq 512 --nq 256: N_q = 256, N_k = 512)") !=
        std::string::npos);
  const nlohmann::json j = run_json("count --seq 5 --nq 7 --json");
  CHECK(j.at("config").at("n_q") == 7);
  CHECK(j.at("config").at("n_k") == 5);
}
