// `flashlab sweep`: CSV rows against closed forms of each algorithm's HBM traffic, derived here
// from the algorithms' lines (no mask, so every tile is visited; ragged last tiles included).
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "run_cli.hpp"

namespace {

std::uint64_t num(const std::map<std::string, std::string>& row, const std::string& key) {
  REQUIRE(row.count(key) == 1);
  return std::stoull(row.at(key));
}

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

}  // namespace

TEST_CASE("sweep --over n: every (N, algorithm) row matches the closed forms, ragged N included") {
  const CliResult r = run_cli("sweep --over n --values 100,1000,1024,2049 --d 64 --br 64 --bc 32 --dtype fp16");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto rows = parse_csv(r.out);
  REQUIRE(rows.size() == 4 * 3);
  const std::uint64_t d = 64, e = 2;
  const std::string algos[] = {"standard", "v1", "v2"};
  const std::uint64_t ns[] = {100, 1000, 1024, 2049};
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const auto& row = rows[k];
    const std::uint64_t n = ns[k / 3];
    const std::string& algo = algos[k % 3];
    CAPTURE(n);
    CAPTURE(algo);
    CHECK(row.at("over") == "n");
    CHECK(num(row, "value") == n);
    CHECK(row.at("algo") == algo);
    CHECK(num(row, "n_q") == n);
    CHECK(num(row, "n_k") == n);
    const std::uint64_t t_r = ceil_div(n, 64), t_c = ceil_div(n, 32);
    CHECK(num(row, "t_r") == t_r);
    CHECK(num(row, "t_c") == t_c);
    std::uint64_t reads = 0, writes = 0;
    if (algo == "v2") {  // Q once, K and V once per Q block; O once, L (fp32) once
      reads = e * (n * d + t_r * 2 * n * d);
      writes = e * n * d + 4 * n;
    } else if (algo == "v1") {  // K, V once; per K/V block: Q, O, l, m read, O, l, m written; + line 2
      reads = e * 2 * n * d + t_c * (2 * e * n * d + 8 * n);
      writes = (t_c + 1) * (e * n * d + 8 * n);
    } else {  // Q K S P V read, S P O written
      reads = e * (3 * n * d + 2 * n * n);
      writes = e * (2 * n * n + n * d);
    }
    CHECK(num(row, "hbm_read_bytes") == reads);
    CHECK(num(row, "hbm_write_bytes") == writes);
    CHECK(num(row, "hbm_total_bytes") == reads + writes);
    if (algo != "standard") {
      CHECK(num(row, "tiles_total") == t_r * t_c);
      CHECK(num(row, "tiles_visited") == t_r * t_c);
      CHECK(num(row, "flops_matmul") == 4 * n * n * d);  // 4 rows cols d summed over all tiles
    }
  }
}

TEST_CASE("sweep --over d with --br auto --bc auto: the V1 paper's block sizes (cases R5)") {
  // M = 49,152 bytes of fp32: d = 32 -> B_c 96, B_r 32; 64 -> 48, 48; 128 -> 24, 24; tiles
  // Q_i, K_j, V_j, S_ij take 40,960 / 46,080 / 39,168 bytes.
  const CliResult r = run_cli("sweep --over d --values 32,64,128 --sram 49152 --br auto --bc auto --dtype fp32 --algos v1");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto rows = parse_csv(r.out);
  REQUIRE(rows.size() == 3);
  const std::uint64_t b_c[] = {96, 48, 24}, b_r[] = {32, 48, 24}, bytes[] = {40'960, 46'080, 39'168};
  for (std::size_t k = 0; k < 3; ++k) {
    CHECK(num(rows[k], "b_c") == b_c[k]);
    CHECK(num(rows[k], "b_r") == b_r[k]);
    CHECK(num(rows[k], "sram_peak_bytes") == bytes[k]);
    CHECK(num(rows[k], "sram_capacity_bytes") == 49'152);
  }
}

TEST_CASE("sweep's rows name the switches they ran (two V3 sweeps told apart only by their time before)") {
  for (const char* stages : {"1", "2"}) {
    const CliResult r = run_cli(std::string("sweep --algos v3 --over n --values 1024 --d 128 --stages ") + stages);
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto rows = parse_csv(r.out);
    REQUIRE(rows.size() == 1);
    const auto& v3 = rows[0];
    CHECK(v3.at("algo") == "v3");
    CHECK(v3.at("stages") == stages);
    // FA3's choices at d = 128 (hopper/): a producer warpgroup, ping-pong and intra-warpgroup overlap,
    // the persistent scheduler; 128 x 176: two consumer warpgroups + the producer's, 4 warps each
    CHECK(v3.at("warp_specialize") == "on");
    CHECK(v3.at("pingpong") == "on");
    CHECK(v3.at("intra_overlap") == "on");
    CHECK(v3.at("scheduler") == "persistent");
    CHECK(v3.at("warps") == "12");
    CHECK(v3.at("order") == "q-outer");  // V2's loop
  }
  const CliResult r = run_cli("sweep --algos v2,standard --over n --values 1024 --d 128 --order kv-outer");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto rows = parse_csv(r.out);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].at("order") == "kv-outer");  // a V1/V2 switch the rows did not name before
  CHECK(rows[0].at("split") == "split-q");
  CHECK(rows[0].at("warps") == "4");         // FA2's 4 warps at d = 128
  CHECK(rows[0].at("stages").empty());        // V3's switches: empty for V2
  CHECK(rows[1].at("order").empty());         // standard attention walks no tiles
}

TEST_CASE("sweep --from/--to with --log2 or --step lists the values in order") {
  const auto log_rows = parse_csv(run_cli("sweep --over sram --from 49152 --to 400000 --log2 --algos v2 --d 32 --br 32 --bc 32").out);
  REQUIRE(log_rows.size() == 4);
  const std::uint64_t expect[] = {49'152, 98'304, 196'608, 393'216};
  for (std::size_t k = 0; k < 4; ++k) CHECK(num(log_rows[k], "sram_capacity_bytes") == expect[k]);
  const auto lin = parse_csv(run_cli("sweep --over br --from 16 --to 70 --step 16 --algos v1,v2 --d 32").out);
  REQUIRE(lin.size() == 4 * 2);
  for (std::size_t k = 0; k < lin.size(); ++k) {
    CHECK(num(lin[k], "b_r") == 16 * (k / 2 + 1));
    CHECK(lin[k].at("algo") == (k % 2 == 0 ? "v1" : "v2"));
  }
}

TEST_CASE("sweep -o FILE writes the CSV under its name only when complete") {
  const std::string dir = make_temp_dir();
  const std::string path = dir + "/sweep.csv";
  const CliResult r = run_cli("sweep --over n --values 128,256 --d 64 -o " + path);
  REQUIRE(r.code == 0);
  CHECK(r.out.empty());
  std::ifstream f(path);
  std::ostringstream text;
  text << f.rdbuf();
  CHECK(text.str() == run_cli("sweep --over n --values 128,256 --d 64").out);
  CHECK(std::distance(std::filesystem::directory_iterator(dir), {}) == 1);  // no temporary left

  // a bad point (N = 0) fails the whole sweep: exit 2, no file, no temporary
  const std::string bad = dir + "/bad.csv";
  const CliResult b = run_cli("sweep --over n --values 128,0 --d 64 -o " + bad);
  CHECK(b.code == 2);
  CHECK(b.err.find("nq (sweep point n = 0) = 0") != std::string::npos);
  CHECK(!std::filesystem::exists(bad));
  CHECK(std::distance(std::filesystem::directory_iterator(dir), {}) == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("sweep validates every point before it counts the first: a bad last point fails at once") {
  // Issue 9 item 5: n = 2^20 .. 2^24 by doubling with 128 x 128 tiles: n = 2^23 has T_r T_c = 2^32
  // tiles, over the 2^30 the simulator walks. Counting the points before it (2^26 + 2^28 + 2^30
  // tiles of V2) takes minutes; resolving five points takes milliseconds.
  const auto start = std::chrono::steady_clock::now();
  const CliResult r = run_cli("sweep --over n --from 1048576 --to 16777216 --log2 --algos v2 --d 64 --br 128 --bc 128");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find("(sweep point n = 8388608)") != std::string::npos);
  CHECK(r.err.find("at most 2^30 tiles") != std::string::npos);
  CHECK(seconds < 5.0);  // no walk before the error
}

TEST_CASE("sweep refuses a flag that its axis sets at every point (it was dropped without a word)") {
  // A new user's report: `sweep --over br --values 64 --br 32` printed rows with B_r = 64, exit 0,
  // the --br 32 given silently dropped; likewise --seq, --nq, --nk with --over n, --d, --bc, --sram.
  const struct {
    const char* args;
    const char* message;
  } cases[] = {
      {"--over br --values 64 --br 32", "br = 32: not with --over br"},
      {"--over bc --values 64 --bc auto", "bc = auto: not with --over bc"},
      {"--over n --values 64,128 --seq 4096", "seq = 4096: not with --over n"},
      {"--over seq --values 64,128 --nq 32", "nq = 32: not with --over seq"},
      {"--over n --values 64 --nk 96", "nk = 96: not with --over n"},
      {"--over d --values 32,64 --d 128", "d = 128: not with --over d"},
      {"--over sram --from 16384 --to 65536 --log2 --sram 49152", "sram = 49152: not with --over sram"}};
  for (const auto& c : cases) {
    const CliResult r = run_cli(std::string("sweep --algos v1,v2 ") + c.args);
    INFO("sweep ", c.args, "\nstderr: ", r.err);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(r.err == std::string("flashlab: error: ") + c.message +
                       ": the sweep sets it at each point (--values, or --from/--to)\n");
  }
  // The other flags still set the base of every point: --over br with --bc 32 and --seq 256.
  const CliResult ok = run_cli("sweep --algos v2 --over br --values 16,64 --bc 32 --seq 256 --d 64");
  INFO(ok.err);
  REQUIRE(ok.code == 0);
  const auto rows = parse_csv(ok.out);
  REQUIRE(rows.size() == 2);
  for (std::size_t k = 0; k < 2; ++k) {
    CHECK(num(rows[k], "b_r") == (k == 0 ? 16u : 64u));
    CHECK(num(rows[k], "b_c") == 32u);
    CHECK(num(rows[k], "n_q") == 256u);
  }
}
