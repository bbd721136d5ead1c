// `flashlab compare`: its default is one Llama-3-8B attention layer (32 heads, d = 128) at 8192
// tokens, top-left causal, batch 1, fp16 — checked here against closed forms of the three
// algorithms' HBM traffic.
#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "run_cli.hpp"
#include "../common/approx.hpp"

namespace {

constexpr std::uint64_t N = 8192, d = 128, e = 2, H = 32;

// Visited tiles of V2 with block skip under top-left causal (c <= r): Q block i holds rows
// [i B_r, min(N, (i+1) B_r) - 1]; its last row sees keys 0..that row, so K/V blocks
// 0..floor(last_row / B_c) — counted here by a loop over i.
std::uint64_t causal_tiles(std::uint64_t b_r, std::uint64_t b_c) {
  std::uint64_t tiles = 0;
  for (std::uint64_t i = 0; i * b_r < N; ++i) tiles += (std::min(N, (i + 1) * b_r) - 1) / b_c + 1;
  return tiles;
}

}  // namespace

TEST_CASE("compare (no flags): standard, V1 and V2 on a Llama-3-8B layer at 8192 tokens, causal") {
  const CliResult r = run_cli("compare");
  INFO(r.err);
  REQUIRE(r.code == 0);
  for (const char* s : {"Llama-3-8B", "N_q = 8192, N_k = 8192, d = 128", "mask causal", "batch 1, heads 32",
                        "standard", "V1", "V2", "standard/V2", "V1/V2", "HBM read", "matmul FLOPs", "exp",
                        "SRAM peak", "grid blocks", "waves on h200"})
    CHECK_MESSAGE(r.out.find(s) != std::string::npos, s);
}

TEST_CASE("compare --json (default): HBM bytes of each algorithm against closed forms") {
  const nlohmann::json j = run_json("compare --json");
  REQUIRE(j.contains("algos"));
  const nlohmann::json& v2 = j.at("algos").at("v2");
  const std::uint64_t b_r = v2.at("config").at("b_r"), b_c = v2.at("config").at("b_c");
  REQUIRE(b_r == 128);  // FA2's forward tile for d = 128 (config.hpp default_blocks)
  REQUIRE(b_c == 64);
  CHECK(v2.at("config").at("heads") == H);
  CHECK(v2.at("config").at("dtype") == "fp16");
  CHECK(v2.at("config").at("mask") == "causal-br");  // the preset's bottom-right causal (= top-left at N_q = N_k)

  // V2 (FA2 Alg. 1, block skip): Q once; K_j, V_j per visited tile; O and L once.
  const std::uint64_t tiles = causal_tiles(b_r, b_c);
  CHECK(tiles == 4160);  // sum over i < 64 of (2i + 2)
  CHECK(u64_at(v2, "tiles.visited") == H * tiles);
  CHECK(u64_at(v2, "hbm.total_read_bytes") == H * (N * d * e + 2 * tiles * b_c * d * e));
  CHECK(u64_at(v2, "hbm.total_write_bytes") == H * (N * d * e + N * 4));

  // V1 (FA1 Alg. 1, dense: every tile visited): K, V once; per K/V block j, all of Q, O, l, m
  // read and O, l, m written; line 2 writes O, l, m once more.
  const nlohmann::json& v1 = j.at("algos").at("v1");
  const std::uint64_t t_c = N / b_c;
  CHECK(u64_at(v1, "hbm.total_read_bytes") == H * (2 * N * d * e + t_c * (2 * N * d * e + 8 * N)));
  CHECK(u64_at(v1, "hbm.total_write_bytes") == H * ((t_c + 1) * (N * d * e + 8 * N)));

  // standard (FA1 Alg. 0): read Q, K, S, P, V; write S, P, O — the mask changes nothing.
  const nlohmann::json& st = j.at("algos").at("standard");
  CHECK(u64_at(st, "hbm.total_read_bytes") == H * e * (3 * N * d + 2 * N * N));
  CHECK(u64_at(st, "hbm.total_write_bytes") == H * e * (2 * N * N + N * d));

  // the ratio column is each algorithm's total over V2's
  const double v2_total = double(u64_at(v2, "hbm.total_bytes"));
  CHECK(j.at("ratios").at("hbm_total_bytes").at("standard/v2").get<double>() ==
        flashlab::testing::approx(double(u64_at(st, "hbm.total_bytes")) / v2_total));
  CHECK(j.at("ratios").at("hbm_total_bytes").at("v1/v2").get<double>() ==
        flashlab::testing::approx(double(u64_at(v1, "hbm.total_bytes")) / v2_total));
}

TEST_CASE("compare: explicit flags override the default model, --model none drops it") {
  const nlohmann::json j = run_json("compare --model none --seq 1024 --d 64 --br 64 --bc 64 --dtype fp32 --json");
  CHECK(u64_at(j, "algos.v2.hbm.total_read_bytes") == 2'162'688ull * 4);  // docs/model.md worked example
  CHECK(u64_at(j, "algos.v1.hbm.total_read_bytes") == 2'260'992ull * 4);
  CHECK(u64_at(j, "algos.standard.hbm.total_read_bytes") == 2'293'760ull * 4);
  CHECK(j.at("algos").at("v2").at("config").at("heads") == 1);
}

TEST_CASE("compare: block skip is shown for V1 and V2 only, and an algorithm whose block does not fit on an SM is named") {
  // Issue 9 item 8: `--block-skip on` printed "standard on" and changed nothing there (Algorithm 0
  // has no tile loop).
  const std::string args = "compare --model none --seq 1024 --d 64 --br 64 --bc 64 --mask causal";
  const CliResult r = run_cli(args + " --block-skip on");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("standard on") == std::string::npos);
  CHECK(r.out.find("block skip: V1 on, V2 on, standard does not apply (no tile loop)") != std::string::npos);
  const nlohmann::json on = run_json(args + " --block-skip on --json"), off = run_json(args + " --block-skip off --json");
  CHECK(on.at("algos").at("standard").at("hbm") == off.at("algos").at("standard").at("hbm"));
  CHECK(on.at("algos").at("v1").at("hbm") != off.at("algos").at("v1").at("hbm"));  // where it applies, it acts

  // 512 x 512 tiles, M = 1,000,000: V1's block (720,896 bytes, count_test.cpp) and standard
  // attention's scores block ((512*64*2 + 512*512) * 2 = 655,360 bytes) exceed the H200's 233,472
  // bytes per SM; V2's (196,608) fits.
  const CliResult big = run_cli("compare --model none --sram 1000000 --br 512 --bc 512 --seq 1024 --d 64");
  REQUIRE(big.code == 0);
  CHECK(big.out.find("v1: Grid: 1 thread block; a block does not fit on an SM of h200: its SRAM peak 720,896 B") !=
        std::string::npos);
  CHECK(big.out.find("standard: Grid: 1,028 thread blocks in 3 launches (each below); a block does not fit on an SM of h200: its SRAM peak 655,360 B") !=
        std::string::npos);
  CHECK(big.out.find("v2: Grid:") == std::string::npos);
}

// docs/warps.md's one-tile example through compare: N_q = N_k = 128, d = 64, B_r = B_c = 128,
// W = 4, no mask, so each algorithm with a tile loop visits one full tile of r = c = 128 (r_w =
// c_w = 32). Derived by hand from the per-warp tables of docs/warps.md, summed over the 4 warps:
//   split-K shared memory: written 4 W r (d + 2) = 4*4*128*66 = 135,168 B, read
//     4 W r (W + d + 1) = 4*4*128*69 = 141,312 B, in all 276,480 B (270.00 KiB); barriers 5;
//   extra max: V2 r W (W - 1) = 1,536, V1 r (W - 1)^2 = 1,152; extra add (W - 1) r d = 24,576;
//   split-Q: 0 bytes, 2 barriers, no extra operation; standard attention: none (no tile loop).
TEST_CASE("compare shows the warp split: split-K's shared memory, barriers and extra ops against split-Q") {
  const std::string one_tile =
      "compare --model none --nq 128 --nk 128 --d 64 --br 128 --bc 128 --mask none --warps 4 --json --warp-split ";
  const nlohmann::json k = run_json(one_tile + "split-k");
  for (const char* algo : {"v1", "v2"}) {
    CAPTURE(algo);
    const nlohmann::json& a = k.at("algos").at(algo);
    CHECK(u64_at(a, "warps.smem_write_bytes") == 135'168);
    CHECK(u64_at(a, "warps.smem_read_bytes") == 141'312);
    CHECK(u64_at(a, "warps.smem_bytes") == 276'480);
    CHECK(u64_at(a, "warps.barriers") == 5);
    CHECK(u64_at(a, "warps.extra_ops.add") == 24'576);
  }
  CHECK(u64_at(k.at("algos").at("v2"), "warps.extra_ops.max") == 1'536);
  CHECK(u64_at(k.at("algos").at("v1"), "warps.extra_ops.max") == 1'152);
  CHECK(k.at("algos").at("standard").at("warps").at("smem_bytes").is_null());

  const nlohmann::json q = run_json(one_tile + "split-q");
  for (const char* algo : {"v1", "v2"}) {
    CAPTURE(algo);
    const nlohmann::json& a = q.at("algos").at(algo);
    CHECK(u64_at(a, "warps.smem_bytes") == 0);
    CHECK(u64_at(a, "warps.barriers") == 2);
    CHECK(u64_at(a, "warps.extra_ops_total") == 0);
    CHECK(a.at("hbm") == k.at("algos").at(algo).at("hbm"));  // the split moves no HBM byte
  }

  // the table's rows
  const CliResult t = run_cli("compare --model none --nq 128 --nk 128 --d 64 --br 128 --bc 128 --mask none "
                              "--warps 4 --warp-split split-k");
  INFO(t.err);
  REQUIRE(t.code == 0);
  CHECK(t.out.find("warps: V1 split-k, V2 split-k of 4") != std::string::npos);
  const auto row = [&t](const std::string& label) {
    const std::size_t at = t.out.find("\n" + label + " ");
    return at == std::string::npos ? std::string() : t.out.substr(at + 1, t.out.find('\n', at + 1) - at - 1);
  };
  // columns: standard (no warp split: "-"), V1, V2, standard/V2 ("-"), V1/V2
  const auto words = [](const std::string& line, std::size_t from) {
    std::istringstream in(line.substr(from));
    std::vector<std::string> w;
    for (std::string x; in >> x;) w.push_back(x);
    return w;
  };
  const std::string smem = row("shared memory of warp reductions");
  CHECK(words(smem, std::string("shared memory of warp reductions").size()) ==
        std::vector<std::string>{"-", "270.00", "KiB", "270.00", "KiB", "-", "1.00x"});
  CHECK(words(row("barriers"), 8) == std::vector<std::string>{"-", "5", "5", "-", "1.00x"});
}
