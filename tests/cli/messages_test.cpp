// Messages a new user found wrong or silent: an output error naming `output` for `timeline --json`
// and `--csv`, sweep's help saying V3 has no predicted time (it has), compare's "the tile its kernels
// compile at d = 1" (none is compiled there), `run --rows` without `--steps` silently ignored, and
// `timeline` saying "tiles" for thread blocks and not saying which launch of several it lays out; and
// (the fifteenth session's new user) `timeline --json F --csv F` writing CSV over the JSON, `timeline
// --sm abc` answered by the parser's raw text, `--max-intervals` beyond 64 bits accepted, and `run`'s
// "tol O: 1.0e-05 for fp32 (4 units of roundoff u = 6.0e-08)" (4 u is 2.4e-07); and (the sixteenth
// session's) `timeline --csv` rows for the producer's waits on K and on V that looked alike.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "run_cli.hpp"

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("timeline --json / --csv to a device: the error names the flag (was: output = /dev/full)") {
  for (const char* flag : {"json", "csv"}) {
    check_refused(std::string("timeline --seq 256 --") + flag + " /dev/full",
                 std::string(flag) + " = /dev/full: a regular file path (it is a character device)");
  }
}

TEST_CASE("timeline --json and --csv to one file: refused before any work (the CSV replaced the JSON)") {
  namespace fs = std::filesystem;
  const fs::path dir = make_temp_dir();
  const std::string file = (dir / "t.json").string(), same = (dir / "." / "t.json").string();
  check_refused("timeline --seq 256 --json " + file + " --csv " + same,
                "csv = " + same + ": a destination other than --json's");
  CHECK_FALSE(fs::exists(file));  // nothing written
  check_refused("timeline --seq 256 --json - --csv -", "csv = -: a destination other than --json's");
  CHECK(run_cli("timeline --seq 256 --json " + file + " --csv " + (dir / "t.csv").string()).code == 0);
  CHECK(fs::exists(file));
  CHECK(fs::exists(dir / "t.csv"));
  // sweep's CSV and plot: the same kind of pair
  const CliResult r = run_cli("sweep --over seq --values 256 -o " + (dir / "s.png").string() + " --plot " +
                              (dir / "s.png").string());
  if (r.err.find("stb") == std::string::npos) {  // a build without PNG output refuses --plot first
    CHECK(r.code == 2);
    CHECK(r.err == "flashlab: error: output = " + (dir / "s.png").string() + ": a destination other than --plot's\n");
  }
}

TEST_CASE("timeline --csv: the last column names the tensor of V3's loads and waits (K's and V's looked alike)") {
  namespace fs = std::filesystem;
  const fs::path dir = make_temp_dir();
  const std::string csv = (dir / "t.csv").string();
  REQUIRE(run_cli("timeline --algo v3 --seq 1024 --d 64 --heads 4 --csv " + csv).code == 0);
  std::ifstream in(csv);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.rfind("start_s,end_s,lane,what,i,j,bh,tensor\n", 0) == 0);
  CHECK(has(text, ",load K,"));
  CHECK(has(text, ",load V,"));
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (has(line, ",load K,")) CHECK(line.back() == 'K');
    if (has(line, ",load V,")) CHECK(line.back() == 'V');
    if (has(line, ",gemm0,")) CHECK(line.back() == ',');  // no tensor: an empty last field
  }
}

TEST_CASE("timeline --sm and --max-intervals: a value that is not an allowed integer names the flag and the range") {
  check_refused("timeline --seq 256 --sm abc",
                "sm = abc: an integer from -1 to 2147483647 (-1: the busiest; at most the GPU's SMs - 1)");
  check_refused("timeline --seq 256 --sm 1.5",
                "sm = 1.5: an integer from -1 to 2147483647 (-1: the busiest; at most the GPU's SMs - 1)");
  check_refused("timeline --seq 256 --sm 500", "sm = 500: 0 to 131, or -1 for the busiest");
  check_refused("timeline --seq 256 --max-intervals abc", "max-intervals = abc: an integer from 0 to 100000000");
  check_refused("timeline --seq 256 --max-intervals 99999999999999999999",
                "max-intervals = 99999999999999999999: out of range: an integer from 0 to 100000000");
  check_refused("timeline --seq 256 --max-intervals -1", "max-intervals = -1: an integer from 0 to 100000000");
  CHECK(run_cli("timeline --seq 256 --max-intervals 0").code == 0);
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

namespace {

// A text trace of V1 (N = 130, d = 16, 32 x 32 tiles) whose line 4, the first event
// "0 0 0 compute - -1 -1 130 16 0 -1 init_stats", has field k (0-based) replaced by `value`;
// returns `flashlab diff` of it against the unchanged trace.
CliResult diff_with_field(const std::string& dir, int k, const std::string& value) {
  const std::string good = dir + "/good.txt", bad = dir + "/bad.txt";
  REQUIRE(run_cli("trace --algo v1 --seq 130 --d 16 --br 32 --bc 32 --format text -o " + good).code == 0);
  std::ifstream in(good, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()), out;
  std::size_t pos = 0;
  for (int line = 1; line < 4; ++line) pos = text.find('\n', pos) + 1;
  const std::size_t end = text.find('\n', pos);
  REQUIRE(text.substr(pos, end - pos) == "0 0 0 compute - -1 -1 130 16 0 -1 init_stats");
  std::string fields[12];
  std::size_t f = pos;
  for (int n = 0; n < 12; ++n) {
    const std::size_t sp = std::min(text.find(' ', f), end);
    fields[n] = text.substr(f, sp - f);
    f = sp + 1;
  }
  fields[k] = value;
  std::string line = fields[0];
  for (int n = 1; n < 12; ++n) line += " " + fields[n];
  std::ofstream(bad, std::ios::binary) << text.substr(0, pos) << line << text.substr(end);
  return run_cli("diff " + good + " " + bad);
}

}  // namespace

TEST_CASE("a text trace's bad integer field names its range (was: 'an integer in range')") {
  // The ranges are the record's field types (docs/events.md "Fields"): step u32, bytes u64, warp i16, i i32.
  const std::string dir = make_temp_dir();
  const struct {
    int field;
    const char* value;
    std::string message;
  } cases[] = {{2, "1x", "step = 1x: a decimal integer from 0 to 4294967295"},
               {2, "4294967296", "step = 4294967296: a decimal integer from 0 to 4294967295"},
               {9, "1:", "bytes = 1:: a decimal integer from 0 to 18446744073709551615"},
               {10, "40000", "warp = 40000: a decimal integer from -32768 to 32767"},
               {5, "-2147483649", "i = -2147483649: a decimal integer from -2147483648 to 2147483647"}};
  for (const auto& c : cases) {
    const CliResult r = diff_with_field(dir, c.field, c.value);
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(r.err == "flashlab: error: " + dir + "/bad.txt: trace text line 4 " + c.message + "\n");
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("an error quoting control bytes or broken UTF-8 writes them as \\xNN: a terminal never obeys them") {
  // A new user's report: a corrupted trace field "\x1b[31mX" turned the terminal red; "2.7\xe6" was
  // written raw (not UTF-8). Valid UTF-8 (the field's name, "é") is kept as it is.
  const std::string dir = make_temp_dir();
  const struct {
    std::string value, shown;
  } cases[] = {{"\x1b[31mX", "\\x1b[31mX"}, {"1\xe6", "1\\xe6"}, {"\x7f", "\\x7f"}, {"1\xc3\xa9", "1\xc3\xa9"}};
  for (const auto& c : cases) {
    const CliResult r = diff_with_field(dir, 2, c.value);
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(r.err == "flashlab: error: " + dir + "/bad.txt: trace text line 4 step = " + c.shown +
                       ": a decimal integer from 0 to 4294967295\n");
  }
  // a command-line value too (printf of /bin/sh writes the ESC byte)
  const CliResult r = run_cli("count --mask \"$(printf '\\033[2J')\"");
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find('\x1b') == std::string::npos);
  CHECK(r.err.rfind("flashlab: error: mask = \\x1b[2J: ", 0) == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("an unknown flag or a stray value is named in the house form, with the nearest flag") {
  // A new user's report: CLI11's "The following arguments were not expected: 5 --Nq" named the words
  // backwards and not what is allowed.
  const struct {
    const char* args;
    const char* message;
  } cases[] = {
      {"count --Nq 5", "flag = --Nq: not a flag of flashlab count; did you mean --nq? (flashlab count --help lists the flags)"},
      {"run --sed 5", "flag = --sed: not a flag of flashlab run; did you mean --seq or --seed? (flashlab run --help lists the flags)"},
      {"count --seed 5", "flag = --seed: not a flag of flashlab count (flashlab count --help lists the flags)"},
      {"trace --stats-block=0 -o x.trace",
       "flag = --stats-block=0: not a flag of flashlab trace; did you mean --stats-blocks? (flashlab trace --help lists "
       "the flags)"},
      {"count 5", "argument = 5: not expected by flashlab count (values follow their flag, e.g. --seq 1024; flashlab "
                  "count --help lists the flags)"}};
  for (const auto& c : cases) check_refused(c.args, c.message);
}

TEST_CASE("a flag without its value, given twice, or missing, and no command: the house form") {
  // A new user's report: CLI11's "--nq: 1 required INT missing", "--nq: At Most 1 required but
  // received 2", "A is required" and "A subcommand is required" did not say field = value: allowed.
  const struct {
    const char* args;
    const char* message;
  } cases[] = {
      {"count --nq", "nq = (missing): a value after --nq (INT) (flashlab count --help lists the flags)"},
      {"count --nq 5 --nq 6", "nq = 5 and 6: --nq given once (flashlab count --help lists the flags)"},
      {"sweep --values 5", "over = (missing): --over AXIS is required (flashlab sweep --help lists the flags)"},
      {"diff", "A = (missing): FILE, first trace file (text or binary), is required (flashlab diff --help lists the flags)"},
      {"", "command = (missing): one of count, compare, explain, run, sweep, trace, diff, metrics, timeline (flashlab "
           "--help says what each does)"}};
  for (const auto& c : cases) check_refused(c.args, c.message);
}

TEST_CASE("a launch too large to lay out: timeline refuses it naming its thread blocks, count times it") {
  // A new user's report: 10^8 (batch, head) pairs ran timeline, count and explain for minutes. Here
  // 10^6 x 100 pairs x T_r = 1024 / 128 = 8 Q blocks = 8 x 10^8 thread blocks of v2_forward, over the
  // timeline's 2^24 = 16,777,216; count deals them (block_deal.hpp kDealtExactly) and exits 0
  const std::string big = " --batch 1000000 --heads 100 --seq 1024 --d 64";
  check_refused("timeline" + big, "thread blocks = 800000000: at most 16777216 in the launch a timeline shows "
                                 "(v2_forward: batch x heads x its blocks per (batch, head)); `count` times a launch of "
                                 "any size");
  const CliResult c = run_cli("count" + big + " --json");
  REQUIRE(c.code == 0);
  // 8 x 10^8 blocks of 128 x 128 x 4 on 132 SMs: at least their work spread over the GPU
  const nlohmann::json j = nlohmann::json::parse(c.out);
  CHECK(j.at("predicted").at("launches")[0].at("grid") == 800000000);
  CHECK(j.at("predicted").at("time_s").get<double>() > 1.0);
}

TEST_CASE("run: the tolerance note says what tol O is for each input type and which column it bounds") {
  // fp16 and bf16: 4 u (u = 2^-11, 2^-8); fp32: 1e-5 = 168 u (u = 2^-24), which is not 4 u (it said so)
  const std::pair<const char*, const char*> lines[] = {
      {"fp16", "tol O: 2.0e-03 for fp16 (4 u, u = 4.9e-04: O's store and P~'s cast to fp16), bounds |O-O_ref|/|O_ref|;"},
      {"bf16", "tol O: 1.6e-02 for bf16 (4 u, u = 3.9e-03: O's store and P~'s cast to bf16), bounds |O-O_ref|/|O_ref|;"},
      {"fp32", "tol O: 1.0e-05 for fp32 (168 u, u = 6.0e-08: fp32 accumulation over up to 2^20 keys), bounds "
               "|O-O_ref|/|O_ref|;"}};
  for (const auto& [dtype, line] : lines) {
    CAPTURE(dtype);
    const CliResult r = run_cli(std::string("run --seq 128 --dtype ") + dtype);
    REQUIRE(r.code == 0);
    CHECK(has(r.out, line));
  }
  static_assert(4.0 / 2048 < 2.0e-3 && 2.0e-3 - 4.0 / 2048 < 1e-4);  // 4 u of fp16 rounds to 2.0e-03
  static_assert(1e-5 * (1 << 24) > 167.5 && 1e-5 * (1 << 24) < 168.5);  // fp32's 1e-5 is 168 u
}
